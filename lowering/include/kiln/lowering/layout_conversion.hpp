// What converting a distributed tile from one register layout to another
// costs, derived generically from the two linear layouts.
#pragma once

#include <string_view>

#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// The cheapest mechanism that moves every element to where the target
/// layout wants it, from cheapest to dearest.
enum class ConversionKind {
  none,              ///< the layouts are the same map: nothing to emit
  register_permute,  ///< every thread already holds its elements: rename registers
  warp_shuffle,      ///< elements move between lanes of one warp: shfl.sync
  shared_memory,     ///< elements move between warps: through shared memory
};

std::string_view to_string(ConversionKind kind);

/// Classifies the conversion `from` → `to` of layouts over (register, lane,
/// warp) with the same output dimensions and the same lane and warp sizes.
/// A thread at x in `to` needs the element to(x); from⁻¹ ∘ to says where
/// `from` holds it. Since `from` may hold an element several times (its
/// kernel), the conversion stays inside a thread (a warp) iff for every x some
/// holder has x's lane and warp (x's warp); by linearity it suffices to check
/// the basis of `to`'s inputs. Throws std::invalid_argument when the
/// dimensions differ or `from` lacks some element of `to`.
ConversionKind classify_conversion(const LinearLayout& from, const LinearLayout& to);

}  // namespace kiln::lowering
