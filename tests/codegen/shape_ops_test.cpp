// reshape, trans, join and split through the GPU code generator: each reads
// its operand in the layout derived from its result's (a conversion first
// when the operand lives elsewhere), then renames or picks registers;
// ptxas accepts every kernel.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"

namespace kiln::codegen_test {
namespace {

/// Loads a 32x64 f32 tile row-major from %0 and stores its transpose
/// row-major (64x32) to %1.
const char* kTranspose = R"(kernel @transpose(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<32xi32>
  %3 = arange {start = 0} : tile<64xi32>
  %4 = expand_dims %2 {axis = 1} : tile<32x1xi32>
  %5 = constant {value = 64} : tile<32x1xi32>
  %6 = mul %4, %5 : tile<32x1xi32>
  %7 = broadcast %6 : tile<32x64xi32>
  %8 = expand_dims %3 {axis = 0} : tile<1x64xi32>
  %9 = broadcast %8 : tile<32x64xi32>
  %10 = add %7, %9 : tile<32x64xi32>
  %11 = splat %0 : tile<32x64xptr<f32>>
  %12 = addptr %11, %10 : tile<32x64xptr<f32>>
  %13 = load %12 {cache = none, evict = none} : tile<32x64xf32>
  %14 = trans %13 {order = [1, 0]} : tile<64x32xf32>
  %15 = arange {start = 0} : tile<64xi32>
  %16 = arange {start = 0} : tile<32xi32>
  %17 = expand_dims %15 {axis = 1} : tile<64x1xi32>
  %18 = constant {value = 32} : tile<64x1xi32>
  %19 = mul %17, %18 : tile<64x1xi32>
  %20 = broadcast %19 : tile<64x32xi32>
  %21 = expand_dims %16 {axis = 0} : tile<1x32xi32>
  %22 = broadcast %21 : tile<64x32xi32>
  %23 = add %20, %22 : tile<64x32xi32>
  %24 = splat %1 : tile<64x32xptr<f32>>
  %25 = addptr %24, %23 : tile<64x32xptr<f32>>
  store %25, %14 {cache = none, evict = none}
}
)";

/// The same transpose with the output offsets computed in the input's shape
/// (element (r, c) goes to c * 32 + r) and transposed too: the result class
/// then holds only transposes and element-wise values.
const char* kTransposeWithTransposedOffsets =
    R"(kernel @transpose_offsets(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<32xi32>
  %3 = arange {start = 0} : tile<64xi32>
  %4 = expand_dims %2 {axis = 1} : tile<32x1xi32>
  %5 = constant {value = 64} : tile<32x1xi32>
  %6 = mul %4, %5 : tile<32x1xi32>
  %7 = broadcast %6 : tile<32x64xi32>
  %8 = expand_dims %3 {axis = 0} : tile<1x64xi32>
  %9 = broadcast %8 : tile<32x64xi32>
  %10 = add %7, %9 : tile<32x64xi32>
  %11 = splat %0 : tile<32x64xptr<f32>>
  %12 = addptr %11, %10 : tile<32x64xptr<f32>>
  %13 = load %12 {cache = none, evict = none} : tile<32x64xf32>
  %14 = trans %13 {order = [1, 0]} : tile<64x32xf32>
  %15 = broadcast %4 : tile<32x64xi32>
  %16 = constant {value = 32} : tile<1x64xi32>
  %17 = mul %8, %16 : tile<1x64xi32>
  %18 = broadcast %17 : tile<32x64xi32>
  %19 = add %15, %18 : tile<32x64xi32>
  %20 = trans %19 {order = [1, 0]} : tile<64x32xi32>
  %21 = splat %1 : tile<64x32xptr<f32>>
  %22 = addptr %21, %20 : tile<64x32xptr<f32>>
  store %22, %14 {cache = none, evict = none}
}
)";

