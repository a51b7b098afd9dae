// `reduce` through the GPU code generator: registers within a thread, then
// butterfly shuffles over the lanes along the axis, then shared memory and
// barriers over the warps along it; ptxas accepts every variant.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen_support.hpp"
#include "ir_samples.hpp"

namespace kiln::codegen_test {
namespace {

using ir_samples::fill;

/// A `rows` x `cols` tile of `dtype` loaded from %0, reduced along `axis`
/// with `combine` (an op of the two region arguments), stored to %1 through
/// the arange of the kept dimension (which thereby needs the result's layout).
std::string reduce_2d_text(int rows, int cols, int axis, const std::string& dtype, const std::string& combine) {
  return fill(R"(kernel @reduce_2d(%0: ptr<{T}> {divisibility = 16}, %1: ptr<{T}> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<{R}xi32>
  %3 = arange {start = 0} : tile<{C}xi32>
  %4 = expand_dims %2 {axis = 1} : tile<{R}x1xi32>
  %5 = constant {value = {C}} : tile<{R}x1xi32>
  %6 = mul %4, %5 : tile<{R}x1xi32>
  %7 = broadcast %6 : tile<{R}x{C}xi32>
  %8 = expand_dims %3 {axis = 0} : tile<1x{C}xi32>
  %9 = broadcast %8 : tile<{R}x{C}xi32>
  %10 = add %7, %9 : tile<{R}x{C}xi32>
  %11 = splat %0 : tile<{R}x{C}xptr<{T}>>
  %12 = addptr %11, %10 : tile<{R}x{C}xptr<{T}>>
  %13 = load %12 {cache = none, evict = none} : tile<{R}x{C}x{T}>
  %14 = reduce %13 {axis = {A}} : tile<{K}x{T}> {
  ^(%15: {T}, %16: {T}):
    %17 = {OP} %15, %16 : {T}
    yield %17
  }
  %18 = splat %1 : tile<{K}xptr<{T}>>
  %19 = addptr %18, {KEPT} : tile<{K}xptr<{T}>>
  store %19, %14 {cache = none, evict = none}
}
)",
              {{"R", std::to_string(rows)},
               {"C", std::to_string(cols)},
               {"T", dtype},
               {"A", std::to_string(axis)},
               {"K", std::to_string(axis == 1 ? rows : cols)},
               {"KEPT", axis == 1 ? "%2" : "%3"},
               {"OP", combine}});
}

/// A 1-D tile of `size` elements reduced to a scalar stored to %1.
std::string reduce_1d_text(int size, const std::string& dtype, const std::string& combine) {
  return fill(R"(kernel @reduce_1d(%0: ptr<{T}> {divisibility = 16}, %1: ptr<{T}>) {
  %2 = arange {start = 0} : tile<{N}xi32>
  %3 = splat %0 : tile<{N}xptr<{T}>>
  %4 = addptr %3, %2 : tile<{N}xptr<{T}>>
  %5 = load %4 {cache = none, evict = none} : tile<{N}x{T}>
  %6 = reduce %5 {axis = 0} : {T} {
  ^(%7: {T}, %8: {T}):
    %9 = {OP} %7, %8 : {T}
    yield %9
  }
  store %1, %6 {cache = none, evict = none}
}
)",
              {{"N", std::to_string(size)}, {"T", dtype}, {"OP", combine}});
}

/// argmax of 512 floats: a reduce of two tiles (values, indices) whose region
/// is compares and selects, not a single op. The region is commutative, as a
/// reduce's must be: NaN is the largest value and ties go to the lower index.
const char* kArgmax = R"(kernel @argmax(%0: ptr<f32> {divisibility = 16}, %1: ptr<i32>) {
  %2 = arange {start = 0} : tile<512xi32>
  %3 = splat %0 : tile<512xptr<f32>>
  %4 = addptr %3, %2 : tile<512xptr<f32>>
  %5 = load %4 {cache = none, evict = none} : tile<512xf32>
  %6, %7 = reduce %5, %2 {axis = 0} : f32, i32 {
  ^(%8: f32, %9: i32, %10: f32, %11: i32):
    %12 = cmp %8, %8 {pred = ne} : i1
    %13 = cmp %10, %10 {pred = ne} : i1
    %14 = cmp %9, %11 {pred = lt} : i1
    %15 = cmp %8, %10 {pred = gt} : i1
    %16 = cmp %8, %10 {pred = eq} : i1
    %17 = and %16, %14 : i1
    %18 = or %15, %17 : i1
    %19 = not %13 : i1
    %20 = and %19, %18 : i1
    %21 = or %19, %14 : i1
    %22 = and %12, %21 : i1
    %23 = or %22, %20 : i1
    %24 = select %23, %8, %10 : f32
    %25 = select %23, %9, %11 : i32
    yield %24, %25
  }
  store %1, %7 {cache = none, evict = none}
}
)";

