// Which tiles code generation computes again instead of converting: index
// arithmetic (integers, booleans, pointers) from aranges, constants and
// splats; not what a load, a float op, a division or a loop-carried value
// makes, nor a computation longer than kMaxRematerializedOps. A class asked
// for two slices takes the one that leaves such a tile to be converted.
#include "kiln/lowering/rematerialize.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kiln/ir/parser.hpp"
#include "kiln/lowering/axis_analysis.hpp"

namespace kiln::lowering {
namespace {

/// The value the op at `index` of `fn`'s body defines.
const ir::Value& result_of(const ir::Function& fn, std::size_t index) { return *fn.body.ops.at(index)->result(); }

TEST(Rematerialize, PointersMasksAndOffsetsFromAnArange) {
  const std::unique_ptr<ir::Function> fn = ir::parse_function(R"(kernel @k(%0: ptr<f16>, %1: i32) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = splat %1 : tile<64xi32>
  %4 = add %3, %2 : tile<64xi32>
  %5 = expand_dims %4 {axis = 0} : tile<1x64xi32>
  %6 = constant {value = 128} : tile<1x64xi32>
  %7 = mul %5, %6 : tile<1x64xi32>
  %8 = splat %0 : tile<1x64xptr<f16>>
  %9 = addptr %8, %7 : tile<1x64xptr<f16>>
  %10 = broadcast %9 : tile<64x64xptr<f16>>
  %11 = cmp %4, %3 {pred = lt} : tile<64xi1>
  %12 = cast %4 : tile<64xi64>
}
)");
  for (std::size_t index : {0, 2, 3, 5, 7, 8, 9, 10})
    EXPECT_TRUE(is_rematerializable(result_of(*fn, index))) << "op " << index;
  EXPECT_FALSE(is_rematerializable(*fn->body.arguments[1])) << "a scalar is no tile";
}

TEST(Rematerialize, NotWhatALoadAFloatOpOrADivisionMakes) {
  const std::unique_ptr<ir::Function> fn = ir::parse_function(R"(kernel @k(%0: ptr<i32>, %1: i32) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = splat %0 : tile<64xptr<i32>>
  %4 = addptr %3, %2 : tile<64xptr<i32>>
  %5 = load %4 {cache = none, evict = none} : tile<64xi32>
  %6 = add %5, %2 : tile<64xi32>
  %7 = cast %2 : tile<64xf32>
  %8 = cast %7 : tile<64xi32>
  %9 = splat %1 : tile<64xi32>
  %10 = div %2, %9 : tile<64xi32>
  %11 = rem %2, %9 : tile<64xi32>
  %12 = add %10, %2 : tile<64xi32>
}
)");
  EXPECT_TRUE(is_rematerializable(result_of(*fn, 2)));
  for (std::size_t index : {3, 4, 5, 6, 8, 9, 10})
    EXPECT_FALSE(is_rematerializable(result_of(*fn, index))) << "op " << index;
}

TEST(Rematerialize, NotALoopCarriedTile) {
  const std::unique_ptr<ir::Function> fn = ir::parse_function(R"(kernel @k(%0: i32) {
  %1 = constant {value = 0} : i32
  %2 = constant {value = 1} : i32
  %3 = arange {start = 0} : tile<16xi32>
  %4 = for %1, %0, %2, %3 : tile<16xi32> {
  ^(%5: i32, %6: tile<16xi32>):
    %7 = add %6, %3 : tile<16xi32>
    yield %7
  }
}
)");
  const ir::Operation& loop = *fn->body.ops.at(3);
  const ir::Value& carried = *loop.regions.at(0)->arguments.at(1);
  EXPECT_FALSE(is_rematerializable(carried));
  EXPECT_FALSE(is_rematerializable(*loop.regions.at(0)->ops.at(0)->result()));
  EXPECT_FALSE(is_rematerializable(*loop.result()));
}

TEST(Rematerialize, AtMostTheLongestComputationAllowed) {
  // A chain of n adds of a constant to an arange: n + 2 ops.
  auto chain = [](int adds) {
    std::string text =
        "kernel @k() {\n  %0 = arange {start = 0} : tile<32xi32>\n"
        "  %1 = constant {value = 3} : tile<32xi32>\n";
    for (int i = 0; i < adds; ++i)
      text +=
          "  %" + std::to_string(i + 2) + " = add %" + std::to_string(i + 1 == 1 ? 0 : i + 1) + ", %1 : tile<32xi32>\n";
    return ir::parse_function(text + "}\n");
  };
  const auto longest = chain(kMaxRematerializedOps - 2);
  EXPECT_TRUE(is_rematerializable(*longest->body.ops.back()->result()));
  const auto too_long = chain(kMaxRematerializedOps - 1);
  EXPECT_FALSE(is_rematerializable(*too_long->body.ops.back()->result()));
}

TEST(Rematerialize, ATileAskedTwoSlicesLivesWhereWhatCannotBeComputedAgainIsUsed) {
  // %2 and its quotient %4 are one class. The arange is asked first, as a
  // column; the quotient, which only a conversion can move, as a row: the
  // class takes the row's slice and the arange is the one converted.
  const std::unique_ptr<ir::Function> fn = ir::parse_function(R"(kernel @k(%0: ptr<i32>, %1: i32) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = splat %1 : tile<64xi32>
  %4 = div %2, %3 : tile<64xi32>
  %5 = expand_dims %2 {axis = 1} : tile<64x1xi32>
  %6 = expand_dims %4 {axis = 0} : tile<1x64xi32>
  %7 = broadcast %5 : tile<64x64xi32>
  %8 = broadcast %6 : tile<64x64xi32>
  %9 = add %7, %8 : tile<64x64xi32>
  %10 = splat %0 : tile<64x64xptr<i32>>
  %11 = addptr %10, %9 : tile<64x64xptr<i32>>
  store %11, %9 {cache = none, evict = none}
}
)");
  const LayoutMap layouts = assign_layouts(*fn, analyze_axes(*fn), GpuTarget{.num_warps = 4});
  const ir::Operation& column = *fn->body.ops.at(3);
  const ir::Operation& row = *fn->body.ops.at(4);
  EXPECT_EQ(layouts.conversion(row, result_of(*fn, 2)), nullptr);
  const LayoutConversion* conversion = layouts.conversion(column, result_of(*fn, 0));
  ASSERT_NE(conversion, nullptr);
  EXPECT_EQ(planned_conversion_kind(*conversion), ConversionKind::rematerialize);
}

}  // namespace
}  // namespace kiln::lowering
