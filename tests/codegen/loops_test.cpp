// `for`, `while` and `if` through the GPU code generator: loop-carried tiles and
// scalars become phi nodes per register, the loop body keeps its classes'
// layouts, a `for` never wraps its induction variable and checks a runtime
// step as the interpreter does, and ptxas accepts the result without spills.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "codegen/codegen_support.hpp"

namespace kiln::codegen_test {
namespace {

/// out[i] = sum over blocks b of x[b*256 + i], for n a multiple of 256, and
/// counts[0] = the number of blocks: a carried tile and a carried scalar.
const char* kSumBlocks =
    R"(kernel @sum_blocks(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}, %2: ptr<i32>, %3: i32 {divisibility = 16}) {
  %4 = constant {value = 0} : i32
  %5 = constant {value = 256} : i32
  %6 = constant {value = 1} : i32
  %7 = arange {start = 0} : tile<256xi32>
  %8 = splat %0 : tile<256xptr<f32>>
  %9 = constant {value = 0.0} : tile<256xf32>
  %10, %11 = for %4, %3, %5, %9, %4 : tile<256xf32>, i32 {
  ^(%12: i32, %13: tile<256xf32>, %14: i32):
    %15 = splat %12 : tile<256xi32>
    %16 = add %15, %7 : tile<256xi32>
    %17 = addptr %8, %16 : tile<256xptr<f32>>
    %18 = load %17 {cache = none, evict = none} : tile<256xf32>
    %19 = add %13, %18 : tile<256xf32>
    %20 = add %14, %6 : i32
    yield %19, %20
  }
  %21 = splat %1 : tile<256xptr<f32>>
  %22 = addptr %21, %7 : tile<256xptr<f32>>
  store %22, %10 {cache = none, evict = none}
  store %2, %11 {cache = none, evict = none}
}
)";

/// A 2-D accumulator over row blocks, negated when `flip` is nonzero by an
/// `if` with a tile result.
const char* kAccumulateRows =
    R"(kernel @accumulate_rows(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}, %2: i32, %3: i32) {
  %4 = constant {value = 0} : i32
  %5 = constant {value = 16} : i32
  %6 = arange {start = 0} : tile<16xi32>
  %7 = arange {start = 0} : tile<64xi32>
  %8 = expand_dims %6 {axis = 1} : tile<16x1xi32>
  %9 = constant {value = 64} : tile<16x1xi32>
  %10 = mul %8, %9 : tile<16x1xi32>
  %11 = broadcast %10 : tile<16x64xi32>
  %12 = expand_dims %7 {axis = 0} : tile<1x64xi32>
  %13 = broadcast %12 : tile<16x64xi32>
  %14 = add %11, %13 : tile<16x64xi32>
  %15 = splat %0 : tile<16x64xptr<f32>>
  %16 = addptr %15, %14 : tile<16x64xptr<f32>>
  %17 = constant {value = 0.0} : tile<16x64xf32>
  %18 = constant {value = 1024} : i32
  %19 = for %4, %2, %5, %17 : tile<16x64xf32> {
  ^(%20: i32, %21: tile<16x64xf32>):
    %22 = mul %20, %18 : i32
    %23 = splat %22 : tile<16x64xi32>
    %24 = addptr %16, %23 : tile<16x64xptr<f32>>
    %25 = load %24 {cache = none, evict = none} : tile<16x64xf32>
    %26 = add %21, %25 : tile<16x64xf32>
    yield %26
  }
  %27 = cmp %3, %4 {pred = ne} : i1
  %28 = if %27 : tile<16x64xf32> {
  ^():
    %29 = neg %19 : tile<16x64xf32>
    yield %29
  } {
  ^():
    yield %19
  }
  %30 = splat %1 : tile<16x64xptr<f32>>
  %31 = addptr %30, %14 : tile<16x64xptr<f32>>
  store %31, %28 {cache = none, evict = none}
}
)";

class LoopsForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(LoopsForArch, SumOfBlocksCarriesATileAndAScalar) {
  const lowering::GpuKernel kernel = compile_text(kSumBlocks, GetParam());
  // 256 elements over 128 threads: two registers of the tile, one of the
  // counter, one of the induction variable in the body; the tile's and the
  // counter's again after the loop, from the guard or the last iteration.
  EXPECT_EQ(count(kernel.llvm_ir, "phi float"), 2 + 2) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "phi i32"), 2 + 1) << kernel.llvm_ir;
  // The body goes on while iv < hi - step, saturated: iv + step never wraps.
  EXPECT_TRUE(contains(kernel.llvm_ir, "%for.limit = call i32 @llvm.ssub.sat.i32(i32 %"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "icmp slt i32 %iv, %for.limit"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "%iv.next = add nsw i32 %iv, 256"));
  // A constant positive step needs no check: O3 removes it.
  EXPECT_FALSE(contains(kernel.ptx, "trap;")) << kernel.ptx;
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.v2.f32"));
  EXPECT_TRUE(contains(kernel.ptx, "st.global.v2.f32"));
  // The guard around the loop and the loop's back edge.
  EXPECT_GE(count(kernel.ptx, "bra"), 2) << kernel.ptx;
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), "sum_blocks");
}

