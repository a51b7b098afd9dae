// Bounds checks for memory ops: every accessed element must lie inside the
// memory of the pointer argument it derives from, or for a pointer of mixed
// provenance (loaded from memory, cast from an integer, a select of two)
// inside some pointer argument or live allocation of the device.
#pragma once

#include <cstdint>
#include <string>

#include "program.hpp"

namespace kiln::runtime::interp {

/// What a checked access touches: the active elements (mask null, or its
/// element non-zero; `mask_step` 0 reads one mask for all), the first and
/// last of them, and whether all addresses form one run of consecutive
/// elements (then [first, last] may be accessed as one block).
struct Access {
  std::int64_t active = 0;
  std::int64_t first = 0;
  std::int64_t last = -1;
  bool contiguous = false;
};

/// Checks the active elements of `addresses`, each `dtype_bytes(ins.dtype)`
/// wide, against the range of `ins.source` (or of any pointer argument when
/// the source is mixed, then of any live allocation). Throws KernelError naming the first offending one.
Access check_access(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
                    std::int64_t mask_step, std::int64_t n);

/// The pointer argument whose range holds [address, address + bytes), or -1.
int argument_holding(const Exec& ex, std::uint64_t address, std::uint64_t bytes);

/// "element 1018 of 'x'" for the pointer argument holding `address`, whose
/// elements are of `dtype`, "element 3 of the buffer at 0x…" for a live
/// allocation that is no argument, or "address 0x… (in no live buffer)".
std::string describe_address(const Exec& ex, std::uint64_t address, ir::DType dtype);

}  // namespace kiln::runtime::interp
