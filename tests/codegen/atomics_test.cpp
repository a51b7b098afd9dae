// atomic_rmw and atomic_cas through the GPU code generator: the PTX
// instruction of each kind and dtype, the fences of each memory order and
// scope, one atomic per element where a layout duplicates elements (the
// guard is read off the LLVM IR), the old value delivered to every copy, and
// ptxas acceptance for sm_80 and sm_90a.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"
#include "ir_samples.hpp"

namespace kiln::codegen_test {
namespace {

using ir_samples::fill;

/// A masked atomic_rmw of `kind` on `size` elements of %0 (`dtype`) with the
/// values loaded from %1; the old values are stored to %2.
std::string rmw_text(const std::string& kind, const std::string& dtype, int size, const std::string& order = "relaxed",
                     const std::string& scope = "gpu") {
  return fill(
      R"(kernel @atomic_{K}(%0: ptr<{T}> {divisibility = 16}, %1: ptr<{T}> {divisibility = 16}, %2: ptr<{T}> {divisibility = 16}, %3: i32) {
  %4 = arange {start = 0} : tile<{N}xi32>
  %5 = splat %3 : tile<{N}xi32>
  %6 = cmp %4, %5 {pred = lt} : tile<{N}xi1>
  %7 = splat %1 : tile<{N}xptr<{T}>>
  %8 = addptr %7, %4 : tile<{N}xptr<{T}>>
  %9 = load %8, %6 {cache = none, evict = none} : tile<{N}x{T}>
  %10 = splat %0 : tile<{N}xptr<{T}>>
  %11 = addptr %10, %4 : tile<{N}xptr<{T}>>
  %12 = atomic_rmw %11, %9, %6 {kind = {K}, order = {O}, scope = {S}} : tile<{N}x{T}>
  %13 = splat %2 : tile<{N}xptr<{T}>>
  %14 = addptr %13, %4 : tile<{N}xptr<{T}>>
  store %14, %12, %6 {cache = none, evict = none}
}
)",
      {{"K", kind}, {"T", dtype}, {"N", std::to_string(size)}, {"O", order}, {"S", scope}});
}

/// A scalar atomic_cas on %0 (a lock-style counter); the old value goes to %1.
std::string cas_text(const std::string& dtype, const std::string& order = "acq_rel", const std::string& scope = "gpu") {
  return fill(R"(kernel @atomic_cas_{T}(%0: ptr<{T}>, %1: ptr<{T}>, %2: {T}, %3: {T}) {
  %4 = atomic_cas %0, %2, %3 {order = {O}, scope = {S}} : {T}
  store %1, %4 {cache = none, evict = none}
}
)",
              {{"T", dtype}, {"O", order}, {"S", scope}});
}

/// The LoweringError message of compiling `text`, or "" if it compiled.
std::string lowering_error(const std::string& text) {
  try {
    compile_text(text);
  } catch (const lowering::LoweringError& e) {
    return e.what();
  }
  return "";
}

struct KindCase {
  const char* kind;
  const char* dtype;
  const char* instruction;  ///< what the PTX must contain
};

class AtomicKinds : public ::testing::TestWithParam<std::tuple<KindCase, const char*>> {};

TEST_P(AtomicKinds, LowersToItsInstructionAndPtxasAccepts) {
  const auto& [c, arch] = GetParam();
  const lowering::GpuKernel kernel = compile_text(rmw_text(c.kind, c.dtype, 256), arch);
  EXPECT_TRUE(contains(kernel.ptx, c.instruction));
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw") + count(kernel.llvm_ir, "cmpxchg"), 2)
      << "256 elements over 128 threads: two registers, each its own element\n"
      << kernel.llvm_ir;
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, std::string("atomic_") + c.kind + "_" + c.dtype);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, AtomicKinds,
    ::testing::Combine(
        ::testing::Values(KindCase{"add", "f32", "atom.global.add.f32"}, KindCase{"add", "i32", "atom.global.add.u32"},
                          KindCase{"add", "u64", "atom.global.add.u64"}, KindCase{"add", "f64", "atom.global.add.f64"},
                          KindCase{"add", "f16", "atom.global.add.noftz.f16"},
                          KindCase{"add", "i8", "atom.global.cas.b32"}, KindCase{"max", "i32", "atom.global.max.s32"},
                          KindCase{"max", "u32", "atom.global.max.u32"}, KindCase{"min", "i64", "atom.global.min.s64"},
                          KindCase{"min", "u16", "atom.global.cas.b32"}, KindCase{"max", "f32", "max.NaN.f32"},
                          KindCase{"min", "f64", "atom.global.cas.b64"}, KindCase{"max", "bf16", "atom.global.cas.b32"},
                          KindCase{"and", "i32", "atom.global.and.b32"}, KindCase{"or", "u64", "atom.global.or.b64"},
                          KindCase{"xor", "i32", "atom.global.xor.b32"},
                          KindCase{"xchg", "f32", "atom.global.exch.b32"},
                          KindCase{"xchg", "i64", "atom.global.exch.b64"},
                          KindCase{"max", "i1", "atom.global.cas.b32"}),
        ::testing::Values("sm_80", "sm_90a")),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).kind) + "_" + std::get<0>(info.param).dtype + "_" +
             std::get<1>(info.param);
    });

