// The row-norm kernels at the tile and warps the library launches for rows
// of 4096 columns: ptxas accepts them for sm_80 and sm_90a without spills
// and within the registers that let the programs planned per multiprocessor
// run there together: the layer-norm backward's row kernel, whose grid
// plans for layer_norm_backward_programs_per_unit of them, and the layer-norm
// forward's, which stays at four (its f32 variant took 73 registers, three).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "codegen/codegen_support.hpp"
#include "kiln/kernels/layer_norm.hpp"
#include "kiln/kernels/layer_norm_backward.hpp"

namespace kiln::codegen_test {
namespace {

namespace kl = kiln;

/// 32-bit registers of one multiprocessor on sm_80 and sm_90 (A100, H100,
/// H200), which the threads of its resident programs share.
constexpr int kRegistersPerMultiprocessor = 65536;

/// `compiled` at the launch `facts`, for each architecture: no spills, and
/// few enough registers that `programs` programs share a multiprocessor.
template <class Compiled>
void expect_programs_fit(const Compiled& compiled, const std::string& facts, const CompileOptions& options,
                         int programs, const std::string& stem) {
  if (!std::filesystem::exists(kPtxas))
    GTEST_SKIP() << kPtxas << " not found: install the CUDA toolkit to check the PTX";
  const ir::Function& fn = compiled.program().specialized(launch_facts(facts))->optimized();
  const int threads = options.num_warps * 32;
  const int budget = kRegistersPerMultiprocessor / (programs * threads);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = lowering::compile_for_gpu(fn, {.arch = arch, .num_warps = options.num_warps});
    const std::string name = stem + "_" + arch;
    const PtxasResult ptxas = run_ptxas(kernel.ptx, arch, name);
    ASSERT_EQ(ptxas.exit_code, 0) << name << ": ptxas rejected the PTX:\n" << ptxas.output;
    EXPECT_EQ(spill_bytes(ptxas.output), 0) << name << ": " << ptxas.output;
    EXPECT_LE(registers_used(ptxas.output), budget)
        << name << ": " << programs << " programs of " << threads << " threads no longer fit one multiprocessor's "
        << kRegistersPerMultiprocessor << " registers\n"
        << ptxas.output;
    std::printf("ptxas -arch=%s %s: %s (at most %d for %d programs)\n", arch, name.c_str(),
                register_usage(ptxas.output).c_str(), budget, programs);
  }
}

template <class T>
void expect_backward_rows_fit(const std::string& dtype) {
  const CompileOptions options = kernels::norm_compile_options(kernels::norm_max_block);
  // dy, x, weight, mean, rstd, dx, partial_dw, partial_db, rows, n.
  expect_programs_fit(kl::compile<kernels::layer_norm_backward_rows<T, kernels::norm_max_block>>(options), "aaaaaaaa-a",
                      options, kernels::layer_norm_backward_programs_per_unit, "layer_norm_backward_rows_" + dtype);
}

template <class T>
void expect_forward_row_tile_fits(const std::string& dtype) {
  const CompileOptions options = kernels::norm_compile_options(kernels::norm_max_block);
  // x, weight, bias, y, mean_out, rstd_out, n, eps.
  expect_programs_fit(kl::compile<kernels::layer_norm_forward_row_tile<T, kernels::norm_max_block>>(options),
                      "aaaaaaa-", options, 4, "layer_norm_forward_row_tile_" + dtype);
}

TEST(NormRegisters, LayerNormBackwardRowsF16) { expect_backward_rows_fit<kl::f16>("f16"); }
TEST(NormRegisters, LayerNormBackwardRowsBf16) { expect_backward_rows_fit<kl::bf16>("bf16"); }
TEST(NormRegisters, LayerNormBackwardRowsF32) { expect_backward_rows_fit<kl::f32>("f32"); }
TEST(NormRegisters, LayerNormForwardRowTileF16) { expect_forward_row_tile_fits<kl::f16>("f16"); }
TEST(NormRegisters, LayerNormForwardRowTileBf16) { expect_forward_row_tile_fits<kl::bf16>("bf16"); }
TEST(NormRegisters, LayerNormForwardRowTileF32) { expect_forward_row_tile_fits<kl::f32>("f32"); }

}  // namespace
}  // namespace kiln::codegen_test
