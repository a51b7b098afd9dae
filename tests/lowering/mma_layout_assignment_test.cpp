// Layout assignment for tensor-core dots: the accumulator lives in the
// mma.sync accumulator layout through the loop that carries it and the
// epilogue after it, a row broadcast into it stays inside each thread, and
// a and b are read through conversions into their fragment layouts.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/parser.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/layout_conversion.hpp"

namespace kiln::lowering {
namespace {

// C[64, 64] = A[64, 32k] @ B[32k, 64] over a loop in steps of 32, plus a bias
// row, stored. a and b are loaded in the kernel's blocked layout.
constexpr const char* kMatmulWithBias =
    R"(kernel @matmul_bias(%0: ptr<f16> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}, %2: i32) {
  %3 = constant {value = 0} : i32
  %4 = constant {value = 32} : i32
  %5 = arange {start = 0} : tile<32xi32>
  %6 = expand_dims %5 {axis = 0} : tile<1x32xi32>
  %7 = broadcast %6 : tile<64x32xi32>
  %8 = splat %0 : tile<64x32xptr<f16>>
  %9 = addptr %8, %7 : tile<64x32xptr<f16>>
  %10 = arange {start = 0} : tile<64xi32>
  %11 = expand_dims %10 {axis = 0} : tile<1x64xi32>
  %12 = broadcast %11 : tile<32x64xi32>
  %13 = splat %0 : tile<32x64xptr<f16>>
  %14 = addptr %13, %12 : tile<32x64xptr<f16>>
  %15 = constant {value = 0.0} : tile<64x64xf32>
  %16 = for %3, %2, %4, %15 : tile<64x64xf32> {
  ^(%17: i32, %18: tile<64x64xf32>):
    %19 = load %9 {cache = none, evict = none} : tile<64x32xf16>
    %20 = load %14 {cache = none, evict = none} : tile<32x64xf16>
    %21 = dot %19, %20, %18 {precision = ieee} : tile<64x64xf32>
    yield %21
  }
  %22 = splat %1 : tile<1x64xptr<f32>>
  %23 = arange {start = 0} : tile<64xi32>
  %24 = expand_dims %23 {axis = 0} : tile<1x64xi32>
  %25 = addptr %22, %24 : tile<1x64xptr<f32>>
  %26 = load %25 {cache = none, evict = none} : tile<1x64xf32>
  %27 = broadcast %26 : tile<64x64xf32>
  %28 = add %16, %27 : tile<64x64xf32>
  %29 = splat %1 : tile<64x64xptr<f32>>
  %30 = arange {start = 0} : tile<64xi32>
  %31 = expand_dims %30 {axis = 0} : tile<1x64xi32>
  %32 = broadcast %31 : tile<64x64xi32>
  %33 = addptr %29, %32 : tile<64x64xptr<f32>>
  store %33, %28 {cache = none, evict = none}
}
)";

struct Assigned {
  std::unique_ptr<ir::Function> fn;
  LayoutMap layouts;
  const ir::Operation* dot = nullptr;
  const ir::Operation* bias_broadcast = nullptr;

  Assigned(const std::string& text, const GpuTarget& target) : fn(ir::parse_function(text)) {
    layouts = assign_layouts(*fn, analyze_axes(*fn), target);
    ir::walk(fn->body, [&](ir::Operation& op) {
      if (op.code == ir::OpCode::dot) dot = &op;
      if (op.code == ir::OpCode::broadcast && op.result()->type.dtype == ir::DType::f32) bias_broadcast = &op;
    });
    if (!dot || !bias_broadcast) throw std::logic_error("the kernel has no dot or no bias broadcast");
  }

  const ir::Value& value(int id) const {
    const ir::Value* found = nullptr;
    ir::walk(fn->body, [&](ir::Operation& op) {
      for (const auto& region : op.regions)
        for (const ir::Value* argument : region->arguments)
          if (argument->id == id) found = argument;
      for (const ir::Value* result : op.results)
        if (result->id == id) found = result;
    });
    if (!found) throw std::invalid_argument("no value %" + std::to_string(id));
    return *found;
  }
};

TEST(MmaLayoutAssignment, TheAccumulatorLivesInTheMmaLayoutThroughTheLoopAndTheEpilogue) {
  for (int num_warps : {1, 2, 4, 8}) {
    const GpuTarget target{.arch = "sm_80", .num_warps = num_warps};
    const Assigned a(kMatmulWithBias, target);
    const LinearLayout expected = dot_accumulator_layout(*a.dot, target);
    // The init, the loop's argument, the dot, the loop's result, the bias
    // sum and the store's pointers.
    for (int id : {15, 18, 21, 16, 28, 33}) EXPECT_EQ(a.layouts.at(a.value(id)), expected) << "%" << id;
    EXPECT_EQ(a.layouts.conversion(*a.dot, a.value(18)), nullptr) << "num_warps " << num_warps;
  }
}

TEST(MmaLayoutAssignment, ARowBroadcastIntoTheAccumulatorStaysInsideEachThread) {
  const Assigned a(kMatmulWithBias, {.arch = "sm_90a", .num_warps = 4});
  const ir::Value& bias = *a.bias_broadcast->operands[0];
  EXPECT_EQ(a.layouts.conversion(*a.bias_broadcast, bias), nullptr);
  EXPECT_TRUE(is_thread_local(a.layouts.at(*a.bias_broadcast->result()), a.bias_broadcast->result()->type.shape,
                              a.layouts.at(bias), bias.type.shape, -1));
}

