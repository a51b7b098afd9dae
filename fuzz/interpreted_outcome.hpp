// The fuzz launch of a kernel on the CPU interpreter (a fixed grid, one host
// thread, fixed scalar arguments, buffers filled the same way every run) and
// what a run leaves behind: the error, if any, its printed lines and every
// buffer's bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/ir.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::fuzz {

inline constexpr runtime::Grid kGrid = {2, 2, 1};
/// Elements of each pointer argument's buffer.
inline constexpr std::size_t kBufferElements = 4096;
/// Buffers are aligned to this; a kernel claiming a pointer divisibility
/// above it is not launched.
inline constexpr std::int64_t kBufferAlignment = 4096;

/// One buffer per pointer argument, and the bits of every scalar argument:
/// integers 48, 64 or 80 by argument index (rounded down to the argument's
/// divisibility, 1 for `equal_to = 1` and for i1), floats 1.5 + index / 4.
class LaunchMemory {
 public:
  explicit LaunchMemory(const ir::Function& fn);
  ~LaunchMemory();
  LaunchMemory(const LaunchMemory&) = delete;
  LaunchMemory& operator=(const LaunchMemory&) = delete;

  /// Fills every buffer with its initial contents: integers in [-8, 56)
  /// ([0, 64) unsigned), floats in [-8, 8) with -0, ±inf and NaN among them.
  void reset();
  const std::vector<runtime::KernelArgument>& arguments() const { return arguments_; }
  /// The buffers' current bytes, in argument order.
  std::vector<std::vector<std::byte>> contents() const;

 private:
  struct Buffer {
    std::byte* data;
    std::size_t bytes;
    ir::DType dtype;
    std::size_t argument;
  };
  std::vector<Buffer> buffers_;
  std::vector<runtime::KernelArgument> arguments_;
};

/// Whether the fuzz launch can give `fn` what its arguments claim: pointer
/// divisibility at most kBufferAlignment. (A tile argument gets the bits 0,
/// for the interpreter to accept or reject.)
bool launchable(const ir::Function& fn);

struct Outcome {
  /// "" after a clean launch, else "fault: <KernelError>" or
  /// "unsupported: <the interpreter's std::invalid_argument>".
  std::string error;
  std::string printed;  // what the kernel's `print` ops wrote
  std::vector<std::vector<std::byte>> buffers;
};

/// Resets `memory`, launches `fn` over kGrid on one host thread and returns
/// what it left. Fails (a finding) on an error message over several lines.
Outcome run(const ir::Function& fn, LaunchMemory& memory);

/// "" when both runs left the same bytes, else where they first differ. A
/// float element compares equal when the bits agree or both are NaN (the IR
/// leaves NaN payloads open), or, for a float of 16 bits or more, when both
/// are finite and at most `ulps` apart (fp8 by its bits).
std::string first_difference(const ir::Function& fn, const Outcome& a, const Outcome& b, std::uint64_t ulps = 0);

}  // namespace kiln::fuzz