TEST_P(LoopsForArch, TwoDimensionalAccumulatorAndIf) {
  const lowering::GpuKernel kernel = compile_text(kAccumulateRows, GetParam());
  // 16x64 over 128 threads: eight registers per thread, carried, after the
  // loop and merged.
  EXPECT_EQ(count(kernel.llvm_ir, "phi float"), 8 + 8 + 8) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "if.then"));
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.v4.f32"));
  EXPECT_TRUE(contains(kernel.ptx, "neg.f32"));
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), "accumulate_rows");
}

TEST(Loops, UnsignedBoundsCompareUnsigned) {
  const std::string text = R"(kernel @count_up(%0: ptr<u32>, %1: u32) {
  %2 = constant {value = 0} : u32
  %3 = constant {value = 1} : u32
  %4 = for %2, %1, %3, %2 : u32 {
  ^(%5: u32, %6: u32):
    %7 = add %6, %5 : u32
    yield %7
  }
  store %0, %4 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_TRUE(contains(kernel.llvm_ir, "icmp ult i32 %iv, %for.limit"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "%for.limit = call i32 @llvm.usub.sat.i32(i32 %"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "%iv.next = add nuw i32 %iv, 1"));
}

/// Sums k over range(0, n, step), a runtime step, with bounds of `type`.
std::string runtime_step_loop(const std::string& type) {
  return "kernel @stepped(%0: ptr<" + type + ">, %1: " + type + ", %2: " + type +
         ") {\n  %3 = constant {value = 0} : " + type + "\n  %4 = for %3, %1, %2, %3 : " + type +
         " loc(\"stepped.hpp\":9) {\n  ^(%5: " + type + ", %6: " + type + "):\n    %7 = add %6, %5 : " + type +
         "\n    yield %7\n  }\n  store %0, %4 {cache = none, evict = none}\n}\n";
}

TEST(Loops, ARuntimeStepIsCheckedBeforeTheLoopAsTheInterpreterDoes) {
  for (const auto& [type, conversion] : {std::pair{"i32", "%d"}, std::pair{"u64", "%u"}}) {
    const lowering::GpuKernel kernel = compile_text(runtime_step_loop(type));
    const std::string v = conversion;
    EXPECT_TRUE(contains(kernel.llvm_ir, "kernel stepped: for loop at stepped.hpp:9 has step " + v +
                                             ", which never reaches " + v + " from " + v + " (program (%d, %d, %d))"))
        << kernel.llvm_ir;
    EXPECT_TRUE(contains(kernel.ptx, "trap;")) << type;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", std::string("stepped_") + type);
  }
}

/// Halves a tile of 512 values until its first element is at most 1: a
/// `while` carrying a tile, its condition region reducing to a scalar.
const char* kHalveUntilSmall = R"(kernel @halve_until_small(%0: ptr<i32> {divisibility = 16}) {
  %1 = arange {start = 0} : tile<512xi32>
  %2 = splat %0 : tile<512xptr<i32>>
  %3 = addptr %2, %1 : tile<512xptr<i32>>
  %4 = load %3 {cache = none, evict = none} : tile<512xi32>
  %5 = constant {value = 1} : i32
  %6 = constant {value = 1} : tile<512xi32>
  %7 = while %4 : tile<512xi32> {
  ^(%8: tile<512xi32>):
    %9 = reduce %8 {axis = 0} : i32 {
    ^(%10: i32, %11: i32):
      %12 = maximum %10, %11 : i32
      yield %12
    }
    %13 = cmp %9, %5 {pred = gt} : i1
    yield %13
  } {
  ^(%14: tile<512xi32>):
    %15 = shr %14, %6 : tile<512xi32>
    yield %15
  }
  store %3, %7 {cache = none, evict = none}
}
)";

TEST_P(LoopsForArch, WhileCarriesATileAndReducesInItsCondition) {
  const lowering::GpuKernel kernel = compile_text(kHalveUntilSmall, GetParam());
  // 512 elements over 128 threads: four registers carried.
  EXPECT_EQ(count(kernel.llvm_ir, "phi i32"), 4) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "while.header"));
  EXPECT_TRUE(contains(kernel.ptx, "shfl.sync.bfly.b32"));
  EXPECT_TRUE(contains(kernel.ptx, "shr.s32"));
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), "halve_until_small");
}

INSTANTIATE_TEST_SUITE_P(Archs, LoopsForArch, ::testing::Values("sm_80", "sm_90a"));

TEST(Loops, LayoutsOfLoopValuesAreDumped) {
  std::ostringstream log;
  std::unique_ptr<ir::Function> fn = ir::parse_function(kSumBlocks);
  lowering::compile_for_gpu(*fn, {}, {.dump_after = "layouts", .log = &log});
  // The carried tile (%13, a block argument) and a value of the body (%18).
  EXPECT_TRUE(contains(log.str(), "%13 : tile<256xf32>"));
  EXPECT_TRUE(contains(log.str(), "%18 : tile<256xf32>"));
}

}  // namespace
}  // namespace kiln::codegen_test
