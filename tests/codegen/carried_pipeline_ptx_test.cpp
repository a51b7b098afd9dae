// The K loop of Triton's tutorial matmul (tests/carried_pointer_kernels.hpp),
// whose pointers the loop carries and advances, in PTX for sm_80 and sm_90a
// at 4 warps: pipelined (3 stages) each iteration copies its operands with
// 16-byte cp.async into the rings, commits one group, waits with one
// cp.async.wait_group that leaves the next stage's copies in flight, passes
// one barrier, and neither loads the operands from global memory nor stores
// them to shared memory itself; unpipelined (1 stage) it does the latter.
// ptxas accepts both without spills.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "carried_pointer_kernels.hpp"
#include "codegen/codegen_support.hpp"

namespace kiln::codegen_test {
namespace {

namespace kl = kiln;
using kiln::test::carried::tutorial_matmul;

constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32;

/// The tutorial matmul (f16, 64 x 64 x 32) at `stages`, specialised as a
/// launch on aligned, contiguous matrices with sizes divisible by 16 sees
/// it (stride_ak = stride_bn = 1), on mma.sync (on wgmma, sm_90a's loop is
/// checked by mma_structure_test.cpp).
lowering::GpuKernel compile_tutorial(int stages, const std::string& arch) {
  kl::CompileOptions options;
  options.num_stages = stages;
  auto compiled = kl::compile<tutorial_matmul<kl::f16, kBlockM, kBlockN, kBlockK>>(options);
  const auto variant = compiled.program().specialized(launch_facts("aaaaaaa1a1a"));
  return lowering::compile_for_gpu(variant->optimized(), {.arch = arch, .num_warps = 4, .wgmma = false});
}

TEST(CarriedPipelinePtx, TheKLoopCopiesItsOperandsAsynchronously) {
  // 128 threads copy the 64 x 32 and 32 x 64 f16 tiles in 16-byte pieces.
  constexpr int kCopies = (kBlockM + kBlockN) * kBlockK * 2 / (16 * 128);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_tutorial(3, arch);
    const std::string_view loop = innermost_loop_holding(kernel.ptx, "mma.sync");
    ASSERT_FALSE(loop.empty()) << arch << ": no loop holds mma.sync:\n" << kernel.ptx;
    EXPECT_EQ(count(loop, "cp.async.cg.shared.global"), kCopies) << arch << ":\n" << loop;
    EXPECT_EQ(count(loop, "cp.async.commit_group"), 1) << arch << ":\n" << loop;
    EXPECT_EQ(count(loop, "cp.async.wait_group 1;"), 1) << arch << ":\n" << loop;
    EXPECT_EQ(count(loop, "bar.sync"), 1) << arch << ":\n" << loop;
    EXPECT_EQ(count(loop, "ld.global."), 0) << arch << ":\n" << loop;
    EXPECT_EQ(count(loop, "st.shared."), 0) << arch << ":\n" << loop;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, std::string("tutorial_matmul_3_stages"));
  }
}

TEST(CarriedPipelinePtx, UnpipelinedTheKLoopLoadsAndStagesItsOperands) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_tutorial(1, arch);
    const std::string_view loop = innermost_loop_holding(kernel.ptx, "mma.sync");
    ASSERT_FALSE(loop.empty()) << arch << ": no loop holds mma.sync:\n" << kernel.ptx;
    EXPECT_EQ(count(loop, "cp.async"), 0) << arch << ":\n" << loop;
    EXPECT_GT(count(loop, "ld.global."), 0) << arch << ":\n" << loop;
    EXPECT_GT(count(loop, "st.shared."), 0) << arch << ":\n" << loop;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, std::string("tutorial_matmul_1_stage"));
  }
}

TEST(CarriedPipelinePtx, EveryDepthWaitsForItsOwnStage) {
  for (int stages = 2; stages <= 4; ++stages) {
    const lowering::GpuKernel kernel = compile_tutorial(stages, "sm_80");
    const std::string_view loop = innermost_loop_holding(kernel.ptx, "mma.sync");
    ASSERT_FALSE(loop.empty()) << stages << " stages: no loop holds mma.sync";
    EXPECT_EQ(count(loop, "cp.async.wait_group " + std::to_string(stages - 2) + ";"), 1) << stages << ":\n" << loop;
    EXPECT_EQ(count(loop, "bar.sync"), 1) << stages << " stages:\n" << loop;
    EXPECT_EQ(count(loop, "ld.global."), 0) << stages << " stages:\n" << loop;
  }
}

}  // namespace
}  // namespace kiln::codegen_test
