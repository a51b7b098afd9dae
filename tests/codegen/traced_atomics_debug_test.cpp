// Atomics, prints and asserts written in the DSL, traced and optimized, then
// lowered to PTX: the IR the front end really produces reaches the GPU code
// generator (masks broadcast from scalars, literals materialized).
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"
#include "kiln/kiln.hpp"

namespace kiln::codegen_test {
namespace {

namespace kl = kiln;

/// Counts the values of `data` per bin, checks them and prints the count of
/// the first bins, once per program.
template <int BLOCK>
void histogram(kl::Ptr<kl::i32> data, kl::Ptr<kl::i32> bins, kl::Ptr<kl::f32> total, kl::i32 n) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  auto bin = kl::load(data + offs, mask);
  kl::device_assert(bin >= 0, "bins are non-negative");
  kl::atomic_add(bins + bin, 1, mask, {.order = kl::MemoryOrder::relaxed});
  auto previous = kl::atomic_add(total, 1.0f, {.order = kl::MemoryOrder::acq_rel, .scope = kl::Scope::gpu});
  kl::device_print("first bins:", previous, kl::load(bins + kl::arange<4>()));
}

/// Adds 1 to *counter once per program with a compare-and-swap loop: every
/// thread must see the scalar results, or the threads would leave the loop
/// at different iterations.
template <class C>
void cas_increment(kl::Ptr<kl::Scalar<C>> counter) {
  kl::Var current = kl::atomic_add(counter, 0);
  kl::Var seen = kl::atomic_cas(counter, current, current + 1);
  kl::while_([&] { return seen != current; },
             [&] {
               current = seen;
               seen = kl::atomic_cas(counter, current, current + 1);
             });
}

TEST(TracedAtomicsAndDebug, CompareExchangeLoopDeliversEachResultToEveryThread) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel =
        lowering::compile_for_gpu(kl::compile<cas_increment<kl::half>>().ir(), {.arch = arch});
    // The first add and two compare-exchanges, each behind a barrier (acq_rel
    // releases the program's accesses) and broadcast from thread 0 through
    // shared memory between two barriers, one half each in one region.
    EXPECT_EQ(count(kernel.llvm_ir, "call void @llvm.nvvm.barrier0()"), 3 * 3) << kernel.llvm_ir;
    EXPECT_EQ(kernel.shared_bytes, 2);
    EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw fadd ptr addrspace(1)"), 1) << kernel.llvm_ir;
    EXPECT_EQ(count(kernel.llvm_ir, "cmpxchg ptr addrspace(1)"), 2) << kernel.llvm_ir;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "traced_cas_increment_f16");
  }
}

TEST(TracedAtomicsAndDebug, HistogramLowersForBothArchitectures) {
  const ir::Function& traced = kl::compile<histogram<256>>().ir();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = lowering::compile_for_gpu(traced, {.arch = arch});
    EXPECT_TRUE(contains(kernel.ptx, "atom.global.add.u32"));
    // The scalar float add: one atomic per program, by lane 0 of warp 0,
    // between two fences for acq_rel.
    EXPECT_EQ(count(kernel.ptx, "atom.global.add.f32"), 1) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "membar.gl;"), 2) << kernel.ptx;
    EXPECT_TRUE(contains(kernel.llvm_ir, R"(c"pid (%d, %d, %d) idx (%d) first bins: %.9g %d\0A\00")"));
    EXPECT_TRUE(contains(kernel.llvm_ir, "bins are non-negative"));
    EXPECT_TRUE(contains(kernel.ptx, "vprintf"));
    EXPECT_TRUE(contains(kernel.ptx, "trap;"));
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "traced_histogram");
  }
}

}  // namespace
}  // namespace kiln::codegen_test
