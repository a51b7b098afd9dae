// Layout conversions classified from the two linear layouts: nothing, a
// register permutation, warp shuffles or shared memory, on known cases.
#include "kiln/lowering/layout_conversion.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "kiln/lowering/blocked_layout.hpp"

namespace kiln::lowering {
namespace {

TEST(LayoutConversion, IdenticalLayoutsNeedNothing) {
  const LinearLayout a = blocked_layout({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  EXPECT_EQ(classify_conversion(a, a), ConversionKind::none);
  // The same map with its dimensions listed in another order.
  const LinearLayout b = a.transpose_outs({"dim1", "dim0"}).transpose_ins({"warp", "register", "lane"});
  EXPECT_EQ(classify_conversion(a, b), ConversionKind::none);
}

TEST(LayoutConversion, SameElementsPerThreadInAnotherRegisterOrderIsAPermutation) {
  const LinearLayout from({{"register", {{1}, {2}}}, {"lane", {{4}, {8}}}, {"warp", {{16}}}}, {{"dim0", 5}});
  const LinearLayout to({{"register", {{2}, {1}}}, {"lane", {{4}, {8}}}, {"warp", {{16}}}}, {{"dim0", 5}});
  EXPECT_EQ(classify_conversion(from, to), ConversionKind::register_permute);
}

TEST(LayoutConversion, ElementsMovingBetweenLanesOfOneWarpAreShuffled) {
  // One warp: element e sits in lane e % 32 (register e / 32), then in lane e / 4.
  const LinearLayout strided = blocked_layout({128}, {1}, {32}, {1}, {0});
  const LinearLayout vectorised = blocked_layout({128}, {4}, {32}, {1}, {0});
  EXPECT_EQ(classify_conversion(strided, vectorised), ConversionKind::warp_shuffle);
  EXPECT_EQ(classify_conversion(vectorised, strided), ConversionKind::warp_shuffle);
}

TEST(LayoutConversion, ElementsMovingBetweenWarpsGoThroughSharedMemory) {
  const LinearLayout strided = blocked_layout({128}, {1}, {32}, {4}, {0});
  const LinearLayout vectorised = blocked_layout({128}, {4}, {32}, {4}, {0});
  EXPECT_EQ(classify_conversion(strided, vectorised), ConversionKind::shared_memory);
  const LinearLayout rows = blocked_layout({64, 64}, {1, 4}, {2, 16}, {4, 1}, {1, 0});
  const LinearLayout columns = blocked_layout({64, 64}, {4, 1}, {16, 2}, {1, 4}, {0, 1});
  EXPECT_EQ(classify_conversion(rows, columns), ConversionKind::shared_memory);
}

TEST(LayoutConversion, ACopyInTheRightWarpAvoidsSharedMemory) {
  // Every warp holds all 32 elements (lane l has element l); the target wants
  // lane l of warp w to hold l ^ 8w. The element is in the thread's own warp.
  const LinearLayout replicated = blocked_layout({32}, {1}, {32}, {4}, {0});
  const LinearLayout rotated({{"register", {}}, {"lane", {{1}, {2}, {4}, {8}, {16}}}, {"warp", {{8}, {16}}}},
                             {{"dim0", 5}});
  EXPECT_EQ(classify_conversion(replicated, rotated), ConversionKind::warp_shuffle);
  // The other way round: every warp of `rotated` holds all 32 elements too,
  // only in other lanes.
  EXPECT_EQ(classify_conversion(rotated, replicated), ConversionKind::warp_shuffle);
}

TEST(LayoutConversion, ReducedRowsBroadcastToEveryLaneOfTheRowAreRegisterLocal) {
  // A reduction along dim1 leaves each row's result in the lanes of that row;
  // expanding it back to the parent's shape keeps every element in place.
  const LinearLayout parent = blocked_layout({16, 32}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  const LinearLayout reduced = slice_layout(parent, 1);
  const LinearLayout parent_rows = blocked_layout({16, 1}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  const LinearLayout expanded = reduced.reshape_outs({{"dim0", 16}, {"dim1", 1}});
  EXPECT_EQ(classify_conversion(expanded, parent_rows), ConversionKind::register_permute);
}

TEST(LayoutConversion, MismatchedLayoutsAreRejected) {
  auto expect_invalid = [](const LinearLayout& a, const LinearLayout& b, const std::string& part) {
    try {
      (void)classify_conversion(a, b);
      ADD_FAILURE() << "no exception; expected '" << part << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const LinearLayout four_warps = blocked_layout({128}, {1}, {32}, {4}, {0});
  expect_invalid(four_warps, blocked_layout({128}, {1}, {32}, {2}, {0}),
                 "'warp' has size 4 in the source and 2 in the target");
  expect_invalid(four_warps, blocked_layout({256}, {1}, {32}, {4}, {0}), "'dim0' has size 128 in the source and 256");
  expect_invalid(four_warps, LinearLayout::identity_1d(128, "offset", "dim0"),
                 "inputs must be register, lane and warp; got [offset]");
  EXPECT_EQ(to_string(ConversionKind::warp_shuffle), "warp_shuffle");
}

}  // namespace
}  // namespace kiln::lowering
