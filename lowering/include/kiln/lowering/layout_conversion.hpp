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

/// How a warp-shuffle conversion moves the elements: in rounds of one
/// shfl.sync.idx each, one round per register of `to`. In round t
///  1. every thread offers its register of `from`
///       send_register[t] ^ (XOR of send_lane_bases[i] for each set bit i of its lane)
///                        ^ (XOR of send_warp_bases[j] for each set bit j of its warp);
///  2. the thread at (lane, warp) reads the offer of the lane
///       read_lane[t] ^ (XOR of lane_bases[i] for each set bit i of lane)
///                    ^ (XOR of warp_bases[j] for each set bit j of warp);
///  3. and its register r of `to` is what it read in the round
///       r ^ (XOR of receive_lane_bases[i] for each set bit i of lane).
/// When the send and receive bases are 0, every lane offers the same register
/// and keeps what it reads in it. Otherwise threads pick among their
/// registers by their lane before and after the shuffle: that is how a
/// register bit and a lane bit trade places (the steps of a sort, a
/// transpose inside a warp), where all readers of one lane would otherwise
/// want different registers of it.
struct ShufflePlan {
  std::vector<int> send_register;
  std::vector<std::int32_t> send_lane_bases;
  std::vector<std::int32_t> send_warp_bases;
  std::vector<std::int32_t> read_lane;
  std::vector<std::int32_t> lane_bases;
  std::vector<std::int32_t> warp_bases;
  std::vector<std::int32_t> receive_lane_bases;

  /// Whether every thread reads its own lane in round t: the round needs no shuffle.
  bool reads_own_lane(int round) const;
  /// The shfl.sync.idx each thread issues: the rounds that read another lane.
  int shuffles() const;
  /// Whether threads pick among their registers before or after the shuffles.
  bool picks_registers() const;
};

/// A thread picks among at most 2^kMaxShuffleSelectBits of its registers on
/// either side of the shuffle (2^k - 1 selects per register); a plan that
/// would pick among more goes through shared memory instead. One bit is one
/// register bit trading places with a lane bit, the most Triton's shuffle
/// conversions take too: with two, the matmul epilogue's bias row (4-way
/// selects, 16 shuffles) took ptxas from 96 to 104 registers on sm_80, one
/// program per multiprocessor fewer.
inline constexpr int kMaxShuffleSelectBits = 1;

/// A shuffle plan for `from` → `to` (checked as by classify_conversion), or
/// none when no holder of some element is in the reading thread's warp or the
/// threads would pick among too many registers. Among the holders
/// from⁻¹ ∘ to and the replicas of `from` (its kernel) it picks, per basis
/// vector, one in the reader's warp, with the register fixed where a replica
/// allows; where readers of one lane in one round would want different
/// registers, it moves the lane bit's elements to another round.
std::optional<ShufflePlan> plan_warp_shuffle(const LinearLayout& from, const LinearLayout& to);

}  // namespace kiln::lowering
