// The layout rules of reshape, trans, join and split (shape_layouts.hpp),
// element by element over every register, lane and warp of many blocked
// layouts; and the layouts and conversions assign_layouts gives kernels
// that use them.
#include "kiln/lowering/shape_layouts.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/ir/parser.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/blocked_layout.hpp"

namespace kiln::lowering {
namespace {

using Sizes = std::vector<std::int64_t>;
using Coordinates = std::vector<std::int32_t>;

/// The tile coordinates `layout` maps (register, lane, warp) to.
Coordinates at(const LinearLayout& layout, std::int32_t reg, std::int32_t lane, std::int32_t warp) {
  Coordinates coords;
  for (const auto& [name, value] : layout.apply({{"register", reg}, {"lane", lane}, {"warp", warp}}))
    coords.push_back(value);
  return coords;
}

/// Calls `check(reg, lane, warp)` for every hardware index of `layout`.
template <class Check>
void for_every_index(const LinearLayout& layout, Check check) {
  for (std::int32_t reg = 0; reg < layout.in_dim_size("register"); ++reg)
    for (std::int32_t lane = 0; lane < layout.in_dim_size("lane"); ++lane)
      for (std::int32_t warp = 0; warp < layout.in_dim_size("warp"); ++warp) check(reg, lane, warp);
}

std::int64_t row_major(const Coordinates& coords, const Sizes& shape) {
  std::int64_t index = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + coords[d];
  return index;
}

/// 2-D blocked layouts over 1 to 8 warps, replicated ones (small tiles) included.
std::vector<std::pair<Sizes, LinearLayout>> layouts_2d() {
  std::vector<std::pair<Sizes, LinearLayout>> layouts;
  for (const Sizes& shape : {Sizes{64, 64}, Sizes{16, 32}, Sizes{256, 2}, Sizes{4, 1024}, Sizes{8, 8}, Sizes{2, 16}})
    for (const Sizes& spt : {Sizes{1, 1}, Sizes{2, 2}})
      for (const Sizes& tpw : {Sizes{8, 4}, Sizes{1, 32}})
        for (const Sizes& wpc : {Sizes{4, 1}, Sizes{1, 2}})
          for (const Sizes& order : {Sizes{1, 0}, Sizes{0, 1}})
            layouts.emplace_back(shape, blocked_layout(shape, spt, tpw, wpc, order));
  return layouts;
}

TEST(ShapeLayouts, TransSwapsTheCoordinatesOfEveryElement) {
  for (const auto& [shape, result] : layouts_2d()) {
    const LinearLayout operand = trans_operand_layout(result, {1, 0});
    EXPECT_EQ(operand.out_dim_size("dim0"), shape[1]);
    EXPECT_EQ(operand.out_dim_size("dim1"), shape[0]);
    for_every_index(result, [&](std::int32_t r, std::int32_t l, std::int32_t w) {
      const Coordinates wanted = at(result, r, l, w);
      ASSERT_EQ(at(operand, r, l, w), (Coordinates{wanted[1], wanted[0]})) << to_string(result);
    });
    EXPECT_EQ(trans_operand_layout(result, {0, 1}), result);
    EXPECT_EQ(trans_operand_layout(operand, {1, 0}), result) << "swapping twice is the identity";
  }
  EXPECT_THROW(trans_operand_layout(layouts_2d()[0].second, {0, 0}), std::invalid_argument);
}

TEST(ShapeLayouts, ReshapeKeepsTheRowMajorPositionOfEveryElement) {
  for (const auto& [shape, result] : layouts_2d()) {
    const std::int64_t numel = shape[0] * shape[1];
    for (const Sizes& operand_shape : {Sizes{numel}, Sizes{shape[1], shape[0]}, Sizes{numel / 2, 2}}) {
      const LinearLayout operand = reshape_operand_layout(result, operand_shape);
      for_every_index(result, [&](std::int32_t r, std::int32_t l, std::int32_t w) {
        ASSERT_EQ(row_major(at(operand, r, l, w), operand_shape), row_major(at(result, r, l, w), shape));
      });
    }
  }
}

TEST(ShapeLayouts, JoinOperandsHoldEveryPairTheirThreadHoldsAHalfOf) {
  for (const auto& [shape, layout] : layouts_2d()) {
    if (shape[1] != 2) continue;
    const LinearLayout operand = join_operand_layout(layout);
    ASSERT_EQ(operand.out_dims().size(), 1u);
    // Every element of the result is in its thread's operand registers.
    std::set<Coordinates> held;  // (lane, warp, row)
    for_every_index(
        operand, [&](std::int32_t r, std::int32_t l, std::int32_t w) { held.insert({l, w, at(operand, r, l, w)[0]}); });
    for_every_index(layout, [&](std::int32_t r, std::int32_t l, std::int32_t w) {
      ASSERT_TRUE(held.contains({l, w, at(layout, r, l, w)[0]})) << "register " << r << " of " << to_string(layout);
    });
  }
}

TEST(ShapeLayouts, SplitOperandHoldsBothHalvesAboveTheHalfsRegisters) {
  for (const LinearLayout& half :
       {blocked_layout({256}, {2}, {32}, {4}, {0}), blocked_layout({64}, {1}, {32}, {8}, {0}),
        blocked_layout({1024}, {4}, {32}, {2}, {0})}) {
    const LinearLayout operand = split_operand_layout(half);
    const std::int32_t half_registers = half.in_dim_size("register");
    ASSERT_EQ(operand.in_dim_size("register"), 2 * half_registers);
    for_every_index(half, [&](std::int32_t r, std::int32_t l, std::int32_t w) {
      const std::int32_t element = at(half, r, l, w)[0];
      ASSERT_EQ(at(operand, r, l, w), (Coordinates{element, 0}));
      ASSERT_EQ(at(operand, r + half_registers, l, w), (Coordinates{element, 1}));
    });
  }
  const LinearLayout scalars = split_to_scalars_operand_layout(4);
  for_every_index(scalars, [&](std::int32_t r, std::int32_t l, std::int32_t w) {
    ASSERT_EQ(at(scalars, r, l, w), Coordinates{r});
  });
}

/// The layouts assign_layouts gives a kernel, with the function they point into.
struct Assigned {
  std::unique_ptr<ir::Function> fn;
  LayoutMap layouts;
  explicit Assigned(const std::string& text) : fn(ir::parse_function(text)) {
    layouts = assign_layouts(*fn, analyze_axes(*fn), GpuTarget{.num_warps = 4});
  }
  const ir::Operation& op(std::size_t index) const { return *fn->body.ops.at(index); }
};

TEST(ShapeLayouts, AFreeTransposeResultTakesThePermutedLayout) {
  // %4 = trans of a loaded tile, only added to itself and stored through
  // transposed offsets: no conversion anywhere.
  const Assigned assigned(R"(kernel @t(%0: ptr<f32> {divisibility = 16}) {
  %1 = constant {value = 0} : tile<32x64xi32>
  %2 = splat %0 : tile<32x64xptr<f32>>
  %3 = addptr %2, %1 : tile<32x64xptr<f32>>
  %4 = load %3 {cache = none, evict = none} : tile<32x64xf32>
  %5 = trans %4 {order = [1, 0]} : tile<64x32xf32>
  %6 = add %5, %5 : tile<64x32xf32>
  %7 = trans %1 {order = [1, 0]} : tile<64x32xi32>
  %8 = splat %0 : tile<64x32xptr<f32>>
  %9 = addptr %8, %7 : tile<64x32xptr<f32>>
  store %9, %6 {cache = none, evict = none}
}
)");
  const ir::Operation& trans = assigned.op(4);
  EXPECT_EQ(assigned.layouts.at(*trans.result()),
            trans_operand_layout(assigned.layouts.at(*trans.operands[0]), {1, 0}));
  EXPECT_EQ(assigned.layouts.conversion_count(), 0u);
}

TEST(ShapeLayouts, ABoundTransposeResultConvertsItsOperand) {
  // The result is broadcast-bound (added to a broadcast): it keeps the
  // kernel's 2-D layout and the operand is converted into the permuted one.
  const Assigned assigned(R"(kernel @t() {
  %0 = constant {value = 1.0} : tile<32x64xf32>
  %1 = constant {value = 2.0} : tile<64x1xf32>
  %2 = trans %0 {order = [1, 0]} : tile<64x32xf32>
  %3 = broadcast %1 : tile<64x32xf32>
  %4 = add %2, %3 : tile<64x32xf32>
}
)");
  const ir::Operation& trans = assigned.op(2);
  const LayoutConversion* conversion = assigned.layouts.conversion(trans, *trans.operands[0]);
  ASSERT_NE(conversion, nullptr);
  EXPECT_EQ(conversion->to, trans_operand_layout(assigned.layouts.at(*trans.result()), {1, 0}));
}

