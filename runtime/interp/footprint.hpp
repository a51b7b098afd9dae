// The interpreter's side of footprint counting: the active elements of a
// checked memory access marked in the launch's bitmaps.
#pragma once

#include <cstdint>

#include "bounds.hpp"

namespace kiln::runtime::interp {

/// What an access does to the bytes it touches.
enum class Touch { read, write, read_write };

/// Marks the active elements of `addresses` (already bounds-checked as
/// `access`), each `dtype_bytes(ins.dtype)` wide, in `ex.footprints`, which
/// must be set.
void count_footprint(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
                     std::int64_t mask_step, std::int64_t n, const Access& access, Touch touch);

}  // namespace kiln::runtime::interp
