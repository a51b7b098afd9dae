// A program's scalars are uniform over its threads (docs/architecture.md):
// a scalar load through memory the kernel writes is done by thread 0 and
// shared, other scalar loads by every thread; a scalar atomic's result is
// delivered only when something reads it, and barriers around it follow its
// memory order; `barrier` is one bar.sync. Checked on the PTX, which ptxas
// accepts.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"
#include "ir_samples.hpp"

namespace kiln::codegen_test {
namespace {

using ir_samples::fill;

/// Loads a scalar from %0 and stores it plus 1 to {OUT}: through %0 itself
/// (the kernel writes what it loads) or through %1.
std::string scalar_load_text(const std::string& out) {
  return fill(R"(kernel @scalar_load(%0: ptr<i32>, %1: ptr<i32>) {
  %2 = load %0 {cache = none, evict = none} : i32
  %3 = constant {value = 1} : i32
  %4 = add %2, %3 : i32
  store {OUT}, %4 {cache = none, evict = none}
}
)",
              {{"OUT", out}});
}

/// A scalar exchange on %0 in `order` whose old value is unused.
std::string unused_exchange_text(const std::string& order) {
  return fill(R"(kernel @unused_exchange(%0: ptr<i32>, %1: i32) {
  %2 = atomic_rmw %0, %1 {kind = xchg, order = {O}, scope = gpu} : i32
}
)",
              {{"O", order}});
}

TEST(UniformScalars, ALoadOfWrittenMemoryIsDoneOnceAndShared) {
  const lowering::GpuKernel kernel = compile_text(scalar_load_text("%0"));
  EXPECT_EQ(count(kernel.ptx, "ld.global"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.shared.u32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "ld.shared.u32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2) << kernel.ptx;
  EXPECT_EQ(kernel.shared_bytes, 4);
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(scalar_load_text("%0"), arch), arch, "uniform_scalar_load");
}

TEST(UniformScalars, ALoadOfMemoryNoOneWritesIsDoneByEveryThread) {
  const lowering::GpuKernel kernel = compile_text(scalar_load_text("%1"));
  EXPECT_EQ(count(kernel.ptx, "ld.global"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
}

TEST(UniformScalars, AnUnusedRelaxedAtomicNeedsNoBarrier) {
  const lowering::GpuKernel kernel = compile_text(unused_exchange_text("relaxed"));
  EXPECT_EQ(count(kernel.ptx, "atom.global.exch.b32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
}

TEST(UniformScalars, AnUnusedAcquireReleaseAtomicHasABarrierOnEachSide) {
  const lowering::GpuKernel kernel = compile_text(unused_exchange_text("acq_rel"));
  EXPECT_EQ(count(kernel.ptx, "atom.global.exch.b32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2) << kernel.ptx;
  const std::size_t first = kernel.ptx.find("bar.sync"), atom = kernel.ptx.find("atom.global.exch.b32");
  EXPECT_LT(first, atom) << kernel.ptx;
  EXPECT_GT(kernel.ptx.rfind("bar.sync"), atom) << kernel.ptx;
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(unused_exchange_text("acq_rel"), arch), arch, "unused_exchange");
}

TEST(UniformScalars, TheBarrierOpIsOneBarSync) {
  const lowering::GpuKernel kernel = compile_text(R"(kernel @reverse(%0: ptr<f32>) {
  %1 = arange {start = 0} : tile<128xi32>
  %2 = constant {value = 127} : tile<128xi32>
  %3 = sub %2, %1 : tile<128xi32>
  %4 = splat %0 : tile<128xptr<f32>>
  %5 = addptr %4, %3 : tile<128xptr<f32>>
  %6 = load %5 {cache = none, evict = none} : tile<128xf32>
  barrier
  %7 = addptr %4, %1 : tile<128xptr<f32>>
  store %7, %6 {cache = none, evict = none}
}
)");
  EXPECT_EQ(count(kernel.llvm_ir, "call void @llvm.nvvm.barrier0()"), 1) << kernel.llvm_ir;
  const std::size_t load = kernel.ptx.find("ld.global"), barrier = kernel.ptx.find("bar.sync");
  EXPECT_LT(load, barrier) << kernel.ptx;
  EXPECT_LT(barrier, kernel.ptx.find("st.global")) << kernel.ptx;
}

}  // namespace
}  // namespace kiln::codegen_test
