// Stores of values whose layout holds elements several times: each element is
// written once, by its acting copy. Registers repeating others are skipped at
// compile time (fewer stores in the LLVM IR and PTX), and copies in other
// lanes or warps are turned away by a guard on the lane and warp joined to
// the mask, with vector runs kept whole. Stores without copies get no guard.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"

namespace kiln::codegen_test {
namespace {

/// x[r, c] over a 64x64 tile (kLoad64x64) sets the 2-D layout: [1, 4]
/// registers, [2, 16] lanes and [4, 1] warps. Then row 0 of y gets a masked
/// load-add-store (y[c] += y[c] where c < n): a 1x64 tile whose layout repeats
/// its row over lane bit 4 and both warp bits, 8 copies of each element.
const std::string kRowUpdate =
    std::string(
        "kernel @row_update(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}, %2: i32 "
        "{divisibility = 16}) {\n") +
    kLoad64x64 + R"(  %15 = add %14, %14 : tile<64x64xf32>
  store %13, %15 {cache = none, evict = none}
  %16 = splat %1 : tile<1x64xptr<f32>>
  %17 = addptr %16, %9 : tile<1x64xptr<f32>>
  %18 = splat %2 : tile<1x64xi32>
  %19 = cmp %9, %18 {pred = lt} : tile<1x64xi1>
  %20 = load %17, %19 {cache = none, evict = none} : tile<1x64xf32>
  %21 = add %20, %20 : tile<1x64xf32>
  store %17, %21, %19 {cache = none, evict = none}
}
)";

TEST(ReplicatedStore, RowRepeatedOverLanesAndWarpsIsStoredByTheActingCopiesOnly) {
  const lowering::GpuKernel kernel = compile_text(kRowUpdate);
  // Lane bit 4 and warp bits 0 and 1 repeat the row: only lanes 0-15 of warp 0 store it.
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %lane, 16"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %warp, 3"));
  // One branch per vector run: the guard joins the mask, the row stays one 16-byte store per thread.
  EXPECT_EQ(count(kernel.llvm_ir, "store <4 x float>"), 9) << "8 runs of the 64x64 tile, 1 of the row\n"
                                                           << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "store.then:"), 1) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 9) << kernel.ptx;
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(kRowUpdate, arch), arch, "replicated_row_store");
}

TEST(ReplicatedStore, RegistersRepeatingInEveryThreadAreNotStored) {
  // As in AtomicDuplicates: the 16x2 tile of wrapped_16x2_text holds 8
  // registers per thread of which 4 are distinct (2 runs of 2 columns), and
  // lanes 0-15 of each half-warp hold the same ones.
  const std::string text = wrapped_16x2_text(
      R"(  %y = load %wrapped_pointers {cache = none, evict = none} : tile<16x2xf32>
  %doubled = add %y, %y : tile<16x2xf32>
  store %wrapped_pointers, %doubled {cache = none, evict = none}
)");
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_EQ(count(kernel.llvm_ir, "store <2 x float>"), 2) << "registers 2, 3, 6, 7 repeat 0, 1, 4, 5\n"
                                                           << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "st.global.v2.f32"), 2) << kernel.ptx;
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %lane, 15"));
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", "replicated_register_store");
}

TEST(ReplicatedStore, ScalarIsStoredByThreadZeroOnly) {
  const std::string text = R"(kernel @bump(%0: ptr<i64>, %1: i64) {
  %2 = load %0 {cache = none, evict = none} : i64
  %3 = add %2, %1 : i64
  store %0, %3 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %lane, 31"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %warp, 3"));
  EXPECT_EQ(count(kernel.llvm_ir, "store.then:"), 1) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "st.global.u64"), 1) << kernel.ptx;
}

TEST(ReplicatedStore, StoresWithoutCopiesHaveNoGuard) {
  const lowering::GpuKernel kernel = compile_text(specialized_vector_add());
  EXPECT_EQ(count(kernel.llvm_ir, "and i32 %lane, "), 0) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "and i32 %warp, "), 0) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 2) << kernel.ptx;
}

}  // namespace
}  // namespace kiln::codegen_test
