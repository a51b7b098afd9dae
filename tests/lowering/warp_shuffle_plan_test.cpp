// Warp-shuffle plans for conversions inside a warp, checked by running them
// thread by thread: lanes trading places with registers (a sort's and a
// transpose's steps), random permutations of a warp's elements, random
// layouts that hold elements several times on either side, replicated
// sources, and the bound on how many registers a thread picks among.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/layout_conversion.hpp"
#include "lowering/shuffle_plan_simulation.hpp"

namespace kiln::lowering {
namespace {

using testing::expect_plan_delivers;

/// A layout of one output dimension of 2^(registers + 5 + warps) elements:
/// register and lane bit k go to the output bit `order[k]`, warp bits above.
LinearLayout flat_layout(int registers, int warps, const std::vector<int>& order) {
  std::vector<LinearLayout::Basis> register_bases, lane_bases, warp_bases;
  for (int k = 0; k < registers; ++k) register_bases.push_back({std::int32_t{1} << order[static_cast<std::size_t>(k)]});
  for (int k = 0; k < 5; ++k) lane_bases.push_back({std::int32_t{1} << order[static_cast<std::size_t>(registers + k)]});
  for (int k = 0; k < warps; ++k) warp_bases.push_back({std::int32_t{1} << (registers + 5 + k)});
  return LinearLayout({{"register", register_bases}, {"lane", lane_bases}, {"warp", warp_bases}},
                      {{"dim0", registers + 5 + warps}});
}

std::vector<int> identity_order(int bits) {
  std::vector<int> order(static_cast<std::size_t>(bits));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

TEST(WarpShufflePlan, ARegisterBitTradingPlacesWithALaneBitTakesHalfTheRegistersInShuffles) {
  // Every pair (register bit, lane bit) of a layout with 1 to 3 register
  // bits, in 1 and 4 warps: the thread keeps half its elements and trades
  // the other half with one partner lane.
  int planned = 0;
  for (int registers = 1; registers <= 3; ++registers)
    for (int warps : {0, 2})
      for (int r = 0; r < registers; ++r)
        for (int l = 0; l < 5; ++l) {
          std::vector<int> swapped = identity_order(registers + 5);
          std::swap(swapped[static_cast<std::size_t>(r)], swapped[static_cast<std::size_t>(registers + l)]);
          const LinearLayout from = flat_layout(registers, warps, identity_order(registers + 5));
          const LinearLayout to = flat_layout(registers, warps, swapped);
          const std::string what = std::to_string(registers) + " register bits, register bit " + std::to_string(r) +
                                   " for lane bit " + std::to_string(l);
          ASSERT_EQ(classify_conversion(from, to), ConversionKind::warp_shuffle) << what;
          const auto plan = plan_warp_shuffle(from, to);
          ASSERT_TRUE(plan.has_value()) << what;
          expect_plan_delivers(from, to, *plan, what);
          EXPECT_EQ(plan->shuffles(), 1 << (registers - 1)) << what;
          ++planned;
        }
  EXPECT_EQ(planned, 60);
}

TEST(WarpShufflePlan, PlansOfRandomPermutationsInsideAWarpDeliverEveryElement) {
  // Random bijections of a warp's 2^(registers + 5) elements onto each other;
  // a plan is refused only when threads would pick among too many registers.
  std::mt19937 random(20261206);
  int planned = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int registers = 1 + trial % 3;
    std::vector<int> from_order = identity_order(registers + 5), to_order = from_order;
    std::shuffle(from_order.begin(), from_order.end(), random);
    std::shuffle(to_order.begin(), to_order.end(), random);
    const LinearLayout from = flat_layout(registers, 1, from_order);
    const LinearLayout to = flat_layout(registers, 1, to_order);
    const ConversionKind kind = classify_conversion(from, to);
    if (kind != ConversionKind::warp_shuffle) continue;
    const auto plan = plan_warp_shuffle(from, to);
    if (!plan) {
      ++refused;
      continue;
    }
    ++planned;
    expect_plan_delivers(from, to, *plan, "trial " + std::to_string(trial));
    for (const std::vector<std::int32_t>* bases : {&plan->send_lane_bases, &plan->receive_lane_bases}) {
      std::int32_t selectable = 0;
      for (std::int32_t basis : *bases) selectable |= basis;
      EXPECT_LE(std::popcount(static_cast<std::uint32_t>(selectable)), kMaxShuffleSelectBits) << "trial " << trial;
    }
  }
  EXPECT_GE(planned, 150);
  EXPECT_GT(refused, 0);
}

/// A layout over `registers` register bits, 5 lane bits and 1 warp bit onto
/// dim0 of 2^`out_bits` elements (fewer than the inputs when some are
/// replicas): each output bit from one random input bit, the other inputs
/// random combinations of output bits or 0; the warp bit is a replica.
LinearLayout random_replicated_layout(std::mt19937& random, int registers, int out_bits) {
  const int inputs = registers + 5;
  std::vector<int> order(static_cast<std::size_t>(inputs));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), random);
  std::vector<std::int32_t> bases(static_cast<std::size_t>(inputs), 0);
  for (int bit = 0; bit < out_bits; ++bit)
    bases[static_cast<std::size_t>(order[static_cast<std::size_t>(bit)])] = 1 << bit;
  for (int k = out_bits; k < inputs; ++k)
    if (random() % 2)
      bases[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] =
          static_cast<std::int32_t>(random() % (1u << out_bits));
  std::vector<LinearLayout::Basis> register_bases, lane_bases;
  for (int k = 0; k < registers; ++k) register_bases.push_back({bases[static_cast<std::size_t>(k)]});
  for (int k = 0; k < 5; ++k) lane_bases.push_back({bases[static_cast<std::size_t>(registers + k)]});
  return LinearLayout({{"register", register_bases}, {"lane", lane_bases}, {"warp", {{0}}}}, {{"dim0", out_bits}});
}

