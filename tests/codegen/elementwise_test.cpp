// Element-wise ops and casts through the GPU code generator: one kernel
// using most of them compiles for both architectures, and the PTX shows the
// instructions each lowering promises.
#include <gtest/gtest.h>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"

namespace kiln::codegen_test {
namespace {

class ElementwiseForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(ElementwiseForArch, Compiles) {
  // Two warps: 4 of the 256 elements per thread, so f32 moves 16 bytes at a time.
  const lowering::GpuKernel kernel = compile_text(kElementwise, GetParam(), 2);
  const std::string& ptx = kernel.ptx;
  EXPECT_TRUE(contains(ptx, ".entry elementwise("));
  EXPECT_TRUE(contains(ptx, "ex2.approx.f32"));
  EXPECT_TRUE(contains(ptx, "lg2.approx.f32"));
  EXPECT_TRUE(contains(ptx, "sqrt.rn.f32"));
  EXPECT_TRUE(contains(ptx, "sqrt.rn.f64"));
  EXPECT_TRUE(contains(ptx, "cvt.rmi.f32.f32"));  // floor
  EXPECT_TRUE(contains(ptx, "cvt.rpi.f32.f32"));  // ceil
  EXPECT_TRUE(contains(ptx, "min.NaN.f32"));
  EXPECT_TRUE(contains(ptx, "max.NaN.f32"));
  EXPECT_TRUE(contains(ptx, "fma.rn.f32"));
  EXPECT_TRUE(contains(ptx, "div.rn.f32"));
  EXPECT_TRUE(contains(ptx, "div.s32"));
  EXPECT_TRUE(contains(ptx, "rem.s32"));
  EXPECT_TRUE(contains(ptx, "mul.hi.u32"));
  EXPECT_TRUE(contains(ptx, "cvt.rzi.sat.s32.f32") || contains(ptx, "cvt.rzi.s32.f32"));
  EXPECT_TRUE(contains(ptx, "cvt.rn.bf16.f32"));
  EXPECT_TRUE(contains(ptx, "cvt.f32.f16"));
  EXPECT_TRUE(contains(ptx, "cvt.rn.f64.s64"));
  EXPECT_TRUE(contains(ptx, "ld.global.v4.f32"));
  EXPECT_TRUE(contains(ptx, "ld.global.v2.b32") || contains(ptx, "ld.global.v4.b16"));  // 4 x f16, 8 bytes
  EXPECT_TRUE(contains(ptx, "st.global.v4.b32") || contains(ptx, "st.global.v4.u32") ||
              contains(ptx, "st.global.v4.s32"));
  EXPECT_TRUE(contains(kernel.optimized_llvm_ir, "fptosi.sat"));
}

INSTANTIATE_TEST_SUITE_P(Archs, ElementwiseForArch, ::testing::Values("sm_80", "sm_90a"));

TEST(Elementwise, IntegerShiftsClampTheAmount) {
  const lowering::GpuKernel kernel = compile_text(kElementwise);
  // An amount of 32 or more gives 0 (shl) or the sign fill (shr): a compare against the width.
  EXPECT_TRUE(contains(kernel.llvm_ir, "icmp uge i32"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "ashr i32"));
}

TEST(Elementwise, SmallTileSpreadsOverAllThreads) {
  // 256 elements over 128 threads: 2 each, so no element is loaded twice.
  const lowering::GpuKernel kernel = compile_text(kElementwise, "sm_90a", 4);
  EXPECT_EQ(count(kernel.ptx, "ld.global.v2.f32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "ld.global.v4"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.v2.f64"), 1) << kernel.ptx;
}

TEST(Broadcast, AddBiasKeepsBroadcastsInsideEachThread) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kAddBias, arch);
    EXPECT_TRUE(contains(kernel.ptx, ".entry add_bias("));
    // 64x64 f32 over 128 threads: 32 per thread, 8 vectors of 4 for the tile load and the store.
    EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 8) << kernel.ptx;
    EXPECT_GE(count(kernel.ptx, "ld.global.v4.f32"), 8) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "shfl"), 0) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  }
}

}  // namespace
}  // namespace kiln::codegen_test
