// multiple_of and max_contiguous in the GPU code generator: a row stride
// promised to be a multiple of 8 lets the loads and stores of
// `row * stride + arange` be 16-byte vectors, and so do gathered offsets
// promised to come in aligned runs of 4; the GPU code trusts the promises,
// and the code for a target that checks hints (the emu device) calls
// kiln_hint_fault or kiln_contiguity_fault where one fails.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"
#include "kiln/kiln.hpp"

namespace kiln::codegen_test {
namespace {

/// out[row, :512] = x[row, :512], rows `%2` elements apart, the stride hinted
/// to be a multiple of `divisor` (1 promises nothing).
std::string copy_rows(int divisor) {
  return R"(kernel @copy_rows(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}, %2: i32) {
  %3 = program_id {axis = 0} : i32
  %4 = multiple_of %2 {value = )" +
         std::to_string(divisor) + R"(} : i32
  %5 = mul %3, %4 : i32
  %6 = arange {start = 0} : tile<512xi32>
  %7 = splat %5 : tile<512xi32>
  %8 = add %7, %6 : tile<512xi32>
  %9 = splat %0 : tile<512xptr<f32>>
  %10 = addptr %9, %8 : tile<512xptr<f32>>
  %11 = load %10 {cache = none, evict = none} : tile<512xf32>
  %12 = splat %1 : tile<512xptr<f32>>
  %13 = addptr %12, %8 : tile<512xptr<f32>>
  store %13, %11 {cache = none, evict = none}
}
)";
}

TEST(Hints, MultipleOfStrideVectorisesTheRowAccesses) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    // 512 floats over 128 threads: 4 each, one element at a time without the hint.
    const lowering::GpuKernel plain = compile_text(copy_rows(1), arch);
    EXPECT_EQ(count(plain.ptx, "ld.global.f32"), 4) << plain.ptx;
    EXPECT_EQ(count(plain.ptx, "ld.global.v"), 0) << plain.ptx;
    EXPECT_EQ(count(plain.ptx, "st.global.f32"), 4) << plain.ptx;
    // A multiple of 8 floats keeps each thread's 4 in one aligned 16-byte vector.
    const lowering::GpuKernel hinted = compile_text(copy_rows(8), arch);
    EXPECT_EQ(count(hinted.ptx, "ld.global.v4.f32"), 1) << hinted.ptx;
    EXPECT_EQ(count(hinted.ptx, "ld.global.f32"), 0) << hinted.ptx;
    EXPECT_EQ(count(hinted.ptx, "st.global.v4.f32"), 1) << hinted.ptx;
    // A multiple of 2 floats: 8-byte alignment, pairs.
    const lowering::GpuKernel pairs = compile_text(copy_rows(2), arch);
    EXPECT_EQ(count(pairs.ptx, "ld.global.v2.f32"), 2) << pairs.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(hinted, arch, "copy_rows");
  }
}

/// out[i] = x[at[i]], the gathered offsets promised to come in runs of
/// `run` consecutive integers, each starting at a multiple of `run` (1
/// promises nothing).
std::string gather_runs(int run) {
  const std::string hint = std::to_string(run);
  return R"(kernel @gather_runs(%0: ptr<f32> {divisibility = 16}, %1: ptr<i32> {divisibility = 16}, %2: ptr<f32> {divisibility = 16}) {
  %3 = arange {start = 0} : tile<512xi32>
  %4 = splat %1 : tile<512xptr<i32>>
  %5 = addptr %4, %3 : tile<512xptr<i32>>
  %6 = load %5 {cache = none, evict = none} : tile<512xi32>
  %7 = max_contiguous %6 {value = )" +
         hint + R"(} : tile<512xi32>
  %8 = multiple_of %7 {value = )" +
         hint + ", group = " + hint + R"(} : tile<512xi32>
  %9 = splat %0 : tile<512xptr<f32>>
  %10 = addptr %9, %8 : tile<512xptr<f32>>
  %11 = load %10 {cache = none, evict = none} : tile<512xf32>
  %12 = splat %2 : tile<512xptr<f32>>
  %13 = addptr %12, %3 : tile<512xptr<f32>>
  store %13, %11 {cache = none, evict = none}
}
)";
}

