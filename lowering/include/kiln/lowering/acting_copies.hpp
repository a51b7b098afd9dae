// Which copy of each element of a register layout acts when an op has a side
// effect (an atomic, a print, an assert), and where every other copy finds
// the acting one, derived from the kernel of the layout's linear map.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// A layout over (register, lane, warp) holds an element several times when
/// its kernel is not trivial: x and x ^ k hold the same element for each k
/// in the kernel. One copy of each element acts: the one that is 0 at every
/// pivot of the kernel basis in reduced echelon form, each basis vector's
/// pivot its lowest input bit with registers below lanes below warps. So a
/// register that duplicates another of its thread is skipped at compile
/// time, and only the lane and warp pivots are tested at run time. Since a
/// vector pivoting on a lane bit has no register bits, and one pivoting on a
/// warp bit only warp bits, the acting copy of register r of the thread at
/// (lane, warp) is register source_register[r] of the thread at
///   lane ^ source_lane_offset[r] ^ (XOR of lane_sources[i] for each set bit i of lane)
///   warp ^ source_warp_offset[r] ^ (XOR of lane_warp_sources[i] for each set bit i of lane)
///        ^ (XOR of warp_sources[j] for each set bit j of warp).
struct ActingCopies {
  /// Register, lane and warp bits that are pivots: a copy with any of them set does not act.
  std::int32_t register_pivots = 0;
  std::int32_t lane_pivots = 0;
  std::int32_t warp_pivots = 0;
  /// Per register.
  std::vector<int> source_register;
  std::vector<std::int32_t> source_lane_offset;
  std::vector<std::int32_t> source_warp_offset;
  /// Per lane bit (0 unless a pivot).
  std::vector<std::int32_t> lane_sources;
  std::vector<std::int32_t> lane_warp_sources;
  /// Per warp bit (0 unless a pivot).
  std::vector<std::int32_t> warp_sources;

  /// Whether register `reg` of the thread at (lane, warp) acts.
  bool acts(int reg, std::int32_t lane, std::int32_t warp) const {
    return (reg & register_pivots) == 0 && (lane & lane_pivots) == 0 && (warp & warp_pivots) == 0;
  }
  /// Whether some acting copy is in another lane (another warp) than a copy it serves.
  bool crosses_lanes() const;
  bool crosses_warps() const;
};

/// The acting copies of `layout`'s elements; its input dimensions are named
/// register, lane and warp (a missing one has size 1).
ActingCopies acting_copies(const LinearLayout& layout);

}  // namespace kiln::lowering
