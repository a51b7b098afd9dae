// The record a GPU kernel fills before it stops at a fault (an assert that
// fails, an integer division by zero, a for loop whose step is not
// positive), from which the host reports it. It
// lies in memory both reach: pinned host memory mapped into the GPU on the
// `cuda` device, the running program's own on `emu`. The module's global
// kFaultRecordGlobal holds its address (null: no record, the kernel only
// stops). The fault code claims the record by compare-and-swap of `state`
// from empty to writing, writes `values` and `format`, fences at system
// scope, sets `state` to written, fences again and traps (kTrapAssembly).
// It calls no function: on sm_90a any call makes ptxas serialize every
// wgmma of the kernel (warning C7510), as vprintf and __assertfail did.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::lowering {

/// The module global (`ptr addrspace(1)`, null until the host sets it) that
/// points to the record.
inline constexpr const char* kFaultRecordGlobal = "kiln_fault_record";

/// The inline assembly of the trap after a fault (`call void asm sideeffect
/// "trap;", ""()`).
inline constexpr const char* kTrapAssembly = "trap;";

enum class FaultRecordState : std::uint32_t { empty = 0, writing = 1, written = 2 };

/// The most integers a fault message takes: a for loop's three bounds and
/// the three program ids.
inline constexpr int kFaultValues = 6;

struct FaultRecord {
  /// A FaultRecordState.
  std::uint32_t state = 0;
  /// The integers `format`'s conversions print, in order, each widened to
  /// 64 bits as its type says (signed: sign-extended).
  std::int64_t values[kFaultValues] = {};
  /// The message with %d for each signed value, %u for each unsigned one and
  /// %% for a percent sign; NUL-terminated, cut to fit.
  char format[1024 - 8 - 8 * kFaultValues] = {};
};
static_assert(sizeof(FaultRecord) == 1024 && offsetof(FaultRecord, values) == 8 &&
              offsetof(FaultRecord, format) == 8 + 8 * kFaultValues);

/// The record's message: its format with each %d or %u replaced by the next
/// value, read as signed or unsigned, and each %% by %.
inline std::string fault_message(const FaultRecord& record) {
  std::string message;
  int next = 0;
  for (std::size_t i = 0; i < sizeof record.format && record.format[i] != '\0'; ++i) {
    const char c = record.format[i];
    const char after = i + 1 < sizeof record.format ? record.format[i + 1] : '\0';
    if (c == '%' && after == '%') {
      message += '%';
      ++i;
    } else if (c == '%' && after == 'd' && next < kFaultValues) {
      message += std::to_string(record.values[next++]);
      ++i;
    } else if (c == '%' && after == 'u' && next < kFaultValues) {
      message += std::to_string(static_cast<std::uint64_t>(record.values[next++]));
      ++i;
    } else {
      message += c;
    }
  }
  return message;
}

}  // namespace kiln::lowering
