// The layer-norm backward's row kernel at the tile and warps the library
// launches for rows of 4096 columns: ptxas accepts it for sm_80 and sm_90a
// without spills and within the registers that let the programs its grid
// plans for per multiprocessor (layer_norm_backward_programs_per_unit) run
// there together.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "codegen/codegen_support.hpp"
#include "kiln/kernels/layer_norm_backward.hpp"

namespace kiln::codegen_test {
namespace {

namespace kl = kiln;

/// 32-bit registers of one multiprocessor on sm_80 and sm_90 (A100, H100,
/// H200), which the threads of its resident programs share.
constexpr int kRegistersPerMultiprocessor = 65536;

template <class T>
void expect_two_programs_fit(const std::string& dtype) {
  if (!std::filesystem::exists(kPtxas))
    GTEST_SKIP() << kPtxas << " not found: install the CUDA toolkit to check the PTX";
  const CompileOptions options = kernels::norm_compile_options(kernels::norm_max_block);
  auto compiled = kl::compile<kernels::layer_norm_backward_rows<T, kernels::norm_max_block>>(options);
  // dy, x, weight, mean, rstd, dx, partial_dw, partial_db, rows, n.
  const ir::Function& fn = compiled.program().specialized(launch_facts("aaaaaaaa-a"))->optimized();
  const int threads = options.num_warps * 32;
  const int budget = kRegistersPerMultiprocessor / (kernels::layer_norm_backward_programs_per_unit * threads);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = lowering::compile_for_gpu(fn, {.arch = arch, .num_warps = options.num_warps});
    const std::string stem = "layer_norm_backward_rows_" + dtype + "_" + arch;
    const PtxasResult ptxas = run_ptxas(kernel.ptx, arch, stem);
    ASSERT_EQ(ptxas.exit_code, 0) << stem << ": ptxas rejected the PTX:\n" << ptxas.output;
    EXPECT_EQ(spill_bytes(ptxas.output), 0) << stem << ": " << ptxas.output;
    EXPECT_LE(registers_used(ptxas.output), budget)
        << stem << ": " << kernels::layer_norm_backward_programs_per_unit << " programs of " << threads
        << " threads no longer fit one multiprocessor's " << kRegistersPerMultiprocessor << " registers\n"
        << ptxas.output;
    std::printf("ptxas -arch=%s %s: %s (at most %d for %d programs)\n", arch, stem.c_str(),
                register_usage(ptxas.output).c_str(), budget, kernels::layer_norm_backward_programs_per_unit);
  }
}

TEST(NormRegisters, LayerNormBackwardRowsF16) { expect_two_programs_fit<kl::f16>("f16"); }
TEST(NormRegisters, LayerNormBackwardRowsBf16) { expect_two_programs_fit<kl::bf16>("bf16"); }
TEST(NormRegisters, LayerNormBackwardRowsF32) { expect_two_programs_fit<kl::f32>("f32"); }

}  // namespace
}  // namespace kiln::codegen_test
