// What converting a distributed tile from one register layout to another
// costs, and where each thread reads its registers when the conversion stays
// within threads or warps, derived generically from the two linear layouts.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// The cheapest mechanism that moves every element to where the target
/// layout wants it, from cheapest to dearest.
enum class ConversionKind {
  none,              ///< the layouts are the same map: nothing to emit
  register_permute,  ///< every thread already holds its elements: rename registers
  rematerialize,     ///< index arithmetic computed again in the target layout (rematerialize.hpp)
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
/// dimensions differ or `from` lacks some element of `to`. It never says
/// rematerialize, which depends on how the value is computed.
ConversionKind classify_conversion(const LinearLayout& from, const LinearLayout& to);

/// Where each thread finds its registers of `to` among its own registers of
/// `from` in a register_permute conversion: register r of `to` at (lane,
/// warp) is register
///   source_register[r] ^ (XOR of lane_bases[i] for each set bit i of lane)
///                      ^ (XOR of warp_bases[j] for each set bit j of warp)
/// of `from` in the same thread. All bases are 0 when the registers are only
/// renamed; otherwise the thread picks among its registers.
struct RegisterPlan {
  std::vector<int> source_register;
  std::vector<std::int32_t> lane_bases;
  std::vector<std::int32_t> warp_bases;
};

/// A register plan for `from` → `to`, or none when some element is not held
/// by the thread that needs it (classify_conversion is not `none` or
/// `register_permute`).
std::optional<RegisterPlan> plan_register_permute(const LinearLayout& from, const LinearLayout& to);

/// Where each thread reads its registers of `to` in a warp-shuffle
/// conversion: register r of the thread at (lane, warp) of `to` is register
/// source_register[r] of `from` in the same warp, at lane
///   register_lane[r] ^ (XOR of lane_bases[i] for each set bit i of lane)
///                    ^ (XOR of warp_bases[j] for each set bit j of warp).
/// The source register depends on r only, so every lane offers the same
/// register to one shfl.sync.idx per destination register.
struct ShufflePlan {
  std::vector<int> source_register;
  std::vector<std::int32_t> register_lane;
  std::vector<std::int32_t> lane_bases;
  std::vector<std::int32_t> warp_bases;
};

/// A shuffle plan for `from` → `to` (checked as by classify_conversion), or
/// none when no holder of some element is in the reading thread's warp or
/// the source register would depend on the lane or warp. Among the holders
/// from⁻¹ ∘ to and the replicas of `from` (its kernel) it picks, per basis
/// vector, one that keeps the warp and a register fixed per r.
std::optional<ShufflePlan> plan_warp_shuffle(const LinearLayout& from, const LinearLayout& to);

}  // namespace kiln::lowering