TEST(Reduce, RowSumShufflesAcrossLanesOnly) {
  // 64x64 f32 over 4 warps: [1, 4] per thread, lanes [2, 16], warps [4, 1].
  // Each thread keeps 8 rows; the 16 lanes along a row are 4 butterfly steps.
  const lowering::GpuKernel kernel = compile_text(reduce_2d_text(64, 64, 1, "f32", "add"));
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.bfly.b32"), 8 * 4) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  for (int lane_mask : {1, 2, 4, 8})
    EXPECT_TRUE(contains(kernel.llvm_ir, "i32 " + std::to_string(lane_mask) + ", i32 31)"));
  EXPECT_EQ(count(kernel.llvm_ir, "i32 16, i32 31)"), 0) << "lane bit 4 steps along the rows, not the axis";
}

TEST(Reduce, IntegerMaximumUsesIntegerShuffles) {
  const lowering::GpuKernel kernel = compile_text(reduce_2d_text(64, 64, 1, "i32", "maximum"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "@llvm.nvvm.shfl.sync.bfly.i32"));
  EXPECT_TRUE(contains(kernel.ptx, "max.s32"));
}

TEST(Reduce, ColumnSumCrossesLanesAndWarps) {
  // Along dim0: one lane bit and both warp bits.
  const lowering::GpuKernel kernel = compile_text(reduce_2d_text(64, 64, 0, "f32", "add"));
  EXPECT_TRUE(contains(kernel.ptx, "shfl.sync.bfly.b32"));
  EXPECT_TRUE(contains(kernel.ptx, "bar.sync"));
  EXPECT_EQ(kernel.shared_bytes, 1024);  // 64 columns x 4 warps x 4 bytes
  EXPECT_TRUE(contains(kernel.ptx, ".extern .shared .align 16 .b8 kiln_shared[];"));
}

TEST(Reduce, WideRowSpansWarps) {
  // 4x1024 f32: lanes [1, 32] and warps [1, 4] along the row.
  const lowering::GpuKernel kernel = compile_text(reduce_2d_text(4, 1024, 1, "f32", "maximum"));
  EXPECT_TRUE(contains(kernel.ptx, "shfl.sync.bfly.b32"));
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2) << kernel.ptx;
  EXPECT_TRUE(contains(kernel.ptx, "st.shared.f32"));
  // Each thread holds all 4 rows: it reads the 4 warps' partials of a row as one vector.
  EXPECT_EQ(count(kernel.ptx, "ld.shared.v4.f32"), 4) << kernel.ptx;
}

TEST(Reduce, OneDimensionalSumToScalar) {
  // 1024 f32 over 128 threads: 8 registers, 5 lane steps, 4 warps in shared memory.
  const lowering::GpuKernel kernel = compile_text(reduce_1d_text(1024, "f32", "add"));
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.bfly.b32"), 5) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2) << kernel.ptx;
  EXPECT_EQ(kernel.shared_bytes, 16);  // 4 warps x 4 bytes
}

TEST(Reduce, OneWarpNeedsNoSharedMemory) {
  const lowering::GpuKernel kernel = compile_text(reduce_1d_text(256, "f32", "add"), "sm_90a", 1);
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.bfly.b32"), 5) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
}

TEST(Reduce, ReplicatedElementsAreCombinedOnce) {
  // 64 elements over 128 threads: warp bit 1 holds copies, so only warp bit 0
  // goes through shared memory (2 slots), and every lane bit is a shuffle.
  const lowering::GpuKernel wrapped = compile_text(reduce_1d_text(64, "f32", "add"));
  EXPECT_EQ(count(wrapped.ptx, "shfl.sync.bfly.b32"), 5) << wrapped.ptx;
  EXPECT_EQ(wrapped.shared_bytes, 8);
  // 16 elements: lane bit 4 and both warp bits hold copies.
  const lowering::GpuKernel small = compile_text(reduce_1d_text(16, "f32", "add"));
  EXPECT_EQ(count(small.ptx, "shfl.sync.bfly.b32"), 4) << small.ptx;
  EXPECT_EQ(count(small.ptx, "bar.sync"), 0) << small.ptx;
  EXPECT_EQ(count(small.llvm_ir, "i32 16, i32 31)"), 0) << small.llvm_ir;
}

class ReduceForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(ReduceForArch, PtxasAcceptsEveryVariant) {
  const struct {
    const char* name;
    std::string text;
  } cases[] = {
      {"row_sum_f32", reduce_2d_text(64, 64, 1, "f32", "add")},
      {"row_max_i32", reduce_2d_text(64, 64, 1, "i32", "maximum")},
      {"column_sum_f32", reduce_2d_text(64, 64, 0, "f32", "add")},
      {"wide_row_max_f32", reduce_2d_text(4, 1024, 1, "f32", "maximum")},
      {"row_product_f32", reduce_2d_text(32, 128, 1, "f32", "mul")},
      {"row_min_u32", reduce_2d_text(128, 32, 1, "u32", "minimum")},
      {"sum_f32", reduce_1d_text(1024, "f32", "add")},
      {"sum_f16", reduce_1d_text(1024, "f16", "add")},
      {"min_i64", reduce_1d_text(512, "i64", "minimum")},
      {"product_f64", reduce_1d_text(128, "f64", "mul")},
      {"argmax", kArgmax},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const lowering::GpuKernel kernel = compile_text(c.text, GetParam());
    EXPECT_TRUE(contains(kernel.ptx, "shfl.sync.bfly.b32"));
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, ReduceForArch, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace kiln::codegen_test
