// The generic passes on max_contiguous and multiple_of's group: canonicalize
// drops only the hint that promises nothing, and loop-invariant motion leaves
// a hint in the loop it may fault in.
#include <gtest/gtest.h>

#include <string>

#include "kiln/ir/parser.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"
#include "pass_test_support.hpp"

namespace kiln::ir {
namespace {

using test::after;

TEST(Canonicalize, MaxContiguousOfOneIsItsOperandOthersStay) {
  EXPECT_EQ(after(canonicalize, R"(kernel @k(%0: ptr<i32>, %1: tile<8xi32>) {
  %2 = max_contiguous %1 {value = 1} : tile<8xi32>
  %3 = max_contiguous %1 {value = 4} : tile<8xi32>
  %4 = multiple_of %3 {value = 4, group = 4} : tile<8xi32>
  %5 = add %2, %4 : tile<8xi32>
  %6 = splat %0 : tile<8xptr<i32>>
  %7 = addptr %6, %5 : tile<8xptr<i32>>
  store %7, %5 {cache = none, evict = none}
}
)"),
            R"(kernel @k(%0: ptr<i32>, %1: tile<8xi32>) {
  %2 = max_contiguous %1 {value = 4} : tile<8xi32>
  %3 = multiple_of %2 {value = 4, group = 4} : tile<8xi32>
  %4 = add %1, %3 : tile<8xi32>
  %5 = splat %0 : tile<8xptr<i32>>
  %6 = addptr %5, %4 : tile<8xptr<i32>>
  store %6, %4 {cache = none, evict = none}
}
)");
}

TEST(LoopInvariants, LeavesMaxContiguousInTheLoopItMayFaultIn) {
  const std::string text = R"(kernel @k(%0: tile<8xptr<i32>>, %1: tile<8xi32>, %2: i32) {
  %3 = for %2, %2, %2, %1 : tile<8xi32> {
  ^(%4: i32, %5: tile<8xi32>):
    %6 = max_contiguous %1 {value = 8} : tile<8xi32>
    %7 = add %5, %6 : tile<8xi32>
    yield %7
  }
  store %0, %3 {cache = none, evict = none}
}
)";
  EXPECT_EQ(after(hoist_loop_invariants, text, false), text);
}

TEST(LoopInvariants, LeavesHintsInTheLoopTheyMayFaultIn) {
  const std::string text = R"(kernel @k(%0: ptr<i32>, %1: i32, %2: i32) {
  %3 = for %2, %1, %2, %2 : i32 {
  ^(%4: i32, %5: i32):
    %6 = multiple_of %1 {value = 8} : i32
    %7 = add %5, %6 : i32
    yield %7
  }
  store %0, %3 {cache = none, evict = none}
}
)";
  EXPECT_EQ(after(hoist_loop_invariants, text, false), text);
}

}  // namespace
}  // namespace kiln::ir