TEST(Hints, MaxContiguousRunsMakeAGatherOneVectorLoad) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    // 512 gathered floats over 128 threads: 4 each, one at a time without the hints.
    const lowering::GpuKernel plain = compile_text(gather_runs(1), arch);
    EXPECT_EQ(count(plain.ptx, "ld.global.f32"), 4) << plain.ptx;
    EXPECT_EQ(count(plain.ptx, "ld.global.v4.f32"), 0) << plain.ptx;
    // Each thread's 4 offsets are one run from a multiple of 4: one 16-byte vector.
    const lowering::GpuKernel hinted = compile_text(gather_runs(4), arch);
    EXPECT_EQ(count(hinted.ptx, "ld.global.v4.f32"), 1) << hinted.ptx;
    EXPECT_EQ(count(hinted.ptx, "ld.global.f32"), 0) << hinted.ptx;
    // Runs of 2: pairs.
    const lowering::GpuKernel pairs = compile_text(gather_runs(2), arch);
    EXPECT_EQ(count(pairs.ptx, "ld.global.v2.f32"), 2) << pairs.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(hinted, arch, "gather_runs");
  }
}

TEST(Hints, MaxContiguousIsCheckedThroughSharedMemoryWhereHintsAreChecked) {
  const lowering::GpuKernel gpu = compile_text(gather_runs(4));
  EXPECT_EQ(count(gpu.ptx, lowering::kContiguityFaultFunction), 0);
  EXPECT_EQ(count(gpu.ptx, "bar.sync"), 0) << gpu.ptx;
  std::unique_ptr<ir::Function> fn = ir::parse_function(gather_runs(4));
  const lowering::GpuKernel checked = lowering::compile_for_gpu(
      *fn, lowering::GpuTarget{.arch = "sm_90a", .num_warps = 4, .check_hints = true}, {.stop_after = "codegen"});
  EXPECT_TRUE(contains(checked.llvm_ir, "max_contiguous(4) does not hold")) << checked.llvm_ir;
  EXPECT_TRUE(contains(checked.llvm_ir, "call void @kiln_contiguity_fault(ptr ")) << checked.llvm_ir;
  EXPECT_TRUE(contains(checked.llvm_ir, "@llvm.nvvm.barrier0")) << checked.llvm_ir;
  EXPECT_TRUE(contains(checked.llvm_ir, "multiple_of(4) does not hold")) << checked.llvm_ir;
}

namespace kl = kiln;
namespace kl = kiln;

/// Chapter 17's copy_rows, its row length `n` promised a multiple of 4 when HINTED.
template <bool HINTED>
void copy_rows_of(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * 32 + kl::arange<32>());
  auto cols = kl::expand_dims<0>(kl::arange<64>());
  kl::i32 length = n;
  if constexpr (HINTED) length = kl::multiple_of<4>(n);
  auto mask = (rows < m) & (cols < length);
  kl::store(out + rows * length + cols, kl::load(x + rows * length + cols, mask), mask);
}

TEST(Hints, MultipleOfRowLengthVectorisesATracedKernelOfSixtyColumns) {
  // Aligned buffers, m and n = 60 not divisible by 16: nothing known of n.
  const auto facts = launch_facts("aa--");
  const lowering::GpuKernel plain =
      lowering::compile_for_gpu(kl::compile<copy_rows_of<false>>().program().specialized(facts)->optimized());
  EXPECT_EQ(count(plain.ptx, "ld.global.v"), 0) << plain.ptx;
  EXPECT_EQ(count(plain.ptx, "ld.global.f32"), 16) << plain.ptx;
  // n a multiple of 4: rows start 16-byte aligned and `cols < n` flips only
  // at multiples of 4, so each run of 4 columns is one vector.
  const lowering::GpuKernel hinted =
      lowering::compile_for_gpu(kl::compile<copy_rows_of<true>>().program().specialized(facts)->optimized());
  EXPECT_EQ(count(hinted.ptx, "ld.global.v4.f32"), 4) << hinted.ptx;
  EXPECT_EQ(count(hinted.ptx, "st.global.v4.f32"), 4) << hinted.ptx;
}

TEST(Hints, OnlyATargetThatChecksHintsChecksThem) {
  const lowering::GpuKernel gpu = compile_text(copy_rows(8));
  EXPECT_EQ(count(gpu.llvm_ir, lowering::kHintFaultFunction), 0) << gpu.llvm_ir;
  EXPECT_EQ(count(gpu.ptx, lowering::kHintFaultFunction), 0);
  std::unique_ptr<ir::Function> fn = ir::parse_function(copy_rows(8));
  const lowering::GpuKernel checked = lowering::compile_for_gpu(
      *fn, lowering::GpuTarget{.arch = "sm_90a", .num_warps = 4, .check_hints = true}, {.stop_after = "codegen"});
  EXPECT_TRUE(contains(checked.llvm_ir, "multiple_of(8) does not hold"));
  EXPECT_TRUE(contains(checked.llvm_ir, "call void @kiln_hint_fault(ptr "));
}

}  // namespace
}  // namespace kiln::codegen_test
