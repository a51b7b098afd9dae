// A static bound on the interpreter's work for a kernel under the fuzz
// launch, so that the differential target only runs kernels that finish
// quickly: no `while` (its trip count is unknowable), every `for` bounded by
// values known before the launch.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "kiln/ir/ir.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::fuzz {

/// Elements of the largest tile the fuzz launch runs.
inline constexpr std::int64_t kMaxElements = 4096;
/// Element operations of a whole launch (every program) the fuzz launch runs.
inline constexpr std::int64_t kMaxWork = std::int64_t{1} << 18;

/// An upper bound on the element operations of launching `fn` over `grid`
/// with `args`, or nullopt when it exceeds kMaxWork or cannot be bounded: a
/// `while`, a tile over kMaxElements, or a `for` whose lo, hi and
/// step are not built from constants, integer scalar arguments, grid queries
/// and enclosing induction variables by add, sub, mul and division by a
/// positive constant.
std::optional<std::int64_t> interpretation_work(const ir::Function& fn, runtime::Grid grid,
                                                std::span<const runtime::KernelArgument> args);

}  // namespace kiln::fuzz