TEST(MmaLayoutAssignment, OperandsAreConvertedIntoTheirFragmentLayouts) {
  const GpuTarget target{.arch = "sm_80", .num_warps = 4};
  const Assigned a(kMatmulWithBias, target);
  for (const auto& [index, operand] : {std::pair{0, DotOperand::a}, std::pair{1, DotOperand::b}}) {
    const ir::Value& value = *a.dot->operands[static_cast<std::size_t>(index)];
    const LayoutConversion* conversion = a.layouts.conversion(*a.dot, value);
    ASSERT_NE(conversion, nullptr) << "operand " << index;
    EXPECT_EQ(conversion->from, a.layouts.at(value));
    EXPECT_EQ(conversion->to, dot_fragment_layout(*a.dot, operand, target));
  }
}

TEST(MmaLayoutAssignment, WithoutTensorCoresTheAccumulatorStaysBlocked) {
  for (const GpuTarget& target : {GpuTarget{.arch = "sm_80", .num_warps = 4, .tensor_cores = false},
                                  GpuTarget{.arch = "sm_75", .num_warps = 4}}) {
    const Assigned a(kMatmulWithBias, target);
    const LinearLayout& result = a.layouts.at(*a.dot->result());
    EXPECT_NE(result, dot_accumulator_layout(*a.dot, {.arch = "sm_80", .num_warps = 4})) << target.arch;
    const LayoutConversion* conversion = a.layouts.conversion(*a.dot, *a.dot->operands[0]);
    ASSERT_NE(conversion, nullptr) << target.arch;
    EXPECT_EQ(conversion->to, dot_operand_layout(result, DotOperand::a, 32)) << target.arch;
  }
}

// S = Q @ K (64 x 64), P = S in f16, O = P @ V: P is computed from the first
// dot's result, so both dots keep every warp on whole rows and P reaches the
// second dot in the registers the first left it in. X @ Y beside them in
// the same block, chained to neither, takes the balanced split.
constexpr const char* kChainedDots =
    R"(kernel @chain(%0: ptr<f16> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = expand_dims %2 {axis = 0} : tile<1x64xi32>
  %4 = broadcast %3 : tile<64x64xi32>
  %5 = splat %0 : tile<64x64xptr<f16>>
  %6 = addptr %5, %4 : tile<64x64xptr<f16>>
  %7 = load %6 {cache = none, evict = none} : tile<64x64xf16>
  %8 = constant {value = 0.0} : tile<64x64xf32>
  %9 = dot %7, %7, %8 {precision = ieee} : tile<64x64xf32>
  %10 = cast %9 : tile<64x64xf16>
  %11 = dot %10, %7, %8 {precision = ieee} : tile<64x64xf32>
  %12 = dot %7, %7, %8 {precision = ieee} : tile<64x64xf32>
  %13 = add %11, %12 : tile<64x64xf32>
  %14 = splat %1 : tile<64x64xptr<f32>>
  %15 = addptr %14, %4 : tile<64x64xptr<f32>>
  store %15, %13 {cache = none, evict = none}
}
)";

TEST(MmaLayoutAssignment, ChainedDotsKeepEveryWarpOnWholeRows) {
  const std::unique_ptr<ir::Function> fn = ir::parse_function(kChainedDots);
  std::vector<const ir::Operation*> dots;
  ir::walk(fn->body, [&](ir::Operation& op) {
    if (op.code == ir::OpCode::dot) dots.push_back(&op);
  });
  ASSERT_EQ(dots.size(), 3u);
  const GpuTarget target{.arch = "sm_80", .num_warps = 4};
  auto split = [&](const ir::Operation* dot) {
    const MmaWarps warps = dot_mma_warps(*dot, target);
    return std::pair{warps.m, warps.n};
  };
  EXPECT_EQ(split(dots[0]), std::pair(4, 1)) << "its result feeds the second";
  EXPECT_EQ(split(dots[1]), std::pair(4, 1)) << "its a is computed from the first";
  EXPECT_EQ(split(dots[2]), std::pair(2, 2)) << "its own, though its result meets the second's";
}

// On sm_90a a dot wgmma can take keeps the rows-first split its warpgroups
// need; with wgmma off it is balanced.
TEST(MmaLayoutAssignment, ADotWgmmaMayTakeKeepsItsWarpsDownTheRows) {
  const Assigned a(kMatmulWithBias, {.arch = "sm_80", .num_warps = 4});
  const MmaWarps wgmma = dot_mma_warps(*a.dot, {.arch = "sm_90a", .num_warps = 4});
  const MmaWarps mma = dot_mma_warps(*a.dot, {.arch = "sm_90a", .num_warps = 4, .wgmma = false});
  EXPECT_EQ(std::pair(wgmma.m, wgmma.n), std::pair(4, 1));
  EXPECT_EQ(std::pair(mma.m, mma.n), std::pair(2, 2));
}

}  // namespace
}  // namespace kiln::lowering
