// The kiln softmax kernel, traced by the DSL, through the GPU code
// generator: two runtime loops, a max and a sum reduction to scalars per
// block; ptxas accepts it without spills, plain and specialised.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "codegen/codegen_support.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/kernels/softmax.hpp"

namespace kiln::codegen_test {
namespace {

namespace kl = kiln;

const ir::Function& softmax_ir() { return kl::compile<kernels::softmax<kl::f32, 1024>>().ir(); }

/// The launch a 16-byte aligned, 16-divisible matrix gets (Triton's specialisation).
std::shared_ptr<const runtime::Program> specialized_softmax() {
  const ir::ArgumentFacts aligned{.divisibility = 16};
  return kl::compile<kernels::softmax<kl::f32, 1024>>().program().specialized(
      {aligned, aligned, aligned, aligned, aligned});
}

class SoftmaxForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(SoftmaxForArch, LowersAndPtxasAccepts) {
  const lowering::GpuKernel kernel = lowering::compile_for_gpu(softmax_ir(), {.arch = GetParam()});
  EXPECT_EQ(kernel.name, "softmax");
  EXPECT_TRUE(contains(kernel.ptx, ".entry softmax("));
  // The max and the sum of each block: 5 lane steps each, 4 warps through shared memory.
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.bfly.b32"), 2 * 5) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2 * 2) << kernel.ptx;
  EXPECT_TRUE(contains(kernel.ptx, "ex2.approx"));
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), "softmax");
}

TEST_P(SoftmaxForArch, SpecializedUsesVectorAccesses) {
  const lowering::GpuKernel kernel =
      lowering::compile_for_gpu(specialized_softmax()->optimized(), {.arch = GetParam()});
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.v4.f32"));
  EXPECT_TRUE(contains(kernel.ptx, "st.global.v4.f32"));
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), "softmax_specialized");
}

INSTANTIATE_TEST_SUITE_P(Archs, SoftmaxForArch, ::testing::Values("sm_80", "sm_90a"));

TEST(Softmax, ColdCompileTime) {
  const ir::Function& fn = softmax_ir();
  const auto start = std::chrono::steady_clock::now();
  const lowering::GpuKernel kernel = lowering::compile_for_gpu(fn, {.arch = "sm_90a"});
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  std::printf("softmax IR -> PTX (sm_90a): %.1f ms;", elapsed.count());
  for (const auto& pass : kernel.pass_times) std::printf(" %s %.2f", pass.pass.c_str(), pass.milliseconds);
  std::printf("\n");
  EXPECT_FALSE(kernel.ptx.empty());
}

}  // namespace
}  // namespace kiln::codegen_test
