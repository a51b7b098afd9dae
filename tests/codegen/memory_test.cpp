// Loads and stores through the GPU code generator: `other` for masked-off
// elements, per-element guards when the mask varies inside a vector, scalar
// accesses, vectors down the columns of a tile read transposed, and i1
// tiles stored as bytes.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"

namespace kiln::codegen_test {
namespace {

TEST(Memory, MaskVaryingInsideAVectorGuardsEachElement) {
  // Aligned pointers but n unknown: the mask may change at any element, so
  // each of a thread's 8 elements gets its own guard and scalar access.
  const lowering::GpuKernel kernel = compile_text(vector_add_text(" {divisibility = 16}", ""));
  EXPECT_EQ(count(kernel.ptx, ".v4"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "ld.global.f32"), 16) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.f32"), 8) << kernel.ptx;
}

TEST(Memory, ColumnMajorReadsAreScalar) {
  // out[r, c] = x[c, r]: the read addresses run along dimension 0 and the
  // store's along dimension 1, in one class of values; the class keeps the
  // kernel's layout (dimension 1 fastest), so only the row-major store moves
  // vectors.
  const std::string text = R"(kernel @transpose(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = arange {start = 0} : tile<64xi32>
  %4 = expand_dims %2 {axis = 1} : tile<64x1xi32>
  %5 = expand_dims %3 {axis = 0} : tile<1x64xi32>
  %6 = constant {value = 64} : tile<1x64xi32>
  %7 = mul %5, %6 : tile<1x64xi32>
  %8 = broadcast %4 : tile<64x64xi32>
  %9 = broadcast %7 : tile<64x64xi32>
  %10 = add %8, %9 : tile<64x64xi32>
  %11 = splat %0 : tile<64x64xptr<f32>>
  %12 = addptr %11, %10 : tile<64x64xptr<f32>>
  %13 = load %12 {cache = none, evict = none} : tile<64x64xf32>
  %14 = constant {value = 64} : tile<64x1xi32>
  %15 = mul %4, %14 : tile<64x1xi32>
  %16 = broadcast %15 : tile<64x64xi32>
  %17 = broadcast %5 : tile<64x64xi32>
  %18 = add %16, %17 : tile<64x64xi32>
  %19 = splat %1 : tile<64x64xptr<f32>>
  %20 = addptr %19, %18 : tile<64x64xptr<f32>>
  store %20, %13 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_EQ(count(kernel.ptx, "ld.global.f32"), 32) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "ld.global.v"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 8) << kernel.ptx;
}

TEST(Memory, ColumnReadsWithoutARowAccessLoadVectors) {
  // sums[c] = sum over r of x[r + 64 c]: the read addresses run along
  // dimension 0 and no access of the tile's class runs along dimension 1, so
  // the class takes the blocked layout with dimension 0 fastest and every
  // thread loads four 4-float vectors down its columns.
  const std::string text = R"(kernel @column_sums(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = expand_dims %2 {axis = 1} : tile<64x1xi32>
  %4 = expand_dims %2 {axis = 0} : tile<1x64xi32>
  %5 = constant {value = 64} : tile<1x64xi32>
  %6 = mul %4, %5 : tile<1x64xi32>
  %7 = broadcast %3 : tile<64x64xi32>
  %8 = broadcast %6 : tile<64x64xi32>
  %9 = add %7, %8 : tile<64x64xi32>
  %10 = splat %0 : tile<64x64xptr<f32>>
  %11 = addptr %10, %9 : tile<64x64xptr<f32>>
  %12 = load %11 {cache = none, evict = none} : tile<64x64xf32>
  %13 = reduce %12 {axis = 0} : tile<64xf32> {
  ^(%14: f32, %15: f32):
    %16 = add %14, %15 : f32
    yield %16
  }
  %17 = splat %1 : tile<64xptr<f32>>
  %18 = addptr %17, %2 : tile<64xptr<f32>>
  store %18, %13 {cache = none, evict = none}
}
)";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(text, arch);
    EXPECT_EQ(count(kernel.ptx, "ld.global.v4.f32"), 8) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "ld.global.f32"), 0) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "column_sums");
  }
}

TEST(Memory, OtherFillsMaskedOffVectors) {
  const std::string text = R"(kernel @fill(%0: ptr<f32> {divisibility = 16}, %1: i32 {divisibility = 16}) {
  %2 = arange {start = 0} : tile<512xi32>
  %3 = splat %1 : tile<512xi32>
  %4 = cmp %2, %3 {pred = lt} : tile<512xi1>
  %5 = splat %0 : tile<512xptr<f32>>
  %6 = addptr %5, %2 : tile<512xptr<f32>>
  %7 = constant {value = 7.0} : tile<512xf32>
  %8 = load %6, %4, %7 {cache = none, evict = none} : tile<512xf32>
  %9 = add %8, %8 : tile<512xf32>
  store %6, %9 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_TRUE(contains(kernel.llvm_ir, "phi <4 x float> [ %"));
  EXPECT_TRUE(
      contains(kernel.llvm_ir, "<float 7.000000e+00, float 7.000000e+00, float 7.000000e+00, float 7.000000e+00>"));
  EXPECT_EQ(count(kernel.ptx, "ld.global.v4.f32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 1) << kernel.ptx;
}

TEST(Memory, ScalarAccesses) {
  const std::string text = R"(kernel @bump(%0: ptr<i64>, %1: i64) {
  %2 = load %0 {cache = none, evict = none} : i64
  %3 = add %2, %1 : i64
  store %0, %3 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text, "sm_80");
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.u64"));
  EXPECT_TRUE(contains(kernel.ptx, "st.global.u64"));
  EXPECT_TRUE(contains(kernel.ptx, ".param .u64 bump_param_1"));
}

TEST(Memory, BooleanTilesAreBytesInMemory) {
  const std::string text = R"(kernel @flags(%0: ptr<i1> {divisibility = 16}, %1: ptr<i1> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<2048xi32>
  %3 = splat %0 : tile<2048xptr<i1>>
  %4 = addptr %3, %2 : tile<2048xptr<i1>>
  %5 = load %4 {cache = none, evict = none} : tile<2048xi1>
  %6 = not %5 : tile<2048xi1>
  %7 = splat %1 : tile<2048xptr<i1>>
  %8 = addptr %7, %2 : tile<2048xptr<i1>>
  store %8, %6 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  // 16 flags per thread, 16 bytes: one vector of bytes each way.
  EXPECT_TRUE(contains(kernel.llvm_ir, "load <16 x i8>"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "store <16 x i8>"));
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.v4.u32") || contains(kernel.ptx, "ld.global.v4.b32"));
}

TEST(Memory, ReadOnlyKernelArgumentsAreNoalias) {
  // Nothing is written, so no argument can see another's writes.
  const std::string text = R"(kernel @reads(%0: ptr<f32>, %1: ptr<f32>) {
  %2 = load %0 {cache = none, evict = none} : f32
  %3 = load %1 {cache = none, evict = none} : f32
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_EQ(count(kernel.llvm_ir, "ptr addrspace(1) noalias"), 2) << kernel.llvm_ir;
}

}  // namespace
}  // namespace kiln::codegen_test
