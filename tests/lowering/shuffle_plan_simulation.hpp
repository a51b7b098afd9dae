// Runs a warp-shuffle plan the way the generated code does, thread by
// thread, so tests can check that every thread ends up with the element the
// target layout gives it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/lowering/layout_conversion.hpp"
#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering::testing {

inline std::int32_t xor_of_set_bits(std::int32_t start, const std::vector<std::int32_t>& bases, int index) {
  for (std::size_t bit = 0; bit < bases.size(); ++bit)
    if (index >> bit & 1) start ^= bases[bit];
  return start;
}

/// Checks that after `plan` every register of every thread of `to` holds the
/// element `to` puts there, reading the offers of `from` as the three steps
/// of ShufflePlan describe; `what` names the case in failures.
inline void expect_plan_delivers(const LinearLayout& from, const LinearLayout& to, const ShufflePlan& plan,
                                 const std::string& what) {
  const int rounds = to.in_dim_size("register");
  ASSERT_EQ(plan.send_register.size(), static_cast<std::size_t>(rounds)) << what;
  ASSERT_EQ(plan.read_lane.size(), static_cast<std::size_t>(rounds)) << what;
  for (int warp = 0; warp < to.in_dim_size("warp"); ++warp)
    for (int lane = 0; lane < to.in_dim_size("lane"); ++lane)
      for (int reg = 0; reg < rounds; ++reg) {
        const std::int32_t round = xor_of_set_bits(reg, plan.receive_lane_bases, lane);
        ASSERT_LT(round, rounds) << what;
        const std::int32_t sender =
            xor_of_set_bits(xor_of_set_bits(plan.read_lane[static_cast<std::size_t>(round)], plan.lane_bases, lane),
                            plan.warp_bases, warp);
        ASSERT_LT(sender, to.in_dim_size("lane")) << what;
        const std::int32_t offered = xor_of_set_bits(
            xor_of_set_bits(plan.send_register[static_cast<std::size_t>(round)], plan.send_lane_bases, sender),
            plan.send_warp_bases, warp);
        ASSERT_LT(offered, from.in_dim_size("register")) << what;
        ASSERT_EQ(from.apply({{"register", offered}, {"lane", sender}, {"warp", warp}}),
                  to.apply({{"register", reg}, {"lane", lane}, {"warp", warp}}))
            << what << ": register " << reg << " of lane " << lane << " in warp " << warp << " (round " << round
            << ", from lane " << sender << " register " << offered << ")";
      }
}

}  // namespace kiln::lowering::testing