/// A 2048-element vector reshaped to 32x64 and stored row-major: the same
/// element order, so each thread keeps its registers.
const char* kReshapeTo2d = R"(kernel @reshape_to_2d(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<2048xi32>
  %3 = splat %0 : tile<2048xptr<f32>>
  %4 = addptr %3, %2 : tile<2048xptr<f32>>
  %5 = load %4 {cache = none, evict = none} : tile<2048xf32>
  %6 = reshape %5 : tile<32x64xf32>
  %7 = arange {start = 0} : tile<32xi32>
  %8 = arange {start = 0} : tile<64xi32>
  %9 = expand_dims %7 {axis = 1} : tile<32x1xi32>
  %10 = constant {value = 64} : tile<32x1xi32>
  %11 = mul %9, %10 : tile<32x1xi32>
  %12 = broadcast %11 : tile<32x64xi32>
  %13 = expand_dims %8 {axis = 0} : tile<1x64xi32>
  %14 = broadcast %13 : tile<32x64xi32>
  %15 = add %12, %14 : tile<32x64xi32>
  %16 = splat %1 : tile<32x64xptr<f32>>
  %17 = addptr %16, %15 : tile<32x64xptr<f32>>
  store %17, %6 {cache = none, evict = none}
}
)";

/// A 16x64 i32 tile flattened and stored as a vector.
const char* kReshapeTo1d = R"(kernel @reshape_to_1d(%0: ptr<i32> {divisibility = 16}, %1: ptr<i32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<16xi32>
  %3 = arange {start = 0} : tile<64xi32>
  %4 = expand_dims %2 {axis = 1} : tile<16x1xi32>
  %5 = constant {value = 64} : tile<16x1xi32>
  %6 = mul %4, %5 : tile<16x1xi32>
  %7 = broadcast %6 : tile<16x64xi32>
  %8 = expand_dims %3 {axis = 0} : tile<1x64xi32>
  %9 = broadcast %8 : tile<16x64xi32>
  %10 = add %7, %9 : tile<16x64xi32>
  %11 = splat %0 : tile<16x64xptr<i32>>
  %12 = addptr %11, %10 : tile<16x64xptr<i32>>
  %13 = load %12 {cache = none, evict = none} : tile<16x64xi32>
  %14 = reshape %13 : tile<1024xi32>
  %15 = arange {start = 0} : tile<1024xi32>
  %16 = splat %1 : tile<1024xptr<i32>>
  %17 = addptr %16, %15 : tile<1024xptr<i32>>
  store %17, %14 {cache = none, evict = none}
}
)";

/// Interleaves two 256-element f16 vectors: out[2i] = a[i], out[2i+1] = b[i].
const char* kJoin = R"(kernel @interleave(%0: ptr<f16> {divisibility = 16}, %1: ptr<f16> {divisibility = 16}, %2: ptr<f16> {divisibility = 16}) {
  %3 = arange {start = 0} : tile<256xi32>
  %4 = splat %0 : tile<256xptr<f16>>
  %5 = addptr %4, %3 : tile<256xptr<f16>>
  %6 = load %5 {cache = none, evict = none} : tile<256xf16>
  %7 = splat %1 : tile<256xptr<f16>>
  %8 = addptr %7, %3 : tile<256xptr<f16>>
  %9 = load %8 {cache = none, evict = none} : tile<256xf16>
  %10 = join %6, %9 : tile<256x2xf16>
  %11 = arange {start = 0} : tile<256xi32>
  %12 = arange {start = 0} : tile<2xi32>
  %13 = expand_dims %11 {axis = 1} : tile<256x1xi32>
  %14 = constant {value = 2} : tile<256x1xi32>
  %15 = mul %13, %14 : tile<256x1xi32>
  %16 = broadcast %15 : tile<256x2xi32>
  %17 = expand_dims %12 {axis = 0} : tile<1x2xi32>
  %18 = broadcast %17 : tile<256x2xi32>
  %19 = add %16, %18 : tile<256x2xi32>
  %20 = splat %2 : tile<256x2xptr<f16>>
  %21 = addptr %20, %19 : tile<256x2xptr<f16>>
  store %21, %10 {cache = none, evict = none}
}
)";