TEST(Atomics, Bf16AddIsNativeOnSm90) {
  EXPECT_TRUE(contains(compile_text(rmw_text("add", "bf16", 256), "sm_90a").ptx, "atom.global.add.noftz.bf16"));
}

TEST(Atomics, FloatMaximumIsACompareExchangeLoopPropagatingNaN) {
  const lowering::GpuKernel kernel = compile_text(rmw_text("max", "f32", 256));
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw"), 0) << "atomicrmw fmax ignores NaN\n" << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "cmpxchg ptr addrspace(1)"), 2) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "call float @llvm.maximum.f32"), 2) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.ptx, "atom.global.cas.b32"));
}

struct OrderCase {
  const char* order;
  const char* scope;
  const char* llvm;         ///< the atomic in the LLVM IR: ordering and syncscope, or the intrinsic
  const char* instruction;  ///< the PTX atomic
  const char* fence;        ///< the PTX fence of the scope
  int fences_before;        ///< per atomic
  int fences_after;
};

class AtomicOrders : public ::testing::TestWithParam<OrderCase> {};

TEST_P(AtomicOrders, CarryTheirScopeAndFences) {
  const OrderCase& c = GetParam();
  // 128 elements: one register per thread, so the kernel has one atomic.
  const lowering::GpuKernel kernel = compile_text(rmw_text("add", "f32", 128, c.order, c.scope));
  EXPECT_TRUE(contains(kernel.llvm_ir, c.llvm));
  const std::size_t atom = kernel.ptx.find(c.instruction);
  ASSERT_NE(atom, std::string::npos) << kernel.ptx;
  const std::string before = kernel.ptx.substr(0, atom);
  const std::string after = kernel.ptx.substr(atom);
  EXPECT_EQ(count(before, c.fence), c.fences_before) << kernel.ptx;
  EXPECT_EQ(count(after, c.fence), c.fences_after) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "membar."), c.fences_before + c.fences_after) << kernel.ptx;
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(rmw_text("add", "f32", 128, c.order, c.scope), arch), arch,
                              std::string("atomic_order_") + c.order + "_" + c.scope);
}

INSTANTIATE_TEST_SUITE_P(
    Orders, AtomicOrders,
    ::testing::Values(
        OrderCase{"relaxed", "gpu", "syncscope(\"device\") monotonic, align 4", "atom.global.add.f32", "membar", 0, 0},
        OrderCase{"release", "gpu", "syncscope(\"device\") release", "atom.global.add.f32", "membar.gl;", 1, 0},
        OrderCase{"acquire", "cta", "syncscope(\"block\") acquire", "atom.global.add.f32", "membar.cta;", 0, 1},
        OrderCase{"acq_rel", "cta", "syncscope(\"block\") acq_rel", "atom.global.add.f32", "membar.cta;", 1, 1},
        OrderCase{"acq_rel", "sys", "@llvm.nvvm.atomic.add.gen.f.sys.f32.p1", "atom.sys.add.f32", "membar.sys;", 1, 1},
        OrderCase{"relaxed", "sys", "@llvm.nvvm.atomic.add.gen.f.sys.f32.p1", "atom.sys.add.f32", "membar", 0, 0}),
    [](const auto& info) { return std::string(info.param.order) + "_" + info.param.scope; });

struct SystemCase {
  const char* kind;
  const char* dtype;
  const char* instruction;
};

class SystemScope : public ::testing::TestWithParam<SystemCase> {};

