// wgmma on the emu (device emu-sm_90a, which runs the code generated for
// sm_90a): tiled matmuls whose dots the code generator puts on wgmma give
// the products within the inner-product bound of a double reference, for
// f16 and bf16, with tails in M, N and K, K shorter than the stages' tiles,
// 1 to 4 stages, operands stored along M or N (imm-trans set) as well as
// along K, two warpgroups, two 64-row slices per warpgroup and N split into
// two 256-column instructions; their PTX holds wgmma.mma_async. The emu
// refuses a wgmma without its fence, and inline assembly it has no hook for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emu_support.hpp"
#include "kiln/lowering/compile.hpp"
#include "tiled_matmul.hpp"

namespace {

namespace kl = kiln;
using kiln::emu_test::describe;
using kiln::emu_test::MatmulCase;

template <class T, int BM, int BN, int BK, bool A_ALONG_M = false, bool B_ALONG_K = false>
void expect_products(const MatmulCase& c, const char* dtype, bool check_flags = true) {
  const std::string what = describe(c, dtype) + (A_ALONG_M ? ", a along M" : "") + (B_ALONG_K ? ", b along K" : "");
  const std::string ptx = kiln::emu_test::expect_matmul_products<T, BM, BN, BK, A_ALONG_M, B_ALONG_K>(
      kl::Device::emu_sm90a(), c, what, "sm_90a");
  EXPECT_NE(ptx.find("wgmma.mma_async"), std::string::npos) << what << ": the dot is not on wgmma";
  // imm-trans-a and imm-trans-b, or imm-trans-b alone where a comes from
  // registers (unpipelined, its load gives the fragment layout).
  const std::string b_flag = B_ALONG_K ? "0;" : "1;";
  const std::string flags = std::string(", p, 1, 1, ") +
                            (ptx.find("}, {%r") != std::string::npos ? ""
                             : A_ALONG_M                             ? "1, "
                                                                     : "0, ") +
                            b_flag;
  const std::size_t first_wgmma = ptx.find("wgmma.mma_async");
  if (check_flags) {
    EXPECT_NE(ptx.find(flags), std::string::npos) << what << ": no wgmma with imm-trans" << flags << "; the first is\n"
                                                  << ptx.substr(first_wgmma, ptx.find('\n', first_wgmma) - first_wgmma);
  }
}

TEST(Wgmma, EveryDepthWithTailsInEveryDimension) {
  for (int stages = 1; stages <= 4; ++stages) {
    expect_products<kl::half, 64, 64, 32>({70, 90, 100, 4, stages}, "f16");
  }
}

TEST(Wgmma, Bf16AndKShorterThanTheStagesTiles) {
  for (int stages = 1; stages <= 4; ++stages) {
    expect_products<kl::bfloat16, 64, 32, 32>({64, 32, 10, 4, stages}, "bf16");
    expect_products<kl::bfloat16, 64, 64, 16>({65, 64, 40, 4, stages}, "bf16");
  }
}

TEST(Wgmma, OperandsStoredAlongMOrN) {
  expect_products<kl::half, 64, 64, 32, true, false>({64, 64, 64, 4, 3}, "f16");
  expect_products<kl::half, 64, 64, 32, false, true>({64, 64, 64, 4, 3}, "f16");
  // Otherwise each operand is stored along whichever dimension the layout
  // layout assignment gave its load or copy runs (here b along N).
  expect_products<kl::bfloat16, 64, 32, 64, true, true>({128, 64, 64, 4, 3}, "bf16", false);
  expect_products<kl::bfloat16, 64, 32, 64, true, true>({128, 64, 64, 4, 1}, "bf16", false);
  expect_products<kl::bfloat16, 64, 32, 64, true, true>({100, 50, 70, 4, 1}, "bf16", false);
}

TEST(Wgmma, TwoWarpgroupsTwoSlicesAndTwoColumnChunks) {
  expect_products<kl::half, 128, 128, 32>({130, 128, 64, 8, 3}, "f16");
  expect_products<kl::half, 128, 64, 32>({128, 64, 96, 4, 2}, "f16");
  expect_products<kl::half, 64, 512, 16>({64, 512, 32, 4, 1}, "f16");
}

TEST(Wgmma, InlineAssemblyWithoutAHookIsNamed) {
  try {
    kiln::emu_test::compile_nvvm(R"(
define ptx_kernel void @sleepy(ptr addrspace(1) %out) {
  call void asm sideeffect "nanosleep.u32 5;", ""()
  ret void
}
)",
                                 "sleepy", "%0: ptr<i32>");
    ADD_FAILURE() << "the emu compiled inline assembly it has no hook for";
  } catch (const kiln::lowering::LoweringError& e) {
    EXPECT_STREQ(e.what(), "emu: kernel sleepy: no emu hook runs the inline assembly `nanosleep.u32 5;`");
  }
}

TEST(Wgmma, AMultiplyWithoutItsFenceIsAFault) {
  const auto kernel = kiln::emu_test::compile_nvvm(R"(
define ptx_kernel void @unfenced(ptr addrspace(1) %out) {
  %d = call { float, float, float, float } asm sideeffect "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, $8, $9, p, 1, 1, 0, 0;\0A}", "=f,=f,=f,=f,0,1,2,3,l,l,r"(float 0.0, float 0.0, float 0.0, float 0.0, i64 0, i64 0, i32 1)
  %x = extractvalue { float, float, float, float } %d, 0
  store float %x, ptr addrspace(1) %out
  ret void
}
)",
                                                   "unfenced", "%0: ptr<f32>");
  kl::Buffer<float> out = kl::Buffer<float>::from(std::vector<float>(1, 0.0f), kl::Device::emu());
  const kiln::runtime::KernelArgument args[] = {kiln::emu_test::pointer_to(out, "out")};
  const std::string message = kiln::emu_test::kernel_error([&] { kernel->launch(kl::Device::emu(), {1, 1, 1}, args); });
  EXPECT_NE(message.find("wgmma.mma_async without a wgmma.fence before it since the last wait"), std::string::npos)
      << message;
}

}  // namespace