TEST(WarpShufflePlan, PlansBetweenReplicatedLayoutsDeliverEveryElement) {
  // Both sides hold some elements several times (zero or dependent bases),
  // which gives the planner replicas to choose among.
  std::mt19937 random(7);
  int planned = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int out_bits = 3 + trial % 4;
    const LinearLayout from = random_replicated_layout(random, 1 + trial % 3, out_bits);
    const LinearLayout to = random_replicated_layout(random, 1 + (trial / 3) % 3, out_bits);
    if (classify_conversion(from, to) != ConversionKind::warp_shuffle) continue;
    const auto plan = plan_warp_shuffle(from, to);
    if (!plan) continue;
    ++planned;
    expect_plan_delivers(from, to, *plan, "replicated trial " + std::to_string(trial));
  }
  EXPECT_GE(planned, 100);
}

TEST(WarpShufflePlan, AReplicatedSourceIsReadFromTheCopyThatNeedsNoPick) {
  // 32 elements held twice per warp (lane bit 4 is a replica) and in two
  // registers of no lane in particular: any copy serves, and the plan takes
  // the one that keeps the register fixed where it can.
  const LinearLayout from({{"register", {{1}}}, {"lane", {{2}, {4}, {8}, {16}, {0}}}, {"warp", {{0}}}}, {{"dim0", 5}});
  const LinearLayout to = blocked_layout({32}, {1}, {32}, {2}, {0});
  ASSERT_EQ(classify_conversion(from, to), ConversionKind::warp_shuffle);
  const auto plan = plan_warp_shuffle(from, to);
  ASSERT_TRUE(plan.has_value());
  expect_plan_delivers(from, to, *plan, "replicated source");
}

TEST(WarpShufflePlan, ABlockedTransposeInsideAWarpNeedsNoSharedMemory) {
  // An 8x8 tile of one warp, two elements per thread along dim1 and then
  // along dim0: register bit 0 trades places with a lane bit.
  const LinearLayout rows = blocked_layout({8, 8}, {1, 2}, {8, 4}, {1, 1}, {1, 0});
  const LinearLayout columns = blocked_layout({8, 8}, {2, 1}, {4, 8}, {1, 1}, {0, 1});
  ASSERT_EQ(classify_conversion(rows, columns), ConversionKind::warp_shuffle);
  for (const auto& [from, to] : {std::pair{rows, columns}, std::pair{columns, rows}}) {
    const auto plan = plan_warp_shuffle(from, to);
    ASSERT_TRUE(plan.has_value());
    expect_plan_delivers(from, to, *plan, "8x8 transpose");
  }
}

}  // namespace
}  // namespace kiln::lowering