TEST_P(SystemScope, UsesSystemScopedAtomicsOnly) {
  const SystemCase& c = GetParam();
  const lowering::GpuKernel kernel = compile_text(rmw_text(c.kind, c.dtype, 256, "relaxed", "sys"));
  EXPECT_TRUE(contains(kernel.ptx, c.instruction));
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw") + count(kernel.llvm_ir, "cmpxchg"), 0) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "atom.global"), 0) << kernel.ptx;
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(rmw_text(c.kind, c.dtype, 256, "relaxed", "sys"), arch), arch,
                              std::string("atomic_sys_") + c.kind + "_" + c.dtype);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, SystemScope,
    ::testing::Values(SystemCase{"add", "i32", "atom.sys.add.s32"}, SystemCase{"add", "f64", "atom.sys.add.f64"},
                      SystemCase{"xchg", "f32", "atom.sys.exch.b32"}, SystemCase{"and", "u64", "atom.sys.and.b64"},
                      SystemCase{"max", "i64", "atom.sys.max.s64"}, SystemCase{"max", "u32", "atom.sys.cas.b32"},
                      SystemCase{"min", "f32", "atom.sys.cas.b32"}),
    [](const auto& info) { return std::string(info.param.kind) + "_" + info.param.dtype; });

TEST(Atomics, SystemScopeCompareExchange) {
  const lowering::GpuKernel kernel = compile_text(cas_text("f32", "acq_rel", "sys"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "@llvm.nvvm.atomic.cas.gen.i.sys.i32.p1"));
  EXPECT_TRUE(contains(kernel.ptx, "atom.sys.cas.b32"));
  EXPECT_EQ(count(kernel.ptx, "membar.sys;"), 2) << kernel.ptx;
}

TEST(Atomics, Fp8ArithmeticComputesInF32InACompareExchangeLoop) {
  // add at gpu scope: a cmpxchg loop on the byte; max at sys scope: a loop of
  // 32-bit cas on the word holding it; min at cta scope. Each widens the
  // element and the operand to f32 and rounds the result back in integer
  // arithmetic (no fp8 cvt, which sm_80 lacks).
  const std::string text = R"(kernel @eight(%0: ptr<f8e5m2>, %1: f8e5m2, %2: ptr<f8e4m3>, %3: f8e4m3) {
  %4 = atomic_rmw %0, %1 {kind = add, order = relaxed, scope = gpu} : f8e5m2
  %5 = atomic_rmw %2, %3 {kind = max, order = acq_rel, scope = sys} : f8e4m3
  %6 = atomic_rmw %2, %3 {kind = min, order = relaxed, scope = cta} : f8e4m3
  store %0, %4 {cache = none, evict = none}
  store %2, %5 {cache = none, evict = none}
  store %2, %6 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_EQ(count(kernel.llvm_ir, "cmpxchg ptr addrspace(1) %arg0, i8"), 1) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "cmpxchg ptr addrspace(1) %arg2, i8"), 1) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "call i32 @llvm.nvvm.atomic.cas.gen.i.sys.i32.p1("), 1) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw"), 0) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "fadd float")) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "@llvm.maximum.f32")) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "@llvm.minimum.f32")) << kernel.llvm_ir;
  EXPECT_FALSE(contains(kernel.ptx, "e4m3")) << kernel.ptx;
  for (const char* arch : {"sm_80", "sm_90a"}) KILN_EXPECT_PTXAS_ACCEPTS(compile_text(text, arch), arch, "rmw_f8");
}

TEST(Atomics, Fp8CompareExchangeAndExchangeMoveTheBits) {
  // cas at gpu scope, xchg at sys scope (a loop of 32-bit cas on the word holding the byte).
  const std::string text = R"(kernel @eight(%0: ptr<f8e4m3>, %1: f8e4m3, %2: f8e4m3) {
  %3 = atomic_cas %0, %1, %2 {order = relaxed, scope = gpu} : f8e4m3
  %4 = atomic_rmw %0, %3 {kind = xchg, order = relaxed, scope = sys} : f8e4m3
  store %0, %4 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_TRUE(contains(kernel.llvm_ir, "cmpxchg ptr addrspace(1) %arg0, i8")) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "@llvm.nvvm.atomic.cas.gen.i.sys.i32.p1")) << kernel.llvm_ir;
  for (const char* arch : {"sm_80", "sm_90a"}) KILN_EXPECT_PTXAS_ACCEPTS(compile_text(text, arch), arch, "cas_xchg_f8");
}

TEST(Atomics, CompareExchangeOfFloatsComparesBits) {
  const lowering::GpuKernel kernel = compile_text(cas_text("f32"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "cmpxchg ptr addrspace(1) %arg0, i32"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "syncscope(\"device\") acq_rel acquire"));
  EXPECT_TRUE(contains(kernel.ptx, "atom.global.cas.b32"));
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(cas_text("f32"), arch), arch, "cas_f32");
}

TEST(Atomics, CompareExchangeOfSixtyFourBitIntegers) {
  const lowering::GpuKernel kernel = compile_text(cas_text("i64", "relaxed", "cta"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "syncscope(\"block\") monotonic monotonic"));
  EXPECT_TRUE(contains(kernel.ptx, "atom.global.cas.b64"));
  EXPECT_EQ(count(kernel.ptx, "membar"), 0) << kernel.ptx;
}