TEST(ShapeLayouts, JoinOperandsTakeTheSliceAndSplitHalvesTheSlice) {
  const Assigned assigned(R"(kernel @j() {
  %0 = constant {value = 1.0} : tile<256xf32>
  %1 = constant {value = 2.0} : tile<256xf32>
  %2 = join %0, %1 : tile<256x2xf32>
  %3, %4 = split %2 : tile<256xf32>, tile<256xf32>
  %5 = add %3, %4 : tile<256xf32>
}
)");
  const ir::Operation& join = assigned.op(2);
  const ir::Operation& split = assigned.op(3);
  EXPECT_EQ(assigned.layouts.at(*join.operands[0]), join_operand_layout(assigned.layouts.at(*join.result())));
  EXPECT_EQ(assigned.layouts.conversion(join, *join.operands[0]), nullptr);
  EXPECT_EQ(assigned.layouts.at(*split.results[0]), assigned.layouts.at(*split.results[1]));
}

TEST(ShapeLayouts, ScanOperandsAreConvertedToTheResultsLayout) {
  // The scan's two results share one class; the vectorised load's class differs.
  const Assigned assigned(R"(kernel @s(%0: ptr<f32> {divisibility = 16}) {
  %1 = arange {start = 0} : tile<512xi32>
  %3 = constant {value = 7} : tile<512xi32>
  %4 = splat %0 : tile<512xptr<f32>>
  %5 = addptr %4, %1 : tile<512xptr<f32>>
  %6 = load %5 {cache = none, evict = none} : tile<512xf32>
  %7, %8 = scan %6, %3 {axis = 0, reverse = 0} : tile<512xf32>, tile<512xi32> {
  ^(%9: f32, %10: i32, %11: f32, %12: i32):
    %13 = add %9, %11 : f32
    %14 = add %10, %12 : i32
    yield %13, %14
  }
}
)");
  const ir::Operation& scan = assigned.op(5);
  EXPECT_EQ(assigned.layouts.at(*scan.results[0]), assigned.layouts.at(*scan.results[1]));
  for (const ir::Value* operand : scan.operands) {
    const LayoutConversion* conversion = assigned.layouts.conversion(scan, *operand);
    const LinearLayout& read_in = conversion ? conversion->to : assigned.layouts.at(*operand);
    EXPECT_EQ(read_in, assigned.layouts.at(*scan.results[0]));
  }
}

}  // namespace
}  // namespace kiln::lowering
