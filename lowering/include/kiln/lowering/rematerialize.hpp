// Index arithmetic computed again rather than converted. A use that needs a
// tile in another layout than the one it lives in gets a converted copy
// (layout_conversion.hpp); when the tile is index arithmetic (offsets,
// pointers and masks made from aranges), code generation computes it again
// in the needed layout instead, as Triton's layout-conversion removal
// rematerializes cheap producers: a few integer instructions per register,
// where a conversion between warps goes through shared memory with two
// barriers. One arange shared by tiles of different layouts (attention's key
// and head-dimension offsets at 64 x 64, matmul's row offsets of the a tile
// and of the store) then costs each of them its own arithmetic, not a
// conversion.
#pragma once

#include "kiln/ir/ir.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/layout_conversion.hpp"

namespace kiln::lowering {

/// The most ops the computation of a rematerialized tile may take.
inline constexpr int kMaxRematerializedOps = 16;

/// Whether `value` is a tile that code generation can compute again in any
/// layout: integers, booleans or pointers made from aranges, constants and
/// splats through expand_dims, broadcast, addptr and the element-wise and
/// cast ops other than div and rem (whose checks report faults), in at most
/// kMaxRematerializedOps ops.
bool is_rematerializable(const ir::Value& value);

/// How code generation makes the converted copy a use needs: none or a
/// register permutation when classify_conversion says so and a plan exists,
/// else rematerialize for a rematerializable value, else a warp shuffle when
/// plan_warp_shuffle finds a plan, else shared memory.
ConversionKind planned_conversion_kind(const LayoutConversion& conversion);

}  // namespace kiln::lowering