// --- Duplicated elements: one atomic per element, the old value to every copy.

TEST(AtomicDuplicates, ScalarActsInThreadZeroAndBroadcastsThroughSharedMemory) {
  // A scalar is held by all 128 threads: only lane 0 of warp 0 acts, behind
  // a barrier (the atomic releases the whole program's accesses) and
  // delivering its old value between two more.
  const lowering::GpuKernel kernel = compile_text(cas_text("i32"));
  EXPECT_EQ(count(kernel.llvm_ir, "cmpxchg"), 1) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %lane, 31"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %warp, 3"));
  EXPECT_EQ(kernel.shared_bytes, 4) << "one i32 for the acting thread's old value";
  EXPECT_EQ(count(kernel.ptx, "st.shared.u32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "ld.shared.u32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 3) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "atom.global.cas.b32"), 1) << kernel.ptx;
}

TEST(AtomicDuplicates, ScalarInOneWarpShufflesFromLaneZero) {
  const lowering::GpuKernel kernel = compile_text(cas_text("i32"), "sm_90a", 1);
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %lane, 31"));
  EXPECT_EQ(count(kernel.llvm_ir, "%warp, "), 0) << "one warp has no warp bits\n" << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.idx.b32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 1) << "the release's barrier only\n" << kernel.ptx;
}

TEST(AtomicDuplicates, TileReplicatedOverWarpsActsInTheFirstTwoWarps) {
  // 64 elements over 4 warps of 32 lanes: warps 2 and 3 repeat warps 0 and 1
  // (warp bit 1 maps to no element), so only warps with bit 1 clear act.
  const lowering::GpuKernel kernel = compile_text(rmw_text("add", "f32", 64));
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw"), 1) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %warp, 2"));
  EXPECT_EQ(count(kernel.llvm_ir, "and i32 %lane, "), 0) << "every lane of an acting warp acts\n" << kernel.llvm_ir;
  // The acting warps' old values reach the others through a buffer of the tile.
  EXPECT_EQ(kernel.shared_bytes, 64 * 4) << "the 64 f32 of the tile";
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2) << kernel.ptx;
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(rmw_text("add", "f32", 64), arch), arch, "atomic_replicated_warps");
}

TEST(AtomicDuplicates, TileReplicatedOverLanesShufflesTheOldValue) {
  // 16 elements in one warp: lanes 16-31 repeat lanes 0-15.
  const lowering::GpuKernel kernel = compile_text(rmw_text("add", "i32", 16), "sm_90a", 1);
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw"), 1) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %lane, 16"));
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.idx.b32"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", "atomic_replicated_lanes");
}

TEST(AtomicDuplicates, TileWithoutDuplicatesHasNoActingGuard) {
  const lowering::GpuKernel kernel = compile_text(rmw_text("add", "f32", 1024));
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw"), 8) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "and i32 %warp, "), 0) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "and i32 %lane, "), 0) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
}

TEST(AtomicDuplicates, RegistersRepeatingInEveryThreadAreSkippedAtCompileTime) {
  // The 16x2 tile of wrapped_16x2_text: 8 registers per thread holding 4
  // distinct elements, and lanes 0-15 of a half-warp all holding the same ones.
  const std::string text = wrapped_16x2_text(R"(  %one = constant {value = 1.0} : tile<16x2xf32>
  %old = atomic_rmw %wrapped_pointers, %one {kind = add, order = relaxed, scope = gpu} : tile<16x2xf32>
  store %wrapped_pointers, %old {cache = none, evict = none}
)");
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw"), 4) << "registers 2, 3, 6, 7 repeat 0, 1, 4, 5\n" << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "atom.global.add.f32"), 4) << kernel.ptx;
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %lane, 15")) << "lane bits 0-3 only repeat columns";
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.idx.b32"), 8) << "each register from lane 0 of its half-warp\n" << kernel.ptx;
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", "atomic_wrapped_registers");
}

TEST(AtomicErrors, AddOfBooleansIsRejectedNamingTheLine) {
  const std::string text = R"(kernel @flags(%0: ptr<i1>, %1: i1) {
  %2 = atomic_rmw %0, %1 {kind = add, order = relaxed, scope = gpu} : i1 loc("flags.hpp":9)
  store %0, %2 {cache = none, evict = none}
}
)";
  EXPECT_EQ(lowering_error(text), "atomic_rmw: kind add is not defined for i1 (flags.hpp:9)");
}

}  // namespace
}  // namespace kiln::codegen_test
