// acting_copies over every thread of many layouts: each element has exactly
// one acting copy, and the place the formula names for each copy's acting
// copy acts and holds the same element.
#include "kiln/lowering/acting_copies.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/lowering/blocked_layout.hpp"

namespace kiln::lowering {
namespace {

std::int32_t xor_of_set_bits(const std::vector<std::int32_t>& bases, std::int32_t index) {
  std::int32_t result = 0;
  for (std::size_t bit = 0; bit < bases.size(); ++bit)
    if ((index >> bit & 1) != 0) result ^= bases[bit];
  return result;
}

LinearLayout::Coordinates element_of(const LinearLayout& layout, int reg, int lane, int warp) {
  return layout.apply({{"register", reg}, {"lane", lane}, {"warp", warp}});
}

/// Checks every copy of every element of `layout` against `acting_copies`.
void expect_one_acting_copy_per_element(const LinearLayout& layout, const std::string& name) {
  SCOPED_TRACE(name + ":\n" + to_string(layout));
  const ActingCopies copies = acting_copies(layout);
  std::map<LinearLayout::Coordinates, int> acting;
  for (int reg = 0; reg < layout.in_dim_size("register"); ++reg)
    for (int lane = 0; lane < layout.in_dim_size("lane"); ++lane)
      for (int warp = 0; warp < layout.in_dim_size("warp"); ++warp) {
        const LinearLayout::Coordinates element = element_of(layout, reg, lane, warp);
        acting[element] += copies.acts(reg, lane, warp) ? 1 : 0;
        const int source_register = copies.source_register[static_cast<std::size_t>(reg)];
        const std::int32_t source_lane = lane ^ copies.source_lane_offset[static_cast<std::size_t>(reg)] ^
                                         xor_of_set_bits(copies.lane_sources, lane);
        const std::int32_t source_warp = warp ^ copies.source_warp_offset[static_cast<std::size_t>(reg)] ^
                                         xor_of_set_bits(copies.lane_warp_sources, lane) ^
                                         xor_of_set_bits(copies.warp_sources, warp);
        ASSERT_TRUE(copies.acts(source_register, source_lane, source_warp))
            << "register " << reg << " lane " << lane << " warp " << warp << " points to a copy that does not act";
        ASSERT_EQ(element_of(layout, source_register, source_lane, source_warp), element)
            << "register " << reg << " lane " << lane << " warp " << warp;
        if (!copies.crosses_warps()) {
          ASSERT_EQ(source_warp, warp);
        }
        if (!copies.crosses_lanes()) {
          ASSERT_EQ(source_lane, lane);
        }
      }
  for (const auto& [element, count] : acting) EXPECT_EQ(count, 1);
}

TEST(ActingCopies, BlockedLayoutsWithoutDuplicatesAllAct) {
  const LinearLayout layout = blocked_layout({1024}, {4}, {32}, {4}, {0});
  const ActingCopies copies = acting_copies(layout);
  EXPECT_EQ(copies.register_pivots | copies.lane_pivots | copies.warp_pivots, 0);
  EXPECT_FALSE(copies.crosses_lanes());
  EXPECT_FALSE(copies.crosses_warps());
  expect_one_acting_copy_per_element(layout, "1024 over 4 warps");
}

TEST(ActingCopies, SmallTileReplicatedOverWarps) {
  const LinearLayout layout = blocked_layout({64}, {1}, {32}, {4}, {0});
  const ActingCopies copies = acting_copies(layout);
  EXPECT_EQ(copies.warp_pivots, 2);
  EXPECT_EQ(copies.lane_pivots, 0);
  EXPECT_TRUE(copies.crosses_warps());
  expect_one_acting_copy_per_element(layout, "64 over 4 warps");
}

TEST(ActingCopies, SmallTileReplicatedOverLanesAndRegisters) {
  const LinearLayout layout = blocked_layout({16, 2}, {1, 4}, {2, 16}, {4, 1}, {1, 0});
  const ActingCopies copies = acting_copies(layout);
  EXPECT_EQ(copies.register_pivots, 2) << "register bit 1 wraps the 2 columns";
  EXPECT_EQ(copies.lane_pivots, 15) << "lane bits 0-3 wrap the columns";
  EXPECT_TRUE(copies.crosses_lanes());
  EXPECT_FALSE(copies.crosses_warps());
  expect_one_acting_copy_per_element(layout, "16x2 in a 1x4 / 2x16 / 4x1 layout");
}

TEST(ActingCopies, SlicesOfBlockedLayouts) {
  const LinearLayout parent = blocked_layout({64, 64}, {1, 4}, {2, 16}, {4, 1}, {1, 0});
  expect_one_acting_copy_per_element(slice_layout(parent, 0), "columns of 64x64");
  expect_one_acting_copy_per_element(slice_layout(parent, 1), "rows of 64x64");
  const LinearLayout wide = blocked_layout({4, 1024}, {1, 4}, {1, 32}, {1, 4}, {1, 0});
  expect_one_acting_copy_per_element(slice_layout(wide, 1), "rows of 4x1024");
}

TEST(ActingCopies, ScalarHeldByEveryThread) {
  const LinearLayout scalar({{"register", {}}, {"lane", {{0}, {0}, {0}, {0}, {0}}}, {"warp", {{0}, {0}, {0}}}},
                            {{"dim0", 0}});
  const ActingCopies copies = acting_copies(scalar);
  EXPECT_EQ(copies.lane_pivots, 31);
  EXPECT_EQ(copies.warp_pivots, 7);
  expect_one_acting_copy_per_element(scalar, "scalar over 8 warps");
}

TEST(ActingCopies, KernelVectorsMixingRegistersLanesAndWarps) {
  // Register bit 0 and lane bit 0 both step dim0 by 1: register 1 of lane 0
  // holds what register 0 of lane 1 holds. Lane bit 1 and warp bit 0 both
  // step dim0 by 2, so lane 2 of warp 0 holds what lane 0 of warp 1 holds.
  const LinearLayout layout({{"register", {{1}, {4}}}, {"lane", {{1}, {2}, {8}}}, {"warp", {{2}, {16}}}},
                            {{"dim0", 5}});
  const ActingCopies copies = acting_copies(layout);
  EXPECT_EQ(copies.register_pivots, 1);
  EXPECT_EQ(copies.lane_pivots, 2);
  EXPECT_EQ(copies.source_lane_offset[1], 1) << "register 1 acts in the neighbouring lane's register 0";
  EXPECT_TRUE(copies.crosses_lanes());
  EXPECT_TRUE(copies.crosses_warps());
  expect_one_acting_copy_per_element(layout, "mixed kernel");
}

}  // namespace
}  // namespace kiln::lowering
