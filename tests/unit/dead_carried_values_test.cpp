// DCE of a `for` loop's carried values that nothing reads but their own
// update (what the pipeliner leaves behind of the pointers it carries ahead):
// such a value, its loop result and the ops computing its update go (also
// through nested regions, and in chains of such values); a value read by a
// store, by another live value's update or after the loop stays.
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

/// DCE on the kernel (test::after).
std::string after_dce(const std::string& text, bool changed = true) {
  return after(eliminate_dead_code, text, changed);
}

TEST(DeadCarriedValues, APointerAdvancedOnlyForItselfGoes) {
  EXPECT_EQ(after_dce(R"(kernel @k(%0: ptr<f32>, %1: i32, %2: f32) {
  %3 = constant {value = 0} : i32
  %4 = constant {value = 1} : i32
  %5, %6 = for %3, %1, %4, %0, %2 : ptr<f32>, f32 {
  ^(%7: i32, %8: ptr<f32>, %9: f32):
    %10 = addptr %8, %4 : ptr<f32>
    %11 = addptr %10, %7 : ptr<f32>
    %12 = add %9, %9 : f32
    yield %11, %12
  }
  store %0, %6 {cache = none, evict = none}
}
)"),
            R"(kernel @k(%0: ptr<f32>, %1: i32, %2: f32) {
  %3 = constant {value = 0} : i32
  %4 = constant {value = 1} : i32
  %5 = for %3, %1, %4, %2 : f32 {
  ^(%6: i32, %7: f32):
    %8 = add %7, %7 : f32
    yield %8
  }
  store %0, %5 {cache = none, evict = none}
}
)");
}

TEST(DeadCarriedValues, AValueFeedingOnlyADeadValueGoesWithIt) {
  // %9 feeds %8's update only, and %8 only its own: both go.
  EXPECT_EQ(after_dce(R"(kernel @k(%0: ptr<f32>, %1: i32, %2: f32) {
  %3 = constant {value = 0} : i32
  %4 = constant {value = 1} : i32
  %5, %6, %7 = for %3, %1, %4, %0, %1, %2 : ptr<f32>, i32, f32 {
  ^(%8: i32, %9: ptr<f32>, %10: i32, %11: f32):
    %12 = addptr %9, %10 : ptr<f32>
    %13 = add %10, %4 : i32
    %14 = exp %11 : f32
    yield %12, %13, %14
  }
  store %0, %7 {cache = none, evict = none}
}
)"),
            R"(kernel @k(%0: ptr<f32>, %1: i32, %2: f32) {
  %3 = constant {value = 0} : i32
  %4 = constant {value = 1} : i32
  %5 = for %3, %1, %4, %2 : f32 {
  ^(%6: i32, %7: f32):
    %8 = exp %7 : f32
    yield %8
  }
  store %0, %5 {cache = none, evict = none}
}
)");
}

TEST(DeadCarriedValues, ValuesReadByAStoreAnotherUpdateOrAfterTheLoopStay) {
  // %9 is stored through, %10 feeds %11's update, and %11 is read after the loop.
  const std::string text = R"(kernel @k(%0: ptr<f32>, %1: i32, %2: f32) {
  %3 = constant {value = 0} : i32
  %4 = constant {value = 1} : i32
  %5, %6, %7 = for %3, %1, %4, %0, %2, %2 : ptr<f32>, f32, f32 {
  ^(%8: i32, %9: ptr<f32>, %10: f32, %11: f32):
    %12 = addptr %9, %4 : ptr<f32>
    store %12, %11 {cache = none, evict = none}
    %13 = exp %10 : f32
    %14 = add %11, %10 : f32
    yield %12, %13, %14
  }
  store %0, %7 {cache = none, evict = none}
}
)";
  EXPECT_EQ(after_dce(text, false), text);
}

TEST(DeadCarriedValues, AValueReadInsideANestedRegionFollowsItsResults) {
  // %8 reaches the yield only through the `if`, as its own next value: it goes.
  EXPECT_EQ(after_dce(R"(kernel @k(%0: ptr<f32>, %1: i32, %2: i1, %3: f32) {
  %4 = constant {value = 0} : i32
  %5 = constant {value = 1} : i32
  %6, %7 = for %4, %1, %5, %1, %3 : i32, f32 {
  ^(%8: i32, %9: i32, %10: f32):
    %11 = if %2 : i32 {
    ^():
      %12 = add %9, %5 : i32
      yield %12
    } {
    ^():
      yield %9
    }
    %13 = exp %10 : f32
    yield %11, %13
  }
  store %0, %7 {cache = none, evict = none}
}
)"),
            R"(kernel @k(%0: ptr<f32>, %1: i32, %2: i1, %3: f32) {
  %4 = constant {value = 0} : i32
  %5 = constant {value = 1} : i32
  %6 = for %4, %1, %5, %3 : f32 {
  ^(%7: i32, %8: f32):
    %9 = exp %8 : f32
    yield %9
  }
  store %0, %6 {cache = none, evict = none}
}
)");
}

TEST(DeadCarriedValues, AValueStoredInsideANestedRegionStays) {
  const std::string text = R"(kernel @k(%0: ptr<i32>, %1: i32, %2: i1, %3: f32, %4: ptr<f32>) {
  %5 = constant {value = 0} : i32
  %6 = constant {value = 1} : i32
  %7, %8 = for %5, %1, %6, %1, %3 : i32, f32 {
  ^(%9: i32, %10: i32, %11: f32):
    %12 = add %10, %6 : i32
    if %2 {
    ^():
      store %0, %12 {cache = none, evict = none}
    } {
    ^():
    }
    %13 = exp %11 : f32
    yield %12, %13
  }
  store %4, %8 {cache = none, evict = none}
}
)";
  EXPECT_EQ(after_dce(text, false), text);
}

}  // namespace
}  // namespace kiln::ir