/// De-interleaves 256 pairs of f32: a[i] = x[2i], b[i] = x[2i+1].
const char* kSplit = R"(kernel @deinterleave(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}, %2: ptr<f32> {divisibility = 16}) {
  %3 = arange {start = 0} : tile<256xi32>
  %4 = arange {start = 0} : tile<2xi32>
  %5 = expand_dims %3 {axis = 1} : tile<256x1xi32>
  %6 = constant {value = 2} : tile<256x1xi32>
  %7 = mul %5, %6 : tile<256x1xi32>
  %8 = broadcast %7 : tile<256x2xi32>
  %9 = expand_dims %4 {axis = 0} : tile<1x2xi32>
  %10 = broadcast %9 : tile<256x2xi32>
  %11 = add %8, %10 : tile<256x2xi32>
  %12 = splat %0 : tile<256x2xptr<f32>>
  %13 = addptr %12, %11 : tile<256x2xptr<f32>>
  %14 = load %13 {cache = none, evict = none} : tile<256x2xf32>
  %15, %16 = split %14 : tile<256xf32>, tile<256xf32>
  %17 = arange {start = 0} : tile<256xi32>
  %18 = splat %1 : tile<256xptr<f32>>
  %19 = addptr %18, %17 : tile<256xptr<f32>>
  store %19, %15 {cache = none, evict = none}
  %20 = splat %2 : tile<256xptr<f32>>
  %21 = addptr %20, %17 : tile<256xptr<f32>>
  store %21, %16 {cache = none, evict = none}
}
)";

/// join of two scalars and split of the pair back, added and stored.
const char* kScalarPair = R"(kernel @scalar_pair(%0: ptr<f32>, %1: ptr<f32>) {
  %2 = load %0 {cache = none, evict = none} : f32
  %3 = load %1 {cache = none, evict = none} : f32
  %4 = join %2, %3 : tile<2xf32>
  %5, %6 = split %4 : f32, f32
  %7 = sub %5, %6 : f32
  store %0, %7 {cache = none, evict = none}
}
)";

TEST(ShapeOps, ReshapeInRowMajorOrderMovesNoData) {
  const lowering::GpuKernel kernel = compile_text(kReshapeTo2d);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
}

TEST(ShapeOps, SplitOfAPairOfScalarsGathersItWithShuffles) {
  // The pair lives in lanes 0 and 1; every thread needs both.
  const lowering::GpuKernel kernel = compile_text(kScalarPair);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.idx.b32"), 2) << kernel.ptx;
}

TEST(ShapeOps, TransposeRenamesRegistersWhenItsResultClassIsFree) {
  // The result class holds only transposes and element-wise values: it takes
  // the operand's layout with the dimensions swapped, so no data moves.
  const lowering::GpuKernel kernel = compile_text(kTransposeWithTransposedOffsets);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
}

TEST(ShapeOps, TransposeIntoTheKernelsLayoutGoesThroughSharedMemory) {
  // Offsets built by broadcasts bind the result class to the kernel's 2-D
  // layout: the transpose then moves every element across warps.
  const lowering::GpuKernel kernel = compile_text(kTranspose);
  EXPECT_TRUE(contains(kernel.ptx, ".shared .align 16 .b8 convert_smem[8192]"));
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2) << kernel.ptx;
}

TEST(ShapeOps, JoinKeepsPairsInOneThread) {
  const lowering::GpuKernel kernel = compile_text(kJoin);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
}

TEST(ShapeOps, SplitReadsBothHalvesFromEachThread) {
  const lowering::GpuKernel kernel = compile_text(kSplit);
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.v2.f32")) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
}

class ShapeOpsForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(ShapeOpsForArch, PtxasAcceptsEveryKernel) {
  const struct {
    const char* name;
    const char* text;
  } cases[] = {
      {"transpose", kTranspose}, {"transpose_offsets", kTransposeWithTransposedOffsets},
      {"reshape_to_2d", kReshapeTo2d}, {"reshape_to_1d", kReshapeTo1d},
      {"interleave", kJoin},     {"deinterleave", kSplit},        {"scalar_pair", kScalarPair},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const lowering::GpuKernel kernel = compile_text(c.text, GetParam());
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, ShapeOpsForArch, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace kiln::codegen_test
