// ptxas (CUDA 13) accepts the generated PTX for sm_80 and sm_90a without
// register spills; skipped, visibly, where the CUDA toolkit is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"

namespace kiln::codegen_test {
namespace {

struct Case {
  const char* name;
  std::string text;
};

class PtxasAccepts : public ::testing::TestWithParam<const char*> {};

TEST_P(PtxasAccepts, GeneratedKernels) {
  if (!std::filesystem::exists(kPtxas))
    GTEST_SKIP() << kPtxas << " not found: install the CUDA toolkit to check the PTX";
  const Case cases[] = {
      {"vector_add_specialized", specialized_vector_add()},
      {"vector_add_plain", vector_add_text("", "")},
      {"add_bias", kAddBias},
      {"elementwise", kElementwise},
  };
  for (const Case& c : cases) {
    const lowering::GpuKernel kernel = compile_text(c.text, GetParam());
    const PtxasResult result = run_ptxas(kernel.ptx, GetParam(), c.name);
    EXPECT_EQ(result.exit_code, 0) << c.name << ": ptxas rejected the PTX:\n" << result.output << "\n" << kernel.ptx;
    EXPECT_EQ(spill_bytes(result.output), 0) << c.name << ": spills:\n" << result.output;
    EXPECT_TRUE(contains(result.output, "Used")) << result.output;
    std::printf("ptxas -arch=%s %s: %s, %d bytes dynamic smem\n", GetParam(), c.name,
                register_usage(result.output).c_str(), kernel.shared_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, PtxasAccepts, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace kiln::codegen_test
