// System-scoped atomics on 8- and 16-bit elements through the GPU code
// generator: LLVM 19 has system-scoped atomics for 32- and 64-bit words only,
// so each is a loop of llvm.nvvm.atomic.cas.gen.i.sys (atom.sys.cas.b32) on
// the aligned word holding the element. Every kind and dtype reaches PTX and
// passes ptxas for sm_80 and sm_90a.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>

#include "codegen/codegen_support.hpp"

namespace kiln::codegen_test {
namespace {

/// A masked atomic_rmw of `kind` at system scope on 256 elements of %0
/// (`dtype`) with the values loaded from %1; the old values go to %2.
std::string system_rmw_text(const std::string& kind, const std::string& dtype) {
  std::string text =
      R"(kernel @narrow(%0: ptr<{T}> {divisibility = 16}, %1: ptr<{T}> {divisibility = 16}, %2: ptr<{T}> {divisibility = 16}, %3: i32) {
  %4 = arange {start = 0} : tile<256xi32>
  %5 = splat %3 : tile<256xi32>
  %6 = cmp %4, %5 {pred = lt} : tile<256xi1>
  %7 = splat %1 : tile<256xptr<{T}>>
  %8 = addptr %7, %4 : tile<256xptr<{T}>>
  %9 = load %8, %6 {cache = none, evict = none} : tile<256x{T}>
  %10 = splat %0 : tile<256xptr<{T}>>
  %11 = addptr %10, %4 : tile<256xptr<{T}>>
  %12 = atomic_rmw %11, %9, %6 {kind = {K}, order = acq_rel, scope = sys} : tile<256x{T}>
  %13 = splat %2 : tile<256xptr<{T}>>
  %14 = addptr %13, %4 : tile<256xptr<{T}>>
  store %14, %12, %6 {cache = none, evict = none}
}
)";
  for (const auto& [name, value] : {std::pair{std::string("{T}"), dtype}, std::pair{std::string("{K}"), kind}})
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size()))
      text.replace(at, name.size(), value);
  return text;
}

class NarrowSystemAtomic : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(NarrowSystemAtomic, LoopsOverTheContainingWord) {
  const auto [kind, dtype] = GetParam();
  const std::string text = system_rmw_text(kind, dtype);
  const lowering::GpuKernel kernel = compile_text(text);
  // Two elements per thread, each its own loop on its word.
  EXPECT_EQ(count(kernel.llvm_ir, "call i32 @llvm.nvvm.atomic.cas.gen.i.sys.i32.p1("), 2) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "atomicrmw"), 0) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "and i64 %"), 2) << "the byte offset in the word\n" << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.ptx, "atom.sys.cas.b32"));
  EXPECT_EQ(count(kernel.ptx, "membar.sys"), 4) << "acq_rel: one fence before and one after each\n" << kernel.ptx;
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(text, arch), arch, std::string("narrow_sys_") + kind + "_" + dtype);
}

INSTANTIATE_TEST_SUITE_P(KindsAndDtypes, NarrowSystemAtomic,
                         ::testing::Values(std::tuple{"add", "f16"}, std::tuple{"add", "bf16"},
                                           std::tuple{"max", "f16"}, std::tuple{"min", "bf16"},
                                           std::tuple{"xchg", "bf16"}, std::tuple{"add", "i16"},
                                           std::tuple{"min", "i8"}, std::tuple{"max", "u8"}, std::tuple{"xor", "u16"},
                                           std::tuple{"or", "i1"}));

TEST(NarrowSystemAtomic, CompareExchangeKeepsTheOtherHalfOfTheWord) {
  const std::string text = R"(kernel @narrow_cas(%0: ptr<f16>, %1: ptr<f16>, %2: f16, %3: f16) {
  %4 = atomic_cas %0, %2, %3 {order = relaxed, scope = sys} : f16
  store %1, %4 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_EQ(count(kernel.llvm_ir, "call i32 @llvm.nvvm.atomic.cas.gen.i.sys.i32.p1("), 1) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "cmpxchg"), 0) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "select i1"));
  EXPECT_TRUE(contains(kernel.ptx, "atom.sys.cas.b32"));
  EXPECT_EQ(count(kernel.ptx, "membar"), 0) << kernel.ptx;
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(text, arch), arch, "narrow_sys_cas_f16");
}

}  // namespace
}  // namespace kiln::codegen_test
