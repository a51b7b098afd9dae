// `scan` through the GPU code generator: the axis bits held by registers are
// scanned in order within the thread, those held by lanes with butterfly
// shuffles, those held by warps through shared memory; ptxas accepts every
// variant (forward and reverse, both axes, several operands, every dtype).
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"
#include "scan_samples.hpp"

namespace kiln::codegen_test {
namespace {

/// 16-byte aligned pointers, as every kernel here has but the one that tests a conversion.
constexpr const char* kAligned = " {divisibility = 16}";

/// A 1-D tile of `size` elements of `dtype` loaded from %0, scanned with
/// `combine`, stored to %1.
std::string scan_1d_text(int size, const std::string& dtype, const std::string& combine, bool reverse) {
  return ir_samples::scan_1d_text(size, dtype, combine, reverse, kAligned);
}

/// A `rows` x `cols` f32 tile scanned along `axis`, stored where it was loaded from (in %1).
std::string scan_2d_text(int rows, int cols, int axis, bool reverse) {
  return ir_samples::scan_2d_text(rows, cols, "f32", axis, reverse, kAligned);
}

TEST(Scan, OneDimensionalCrossesRegistersLanesAndWarps) {
  // 1024 f32 over 4 warps: 8 registers (4 contiguous, then a register bit
  // above the lanes and warps): 3 in-thread steps, 5 lane steps, 2 warp steps.
  const lowering::GpuKernel kernel = compile_text(scan_1d_text(1024, "f32", "add", false));
  EXPECT_TRUE(contains(kernel.llvm_ir, "@llvm.nvvm.shfl.sync.bfly.f32"));
  for (int lane_mask : {1, 2, 4, 8, 16})
    EXPECT_TRUE(contains(kernel.llvm_ir, "i32 " + std::to_string(lane_mask) + ", i32 31)")) << lane_mask;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 4) << "two warp steps, two barriers each\n" << kernel.ptx;
  // Each warp step stores every thread's two distinct totals (4 bytes each);
  // both steps reuse the same scratch.
  EXPECT_EQ(kernel.shared_bytes, 128 * 2 * 4);
}

TEST(Scan, OneWarpNeedsNoSharedMemory) {
  // 256 f32 on one warp: [4] per thread, then a register bit above the 32
  // lanes: two blocks per thread, each shuffles its total at 5 lane steps.
  const lowering::GpuKernel kernel = compile_text(scan_1d_text(256, "f32", "add", false), "sm_90a", 1);
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.bfly.b32"), 2 * 5) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
}

TEST(Scan, RowScanStaysInTheWarp) {
  // 64x64 f32: [1, 4] per thread, lanes [2, 16], warps [4, 1]: the row axis
  // has 2 register bits and 4 lane bits, no warp bit.
  const lowering::GpuKernel kernel = compile_text(scan_2d_text(64, 64, 1, false));
  EXPECT_TRUE(contains(kernel.ptx, "shfl.sync.bfly.b32"));
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.llvm_ir, "i32 16, i32 31)"), 0) << "lane bit 4 steps along the rows, not the axis";
}

TEST(Scan, ColumnScanCrossesWarps) {
  const lowering::GpuKernel kernel = compile_text(scan_2d_text(64, 64, 0, true));
  EXPECT_TRUE(contains(kernel.ptx, "shfl.sync.bfly.b32"));
  EXPECT_TRUE(contains(kernel.ptx, "bar.sync"));
  EXPECT_TRUE(contains(kernel.ptx, "st.shared"));
}

TEST(Scan, ReverseComputesTheSameNumberOfSteps) {
  const lowering::GpuKernel forward = compile_text(scan_1d_text(1024, "i32", "add", false));
  const lowering::GpuKernel reverse = compile_text(scan_1d_text(1024, "i32", "add", true));
  EXPECT_EQ(count(forward.ptx, "shfl.sync.bfly.b32"), count(reverse.ptx, "shfl.sync.bfly.b32"));
  EXPECT_NE(forward.ptx, reverse.ptx);
}

TEST(Scan, OperandInAnotherLayoutIsConverted) {
  // The load of %0 is 16-byte vectorised, the scan's result class is not
  // (stored through an unaligned pointer): the operand is converted first.
  const std::string text = R"(kernel @scan_convert(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32>) {
  %2 = arange {start = 0} : tile<512xi32>
  %3 = splat %0 : tile<512xptr<f32>>
  %4 = addptr %3, %2 : tile<512xptr<f32>>
  %5 = load %4 {cache = none, evict = none} : tile<512xf32>
  %6 = scan %5 {axis = 0, reverse = 0} : tile<512xf32> {
  ^(%7: f32, %8: f32):
    %9 = add %7, %8 : f32
    yield %9
  }
  %10 = splat %1 : tile<512xptr<f32>>
  %11 = arange {start = 0} : tile<512xi32>
  %12 = addptr %10, %11 : tile<512xptr<f32>>
  store %12, %6 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.v4.f32")) << kernel.ptx;
  EXPECT_TRUE(contains(kernel.ptx, "shfl.sync.bfly.b32"));
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", "scan_convert");
}

class ScanForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(ScanForArch, PtxasAcceptsEveryVariant) {
  const struct {
    const char* name;
    std::string text;
  } cases[] = {
      {"cumsum_f32", scan_1d_text(1024, "f32", "add", false)},
      {"reverse_cumsum_f32", scan_1d_text(1024, "f32", "add", true)},
      {"cumsum_f16", scan_1d_text(512, "f16", "add", false)},
      {"cumsum_bf16", scan_1d_text(512, "bf16", "add", true)},
      {"cummax_i64", scan_1d_text(256, "i64", "maximum", false)},
      {"cumprod_f64", scan_1d_text(128, "f64", "mul", true)},
      {"cumor_i8", scan_1d_text(256, "i8", "or", false)},
      {"small_replicated_f32", scan_1d_text(16, "f32", "add", false)},
      {"row_cumsum", scan_2d_text(64, 64, 1, false)},
      {"column_cumsum", scan_2d_text(64, 64, 0, false)},
      {"reverse_column_cumsum", scan_2d_text(32, 128, 0, true)},
      {"wide_row_cumsum", scan_2d_text(4, 1024, 1, false)},
      {"running_argmax", ir_samples::running_argmax_text("f32", kAligned)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(c.text, GetParam()), GetParam(), c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, ScanForArch, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace kiln::codegen_test
