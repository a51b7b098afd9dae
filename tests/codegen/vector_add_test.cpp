// vector_add through the GPU code generator: specialised arguments give one
// guarded 16-byte access per run of four floats, unknown ones scalar accesses.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"

namespace kiln::codegen_test {
namespace {

class VectorAddForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(VectorAddForArch, SpecializedUsesSixteenByteAccesses) {
  const lowering::GpuKernel kernel = compile_text(specialized_vector_add(), GetParam());
  EXPECT_EQ(kernel.name, "vector_add");
  EXPECT_EQ(kernel.threads_per_block, 128);
  EXPECT_TRUE(contains(kernel.ptx, ".target " + std::string(GetParam())));
  EXPECT_TRUE(contains(kernel.ptx, ".version 8.5"));
  EXPECT_TRUE(contains(kernel.ptx, ".entry vector_add("));
  EXPECT_TRUE(contains(kernel.ptx, ".maxntid 128, 1, 1"));
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.v4.f32"));
  EXPECT_TRUE(contains(kernel.ptx, "st.global.v4.f32"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "define ptx_kernel void @vector_add(ptr addrspace(1) align 16"));
}

INSTANTIATE_TEST_SUITE_P(Archs, VectorAddForArch, ::testing::Values("sm_80", "sm_90a"));

TEST(VectorAdd, WithoutFactsUsesScalarAccesses) {
  const lowering::GpuKernel kernel = compile_text(vector_add_text("", ""));
  EXPECT_EQ(count(kernel.ptx, ".v4"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".v2"), 0) << kernel.ptx;
  // 1024 elements over 128 threads: 8 per thread, for each of the two loads and the store.
  EXPECT_EQ(count(kernel.ptx, "ld.global.f32"), 16) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.f32"), 8) << kernel.ptx;
}

TEST(VectorAdd, MaskedTailGuardsWholeVectors) {
  // n is a multiple of 16, so the mask is constant over each run of four:
  // each thread's 8 elements are 2 guarded vectors per load and per store.
  const lowering::GpuKernel kernel = compile_text(specialized_vector_add());
  EXPECT_EQ(count(kernel.ptx, "ld.global.v4.f32"), 4) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 2) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "ld.global.f32"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.f32"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.optimized_llvm_ir, "llvm.masked."), 0) << kernel.optimized_llvm_ir;
  EXPECT_GE(count(kernel.ptx, "bra"), 2) << "the masked accesses are guarded by branches:\n" << kernel.ptx;
}

TEST(VectorAdd, EightWarpsGiveTwoHundredFiftySixThreads) {
  const lowering::GpuKernel kernel = compile_text(specialized_vector_add(), "sm_90a", 8);
  EXPECT_EQ(kernel.threads_per_block, 256);
  EXPECT_TRUE(contains(kernel.ptx, ".maxntid 256, 1, 1"));
  // 4 elements per thread: one vector per load and per store.
  EXPECT_EQ(count(kernel.ptx, "ld.global.v4.f32"), 2) << kernel.ptx;
}

TEST(VectorAdd, RegisterCapIsMaxnreg) {
  const std::unique_ptr<ir::Function> fn = ir::parse_function(specialized_vector_add());
  EXPECT_EQ(count(lowering::compile_for_gpu(*fn, {}).ptx, ".maxnreg"), 0);
  for (const int registers : {24, 104, 255}) {
    const lowering::GpuKernel capped = lowering::compile_for_gpu(*fn, {.max_registers = registers});
    EXPECT_TRUE(contains(capped.ptx, ".maxnreg " + std::to_string(registers) + "\n")) << capped.ptx;
  }
}

TEST(VectorAdd, DisjointArgumentsAreNoalias) {
  std::unique_ptr<ir::Function> fn = ir::parse_function(specialized_vector_add());
  const lowering::GpuKernel shared = lowering::compile_for_gpu(*fn, {});
  EXPECT_EQ(count(shared.llvm_ir, "noalias"), 0) << "a store through one argument may alias another";
  const lowering::GpuKernel disjoint = lowering::compile_for_gpu(*fn, {.arguments_do_not_overlap = true});
  EXPECT_EQ(count(disjoint.llvm_ir, "ptr addrspace(1) noalias"), 3) << disjoint.llvm_ir;
  EXPECT_TRUE(contains(disjoint.ptx, "ld.global.nc.v4.f32"));
}

TEST(VectorAdd, TemplateNamesBecomePtxIdentifiers) {
  std::unique_ptr<ir::Function> fn = ir::parse_function(specialized_vector_add());
  fn->name = "vector_add<1024>";
  const lowering::GpuKernel kernel = lowering::compile_for_gpu(*fn, {});
  EXPECT_EQ(kernel.name, "vector_add_1024_");
  EXPECT_TRUE(contains(kernel.ptx, ".entry vector_add_1024_("));
}

TEST(VectorAdd, ColdCompileTime) {
  // The first compile in the process pays for initialising the NVPTX target;
  // the log line is the number the report quotes.
  const auto start = std::chrono::steady_clock::now();
  const lowering::GpuKernel kernel = compile_text(specialized_vector_add());
  const std::chrono::duration<double, std::milli> total = std::chrono::steady_clock::now() - start;
  std::string passes;
  for (const lowering::PassTime& pass : kernel.pass_times)
    passes += " " + pass.pass + "=" + std::to_string(pass.milliseconds).substr(0, 5);
  std::printf("vector_add IR text -> PTX (sm_90a): %.2f ms;%s\n", total.count(), passes.c_str());
  EXPECT_EQ(kernel.pass_times.size(), 8u);
  EXPECT_LT(total.count(), 2000.0);
}

TEST(VectorAdd, DumpsThePassAskedFor) {
  std::unique_ptr<ir::Function> fn = ir::parse_function(specialized_vector_add());
  std::ostringstream log;
  lowering::compile_for_gpu(*fn, {}, {.dump_after = "layouts", .timing = true, .log = &log});
  EXPECT_TRUE(contains(log.str(), "// after layouts\n%7 : tile<1024xi32>\nregister[8]"));
  EXPECT_TRUE(contains(log.str(), "gpu pass ptx: "));
  EXPECT_EQ(count(log.str(), "// after"), 1) << log.str();
}

TEST(VectorAdd, DumpsThePassNamedByKilnDump) {
  std::unique_ptr<ir::Function> fn = ir::parse_function(specialized_vector_add());
  std::ostringstream log;
  ::setenv("KILN_DUMP", "ptx", 1);
  lowering::compile_for_gpu(*fn, {}, {.dump_after = "", .timing = false, .log = &log});
  ::unsetenv("KILN_DUMP");
  EXPECT_TRUE(contains(log.str(), "// after ptx\n//\n// Generated by LLVM NVPTX Back-End"));
  EXPECT_EQ(count(log.str(), "// after"), 1) << log.str();
}

}  // namespace
}  // namespace kiln::codegen_test
