// `dot` through the GPU code generator: single dots of several shapes, dtypes
// and precisions from IR text, and the sample kernels that use dot (matmul
// with its epilogues, attention, the conv2d gemm variant) traced by the DSL,
// each reaching PTX that ptxas accepts for sm_80 and sm_90a without spills.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "codegen/codegen_support.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/kernels/attention.hpp"
#include "kiln/kernels/conv2d_gemm.hpp"
#include "kiln/kernels/matmul.hpp"
#include "kiln/lowering/dot_layout.hpp"

namespace kiln::codegen_test {
namespace {

namespace kl = kiln;

/// One dot shape: c[M, N] = c + a[M, K] @ b[K, N], all row-major and contiguous.
struct DotCase {
  int m, n, k;
  const char* input;        // dtype of a and b
  const char* accumulator;  // dtype of c
  const char* precision;
  int num_warps = 4;
};

std::string case_name(const DotCase& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + "_" + c.input + "_" +
         c.precision + "_w" + std::to_string(c.num_warps);
}

/// IR text of one program computing c += a @ b over the whole tiles.
std::string dot_kernel_text(const DotCase& c) {
  const std::string m = std::to_string(c.m), n = std::to_string(c.n), k = std::to_string(c.k);
  const std::string t = c.input, acc = c.accumulator;
  auto tile = [](const std::string& rows, const std::string& cols, const std::string& element) {
    return "tile<" + rows + "x" + cols + "x" + element + ">";
  };
  return "kernel @dot_" + case_name(c) + "(%0: ptr<" + t + "> {divisibility = 16}, %1: ptr<" + t +
         "> {divisibility = 16}, %2: ptr<" + acc + "> {divisibility = 16}) {\n" + "  %3 = arange {start = 0} : tile<" +
         m + "xi32>\n" + "  %4 = arange {start = 0} : tile<" + k + "xi32>\n" + "  %5 = arange {start = 0} : tile<" + n +
         "xi32>\n" + "  %6 = expand_dims %3 {axis = 1} : " + tile(m, "1", "i32") + "\n" +
         "  %7 = constant {value = " + k + "} : " + tile(m, "1", "i32") + "\n" +
         "  %8 = mul %6, %7 : " + tile(m, "1", "i32") + "\n" + "  %9 = broadcast %8 : " + tile(m, k, "i32") + "\n" +
         "  %10 = expand_dims %4 {axis = 0} : " + tile("1", k, "i32") + "\n" +
         "  %11 = broadcast %10 : " + tile(m, k, "i32") + "\n" + "  %12 = add %9, %11 : " + tile(m, k, "i32") + "\n" +
         "  %13 = splat %0 : " + tile(m, k, "ptr<" + t + ">") + "\n" +
         "  %14 = addptr %13, %12 : " + tile(m, k, "ptr<" + t + ">") + "\n" +
         "  %15 = load %14 {cache = none, evict = none} : " + tile(m, k, t) + "\n" +
         "  %16 = expand_dims %4 {axis = 1} : " + tile(k, "1", "i32") + "\n" + "  %17 = constant {value = " + n +
         "} : " + tile(k, "1", "i32") + "\n" + "  %18 = mul %16, %17 : " + tile(k, "1", "i32") + "\n" +
         "  %19 = broadcast %18 : " + tile(k, n, "i32") + "\n" +
         "  %20 = expand_dims %5 {axis = 0} : " + tile("1", n, "i32") + "\n" +
         "  %21 = broadcast %20 : " + tile(k, n, "i32") + "\n" + "  %22 = add %19, %21 : " + tile(k, n, "i32") + "\n" +
         "  %23 = splat %1 : " + tile(k, n, "ptr<" + t + ">") + "\n" +
         "  %24 = addptr %23, %22 : " + tile(k, n, "ptr<" + t + ">") + "\n" +
         "  %25 = load %24 {cache = none, evict = none} : " + tile(k, n, t) + "\n" + "  %26 = constant {value = " + n +
         "} : " + tile(m, "1", "i32") + "\n" + "  %27 = mul %6, %26 : " + tile(m, "1", "i32") + "\n" +
         "  %28 = broadcast %27 : " + tile(m, n, "i32") + "\n" + "  %29 = broadcast %20 : " + tile(m, n, "i32") + "\n" +
         "  %30 = add %28, %29 : " + tile(m, n, "i32") + "\n" + "  %31 = splat %2 : " + tile(m, n, "ptr<" + acc + ">") +
         "\n" + "  %32 = addptr %31, %30 : " + tile(m, n, "ptr<" + acc + ">") + "\n" +
         "  %33 = load %32 {cache = none, evict = none} : " + tile(m, n, acc) + "\n" +
         "  %34 = dot %15, %25, %33 {precision = " + c.precision + "} : " + tile(m, n, acc) + " loc(\"dot.hpp\":7)\n" +
         "  store %32, %34 {cache = none, evict = none}\n}\n";
}

/// Dots on the FMA units (tensor cores off).
class DotShapes : public ::testing::TestWithParam<DotCase> {};

TEST_P(DotShapes, LowersAndPtxasAccepts) {
  const DotCase& c = GetParam();
  const std::string text = dot_kernel_text(c);
  const std::unique_ptr<ir::Function> fn = ir::parse_function(text);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel =
        lowering::compile_for_gpu(*fn, {.arch = arch, .num_warps = c.num_warps, .tensor_cores = false});
    const bool integer = std::string(c.input) == "i8";
    const bool fused =
        (std::string(c.input) == "f16" || std::string(c.input).starts_with("f8")) && std::string(c.precision) == "ieee";
    if (integer) {
      EXPECT_TRUE(contains(kernel.ptx, "mad.lo.s32") || contains(kernel.ptx, "mul.lo.s32"));
    } else if (fused) {
      // f16 and fp8 products are exact in f32: one fma per product rounds as the interpreter does.
      EXPECT_TRUE(contains(kernel.ptx, "fma.rn.f32"));
    } else {
      // Rounded products then adds, never contracted: `.rn` keeps ptxas from fusing them.
      EXPECT_TRUE(contains(kernel.ptx, "mul.rn.f32"));
      EXPECT_TRUE(contains(kernel.ptx, "add.rn.f32"));
      EXPECT_EQ(count(kernel.ptx, "fma.rn.f32"), 0) << kernel.ptx;
    }
    EXPECT_EQ(count(kernel.ptx, "mul.f32") + count(kernel.ptx, "add.f32"), 0) << "contractible float ops:\n"
                                                                              << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "dot_" + case_name(c));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DotShapes,
    ::testing::Values(DotCase{16, 16, 16, "f16", "f32", "ieee"}, DotCase{64, 64, 32, "f16", "f32", "ieee"},
                      DotCase{32, 64, 16, "bf16", "f32", "ieee"}, DotCase{16, 32, 8, "f32", "f32", "ieee"},
                      DotCase{16, 16, 16, "f32", "f32", "tf32"}, DotCase{16, 16, 16, "f32", "f32", "tf32x3"},
                      DotCase{16, 16, 32, "i8", "i32", "ieee"}, DotCase{16, 32, 16, "f8e4m3", "f32", "ieee"},
                      DotCase{32, 16, 32, "f8e5m2", "f32", "ieee"},
                      // Smaller than one layout tile: replicated elements.
                      DotCase{2, 4, 4, "f16", "f32", "ieee"}, DotCase{4, 1, 16, "f32", "f32", "ieee"},
                      DotCase{1, 64, 16, "f16", "f32", "ieee", 2}, DotCase{128, 8, 4, "bf16", "f32", "ieee", 8}),
    [](const ::testing::TestParamInfo<DotCase>& info) { return case_name(info.param); });

/// Dots on tensor cores: one mma.sync per 16 x 8 accumulator tile a warp
/// holds and k of the instruction: m16n8k16 for f16 and bf16, m16n8k32 for
/// i8, m16n8k8 for f32 at tf32 precision (inputs rounded to tf32 first).
class MmaShapes : public ::testing::TestWithParam<DotCase> {};

TEST_P(MmaShapes, LowersToMmaSyncAndPtxasAccepts) {
  const DotCase& c = GetParam();
  const std::string input = c.input;
  const std::unique_ptr<ir::Function> fn = ir::parse_function(dot_kernel_text(c));
  const lowering::MmaWarps warps = lowering::mma_warps(c.m, c.n, c.num_warps);
  const int k = input == "i8" ? 32 : input == "f32" ? 8 : 16;
  const std::string mma = input == "i8"    ? "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
                          : input == "f32" ? "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
                                           : "mma.sync.aligned.m16n8k16.row.col.f32." + input + "." + input + ".f32";
  const int tiles_per_warp = std::max(1, c.m / (16 * warps.m)) * std::max(1, c.n / (8 * warps.n)) * (c.k / k);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel =
        lowering::compile_for_gpu(*fn, {.arch = arch, .num_warps = c.num_warps, .wgmma = false});
    EXPECT_EQ(count(kernel.ptx, mma), tiles_per_warp) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "fma.rn.f32") + count(kernel.ptx, "mad.lo.s32"), 0);
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "mma_" + case_name(c));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MmaShapes,
    ::testing::Values(DotCase{16, 8, 16, "f16", "f32", "ieee", 1}, DotCase{64, 64, 32, "f16", "f32", "ieee"},
                      DotCase{32, 64, 16, "bf16", "f32", "ieee"}, DotCase{128, 32, 64, "bf16", "f32", "ieee", 8},
                      DotCase{16, 8, 32, "i8", "i32", "ieee", 1}, DotCase{64, 64, 64, "i8", "i32", "ieee"},
                      DotCase{16, 8, 8, "f32", "f32", "tf32", 1}, DotCase{64, 64, 32, "f32", "f32", "tf32"},
                      // Smaller than the warps' tiles: copies.
                      DotCase{8, 4, 16, "f16", "f32", "ieee"}, DotCase{16, 16, 32, "f16", "f32", "ieee", 2},
                      DotCase{8, 4, 32, "i8", "i32", "ieee"}),
    [](const ::testing::TestParamInfo<DotCase>& info) { return case_name(info.param); });

/// fp8 dots on tensor cores from sm_89: one mma.sync m16n8k32 per 16 x 8
/// accumulator tile a warp holds and 32 of K on sm_90a with wgmma off
/// (inline PTX, which ptxas accepts), the FMA units on sm_80.
class Fp8MmaShapes : public ::testing::TestWithParam<DotCase> {};

TEST_P(Fp8MmaShapes, LowersToMmaSyncOnSm90aAndPtxasAccepts) {
  const DotCase& c = GetParam();
  const std::unique_ptr<ir::Function> fn = ir::parse_function(dot_kernel_text(c));
  const lowering::MmaWarps warps = lowering::mma_warps(c.m, c.n, c.num_warps);
  const std::string type = std::string(c.input) == "f8e4m3" ? "e4m3" : "e5m2";
  const std::string mma = "mma.sync.aligned.m16n8k32.row.col.f32." + type + "." + type + ".f32";
  const int tiles_per_warp = std::max(1, c.m / (16 * warps.m)) * std::max(1, c.n / (8 * warps.n)) * (c.k / 32);
  const lowering::GpuKernel sm90a =
      lowering::compile_for_gpu(*fn, {.arch = "sm_90a", .num_warps = c.num_warps, .wgmma = false});
  EXPECT_EQ(count(sm90a.ptx, mma), tiles_per_warp) << sm90a.ptx;
  EXPECT_EQ(count(sm90a.ptx, "fma.rn.f32"), 0);
  KILN_EXPECT_PTXAS_ACCEPTS(sm90a, "sm_90a", "fp8_mma_" + case_name(c));
  const lowering::GpuKernel sm80 = lowering::compile_for_gpu(*fn, {.arch = "sm_80", .num_warps = c.num_warps});
  EXPECT_EQ(count(sm80.ptx, "mma.sync"), 0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Fp8MmaShapes,
                         ::testing::Values(DotCase{16, 8, 32, "f8e4m3", "f32", "ieee", 1},
                                           DotCase{64, 64, 64, "f8e4m3", "f32", "ieee"},
                                           DotCase{32, 64, 32, "f8e5m2", "f32", "ieee"}),
                         [](const ::testing::TestParamInfo<DotCase>& info) { return case_name(info.param); });

/// Dots on wgmma (sm_90a): one wgmma.mma_async per 64-row slice a
/// warpgroup holds, 256-column chunk of N and 32 bytes of K (16 of f16 and
/// bf16, 32 of i8 into s32 and of fp8), in the shared tiles' swizzle mode,
/// and no mma.sync.
class WgmmaShapes : public ::testing::TestWithParam<DotCase> {};

TEST_P(WgmmaShapes, LowersToWgmmaAndPtxasAccepts) {
  const DotCase& c = GetParam();
  const std::unique_ptr<ir::Function> fn = ir::parse_function(dot_kernel_text(c));
  const int slices = c.m / (64 * (c.num_warps / 4)), chunks = std::max(1, c.n / 256);
  const lowering::GpuKernel kernel = lowering::compile_for_gpu(*fn, {.arch = "sm_90a", .num_warps = c.num_warps});
  const std::string input = c.input;
  const bool wide = input == "f16" || input == "bf16";
  const std::string type = input == "i8" ? "s32.s8.s8"
                           : wide        ? "f32." + input + "." + input
                                         : "f32." + input.substr(2) + "." + input.substr(2);
  const int depth = wide ? 16 : 32;
  const std::string instruction = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(std::min(c.n, 256)) + "k" +
                                  std::to_string(depth) + "." + type + " ";
  EXPECT_EQ(count(kernel.ptx, instruction), slices * chunks * (c.k / depth)) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "mma.sync"), 0);
  EXPECT_EQ(count(kernel.ptx, "wgmma.wait_group.sync.aligned 0;"), 1);
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", "wgmma_" + case_name(c));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WgmmaShapes,
    ::testing::Values(DotCase{64, 64, 32, "f16", "f32", "ieee"}, DotCase{64, 8, 16, "bf16", "f32", "ieee"},
                      DotCase{128, 32, 64, "bf16", "f32", "ieee", 8}, DotCase{128, 64, 32, "f16", "f32", "ieee"},
                      DotCase{64, 128, 16, "f16", "f32", "ieee"}, DotCase{256, 64, 16, "f16", "f32", "ieee", 8},
                      DotCase{64, 64, 64, "i8", "i32", "ieee"}, DotCase{64, 32, 32, "f8e4m3", "f32", "ieee"},
                      DotCase{128, 64, 64, "f8e5m2", "f32", "ieee", 8}),
    [](const ::testing::TestParamInfo<DotCase>& info) { return case_name(info.param); });

/// Dots the tensor cores do not take stay on the FMA units: K below 16 for
/// f16 (below 32 for i8), f32 at ieee or tf32x3 precision, or tensor cores
/// off; a 128 x 128 f32 accumulator (in registers) does not.
TEST(MmaFallback, OtherDotsStayOnTheFmaUnits) {
  const DotCase small_k{16, 16, 8, "f16", "f32", "ieee"};
  const DotCase fits{64, 64, 32, "f16", "f32", "ieee"};
  const DotCase small_integer_k{16, 16, 16, "i8", "i32", "ieee"};
  const DotCase ieee{16, 16, 16, "f32", "f32", "ieee"};
  const DotCase three_passes{16, 16, 16, "f32", "f32", "tf32x3"};
  for (const auto& [c, tensor_cores] :
       {std::pair{small_k, true}, std::pair{fits, false}, std::pair{small_integer_k, true}, std::pair{ieee, true},
        std::pair{three_passes, true}}) {
    const std::unique_ptr<ir::Function> fn = ir::parse_function(dot_kernel_text(c));
    const lowering::GpuKernel kernel =
        lowering::compile_for_gpu(*fn, {.arch = "sm_90a", .num_warps = 4, .tensor_cores = tensor_cores});
    EXPECT_EQ(count(kernel.ptx, "mma.sync"), 0) << case_name(c);
    if (std::string(c.input) == "i8")
      EXPECT_TRUE(contains(kernel.ptx, "mad.lo.s32") || contains(kernel.ptx, "mul.lo.s32")) << case_name(c);
    else EXPECT_TRUE(contains(kernel.ptx, std::string(c.input) == "f32" ? "add.rn.f32" : "fma.rn.f32")) << case_name(c);
  }
  const std::unique_ptr<ir::Function> large = ir::parse_function(dot_kernel_text({128, 128, 32, "f16", "f32", "ieee"}));
  EXPECT_GT(count(lowering::compile_for_gpu(*large, {.arch = "sm_90a", .num_warps = 4}).ptx, "wgmma.mma_async"), 0);
  EXPECT_GT(
      count(lowering::compile_for_gpu(*large, {.arch = "sm_90a", .num_warps = 4, .wgmma = false}).ptx, "mma.sync"), 0);
}

/// Whether a kernel must be free of spills or only has its spills reported.
enum class Spills { none_allowed, reported };

/// Lowers `fn` for `archs` (sm_80 and sm_90a) with `num_warps` warps and
/// `max_registers` (0: ptxas chooses), on tensor cores or the FMA units;
/// ptxas must accept each, within the cap and without spills unless
/// `spills` says they are only reported. The registers and spills ptxas
/// reports are printed.
void expect_lowers(const ir::Function& fn, const std::string& stem, Spills spills, bool tensor_cores = false,
                   int num_warps = 4, const std::vector<const char*>& archs = {"sm_80", "sm_90a"},
                   int max_registers = 0) {
  if (!std::filesystem::exists(kPtxas))
    GTEST_SKIP() << kPtxas << " not found: install the CUDA toolkit to check the PTX";
  for (const char* arch : archs) {
    const lowering::GpuKernel kernel = lowering::compile_for_gpu(
        fn, {.arch = arch, .num_warps = num_warps, .max_registers = max_registers, .tensor_cores = tensor_cores});
    if (tensor_cores) {
      // sm_90a puts the dots wgmma takes on it (dot_uses_wgmma).
      EXPECT_TRUE(contains(kernel.ptx, "mma.sync.aligned.m16n8k16") ||
                  (std::string(arch) == "sm_90a" && contains(kernel.ptx, "wgmma.mma_async")))
          << stem;
    } else {
      EXPECT_TRUE(contains(kernel.ptx, "fma.rn.f32") || contains(kernel.ptx, "mul.rn.f32")) << stem;
    }
    const PtxasResult ptxas = run_ptxas(kernel.ptx, arch, stem);
    EXPECT_EQ(ptxas.exit_code, 0) << stem << ": ptxas rejected the PTX:\n" << ptxas.output;
    const int spilled = spill_bytes(ptxas.output);
    if (spills == Spills::none_allowed) {
      EXPECT_EQ(spilled, 0) << stem << ": " << ptxas.output;
    }
    if (max_registers > 0) EXPECT_LE(registers_used(ptxas.output), max_registers) << stem << ": " << ptxas.output;
    std::printf("ptxas -arch=%s %s: %s, %d spill bytes (stores + loads)\n", arch, stem.c_str(),
                register_usage(ptxas.output).c_str(), spilled);
  }
}

/// matmul in configuration G, compiled with its options.
template <class T, kernels::Epilogue E, kernels::MatmulConfig G>
auto compile_matmul() {
  return kl::compile<kernels::matmul<T, T, G.block_m, G.block_n, G.block_k, G.group_m, E>>(G.compile_options());
}

// a, b, c, bias, m, n, k, stride_am, stride_ak (1), stride_bk, stride_bn (1), stride_cm, stride_cn (1), p, seed,
// offset.
constexpr const char* kMatmulLaunchFacts = "aaaaaaaa1a1a1---";

/// matmul in the configuration the library launches on each architecture:
/// sm_80's (lowered for sm_80 and sm_90a, on the FMA units) and sm_90a's
/// (for sm_90a, on the units its dtype runs on there).
template <class T, kernels::Epilogue E>
void expect_matmul_lowers(const std::string& stem) {
  auto sm80 = compile_matmul<T, E, kernels::kMatmulSm80>();
  expect_lowers(sm80.ir(), stem, Spills::none_allowed);
  expect_lowers(sm80.program().specialized(launch_facts(kMatmulLaunchFacts))->optimized(), stem + "_specialized",
                Spills::none_allowed);
  auto sm90a = compile_matmul<T, E, kernels::kMatmulSm90a>();
  expect_lowers(sm90a.program().specialized(launch_facts(kMatmulLaunchFacts))->optimized(),
                stem + "_sm90a_config_specialized", Spills::none_allowed, !std::is_same_v<T, kl::f32>,
                kernels::kMatmulSm90a.num_warps, {"sm_90a"});
}

TEST(DotKernels, MatmulF16Plain) { expect_matmul_lowers<kl::f16, kernels::Epilogue{}>("matmul_f16"); }
TEST(DotKernels, MatmulF16BiasGeluErf) {
  expect_matmul_lowers<kl::f16, kernels::Epilogue{.bias = true, .gelu = kernels::Gelu::erf}>(
      "matmul_f16_bias_gelu_erf");
}
TEST(DotKernels, MatmulF16BiasGeluTanhDropout) {
  expect_matmul_lowers<kl::f16, kernels::Epilogue{.bias = true, .gelu = kernels::Gelu::tanh, .dropout = true}>(
      "matmul_f16_bias_gelu_tanh_dropout");
}
TEST(DotKernels, MatmulBf16Plain) { expect_matmul_lowers<kl::bf16, kernels::Epilogue{}>("matmul_bf16"); }
TEST(DotKernels, MatmulF32Bias) { expect_matmul_lowers<kl::f32, kernels::Epilogue{.bias = true}>("matmul_f32_bias"); }

// attention in the configurations the library launches (kAttentionFmaUnits
// on the FMA units, kAttentionSm80 on tensor cores for sm_80 and sm_90a,
// kAttentionSm90a for sm_90a alone) on the facts a launch on contiguous
// buffers lets the runtime assume: aligned pointers, strides divisible by
// 16, and a sequence length divisible by 16 in the causal variant, not in
// the other. Tensor cores are what f16 and bf16 run on; their FMA path (in
// kAttentionFmaUnits) is checked too (at head_dim 128 only reported).
template <class T, int HEAD_DIM, bool CAUSAL, kernels::AttentionConfig G = kernels::kAttentionFmaUnits<HEAD_DIM>>
void expect_attention_lowers(const std::string& stem, bool tensor_cores, Spills spills,
                             const std::vector<const char*>& archs = {"sm_80", "sm_90a"}) {
  auto compiled = kl::compile<kernels::attention<T, HEAD_DIM, G.block_m, G.block_n, CAUSAL>>(G.compile_options());
  // q, k, v, o, lse, seq, heads, sm_scale, stride_batch, stride_head, stride_seq.
  const std::string facts = CAUSAL ? "aaaaaa--aaa" : "aaaaa---aaa";
  expect_lowers(compiled.program().specialized(launch_facts(facts))->optimized(),
                (tensor_cores ? "mma_" : "") + stem + (CAUSAL ? "_causal" : "") + "_m" + std::to_string(G.block_m) +
                    "_n" + std::to_string(G.block_n) + "_s" + std::to_string(G.num_stages) + "_specialized",
                spills, tensor_cores, G.num_warps, archs, G.max_registers);
}

/// Both variants, causal and not, of attention at T and HEAD_DIM in G.
template <class T, int HEAD_DIM, kernels::AttentionConfig G = kernels::kAttentionFmaUnits<HEAD_DIM>>
void expect_attention_variants_lower(const std::string& stem, bool tensor_cores, Spills spills = Spills::none_allowed) {
  expect_attention_lowers<T, HEAD_DIM, false, G>(stem, tensor_cores, spills);
  expect_attention_lowers<T, HEAD_DIM, true, G>(stem, tensor_cores, spills);
}

TEST(DotKernels, AttentionF16Head64) { expect_attention_variants_lower<kl::f16, 64>("attention_f16_d64", false); }
// f16 and bf16 at head_dim 128 run on tensor cores; on the FMA units (tensor
// cores off) ptxas for sm_80 settles on 128 registers and spills a few bytes
// (8 to 16), so those spills are reported, not checked.
TEST(DotKernels, AttentionF16Head128) {
  expect_attention_variants_lower<kl::f16, 128>("attention_f16_d128", false, Spills::reported);
}
TEST(DotKernels, AttentionBf16Head64) { expect_attention_variants_lower<kl::bf16, 64>("attention_bf16_d64", false); }
TEST(DotKernels, AttentionBf16Head128) {
  expect_attention_variants_lower<kl::bf16, 128>("attention_bf16_d128", false, Spills::reported);
}
TEST(DotKernels, AttentionF32Head64) { expect_attention_variants_lower<kl::f32, 64>("attention_f32_d64", false); }
TEST(DotKernels, AttentionF32Head128) { expect_attention_variants_lower<kl::f32, 128>("attention_f32_d128", false); }

// attention_with_key_lengths, the same program with the keys counted from
// its key_lengths argument, on tensor cores (f16), causal and not, without
// spills.
template <int HEAD_DIM, bool CAUSAL, kernels::AttentionConfig G = kernels::kAttentionSm80<HEAD_DIM>>
void expect_attention_with_key_lengths_lowers(Spills spills,
                                              const std::vector<const char*>& archs = {"sm_80", "sm_90a"}) {
  auto compiled = kl::compile<kernels::attention_with_key_lengths<kl::f16, HEAD_DIM, G.block_m, G.block_n, CAUSAL>>(
      G.compile_options());
  // q, k, v, o, lse, key_lengths, seq, heads, sm_scale, stride_batch, stride_head, stride_seq.
  const std::string facts = CAUSAL ? "aaaaaaa--aaa" : "aaaaaa---aaa";
  expect_lowers(compiled.program().specialized(launch_facts(facts))->optimized(),
                "mma_attention_key_lengths_f16_d" + std::to_string(HEAD_DIM) + (CAUSAL ? "_causal" : "") + "_m" +
                    std::to_string(G.block_m) + "_n" + std::to_string(G.block_n) + "_s" + std::to_string(G.num_stages) +
                    "_specialized",
                spills, true, G.num_warps, archs, G.max_registers);
}
TEST(DotKernelsOnTensorCores, AttentionWithKeyLengthsF16) {
  expect_attention_with_key_lengths_lowers<64, false>(Spills::none_allowed);
  expect_attention_with_key_lengths_lowers<64, true>(Spills::none_allowed);
  expect_attention_with_key_lengths_lowers<128, false>(Spills::none_allowed);
  expect_attention_with_key_lengths_lowers<128, true>(Spills::none_allowed);
}

// sm_90a's configuration for f16 and bf16 (kAttentionSm90a), lowered for
// sm_90a, where both dots run on wgmma: no spills, causal or not, with key
// lengths or without.
template <class T, int HEAD_DIM>
void expect_sm90a_attention_lowers(const std::string& stem) {
  constexpr kernels::AttentionConfig config = kernels::kAttentionSm90a<HEAD_DIM>;
  expect_attention_lowers<T, HEAD_DIM, false, config>(stem, true, Spills::none_allowed, {"sm_90a"});
  expect_attention_lowers<T, HEAD_DIM, true, config>(stem, true, Spills::none_allowed, {"sm_90a"});
}
TEST(DotKernelsOnTensorCores, AttentionInSm90aConfiguration) {
  expect_sm90a_attention_lowers<kl::f16, 64>("attention_f16_d64");
  expect_sm90a_attention_lowers<kl::f16, 128>("attention_f16_d128");
  expect_sm90a_attention_lowers<kl::bf16, 64>("attention_bf16_d64");
  expect_sm90a_attention_lowers<kl::bf16, 128>("attention_bf16_d128");
  expect_attention_with_key_lengths_lowers<64, false, kernels::kAttentionSm90a<64>>(Spills::none_allowed, {"sm_90a"});
  expect_attention_with_key_lengths_lowers<64, true, kernels::kAttentionSm90a<64>>(Spills::none_allowed, {"sm_90a"});
  expect_attention_with_key_lengths_lowers<128, false, kernels::kAttentionSm90a<128>>(Spills::none_allowed, {"sm_90a"});
  expect_attention_with_key_lengths_lowers<128, true, kernels::kAttentionSm90a<128>>(Spills::none_allowed, {"sm_90a"});
}

// attention without argument facts (a launch on misaligned pointers or
// strides): the vector width is 1, so the kernel's 2-D layout puts one
// element per thread along a row and the 32 lanes of a warp along the row
// (Triton's blocked layout does the same); at head_dim 64 each thread then
// holds 32 of the 128 rows (4 with facts) of every row vector of the online
// softmax, and ptxas spills. Reported, not checked; head_dim 128 is left out.
TEST(DotKernels, AttentionF16Head64WithoutFacts) {
  constexpr kernels::AttentionConfig config = kernels::kAttentionSm80<64>;
  auto compiled =
      kl::compile<kernels::attention<kl::f16, 64, config.block_m, config.block_n, false>>(config.compile_options());
  expect_lowers(compiled.ir(), "attention_f16_d64_m" + std::to_string(config.block_m), Spills::reported, false,
                config.num_warps);
}

// The conv2d + batchnorm + SiLU gemm variant at each tile plan_conv2d
// chooses, in both orders of its reduction, in f32, which the library runs
// on the FMA units (f16 and bf16 take the tensor cores:
// DotKernelsOnTensorCores below). 128 positions only beside 64 channels,
// at 8 warps.
template <int POSITIONS, int CHANNELS>
void expect_conv2d_gemm_lowers(const std::string& stem) {
  constexpr int kWarps = POSITIONS == 128 ? 8 : 4;
  expect_lowers(kl::compile<kernels::conv2d_bn_silu_gemm<kl::f32, POSITIONS, CHANNELS, 32>>().ir(), stem,
                Spills::none_allowed, false, kWarps);
  expect_lowers(kl::compile<kernels::conv2d_bn_silu_gemm<kl::f32, POSITIONS, CHANNELS, 32, true, true>>().ir(),
                stem + "_taps_outer", Spills::none_allowed, false, kWarps);
}

TEST(DotKernels, Conv2dGemm128x64) { expect_conv2d_gemm_lowers<128, 64>("conv2d_gemm_f32_128x64x32"); }
TEST(DotKernels, Conv2dGemm64x64) { expect_conv2d_gemm_lowers<64, 64>("conv2d_gemm_f32_64x64x32"); }
TEST(DotKernels, Conv2dGemm64x32) { expect_conv2d_gemm_lowers<64, 32>("conv2d_gemm_f32_64x32x32"); }
TEST(DotKernels, Conv2dGemm16x64) { expect_conv2d_gemm_lowers<16, 64>("conv2d_gemm_f32_16x64x32"); }
TEST(DotKernels, Conv2dGemm64x16) { expect_conv2d_gemm_lowers<64, 16>("conv2d_gemm_f32_64x16x32"); }
TEST(DotKernels, Conv2dGemm16x32) { expect_conv2d_gemm_lowers<16, 32>("conv2d_gemm_f32_16x32x32"); }
TEST(DotKernels, Conv2dGemm16x16) { expect_conv2d_gemm_lowers<16, 16>("conv2d_gemm_f32_16x16x32"); }
TEST(DotKernels, Conv2dGemmF32Unfused) {
  expect_lowers(kl::compile<kernels::conv2d_bn_silu_gemm<kl::f32, 64, 32, 32, false>>().ir(),
                "conv2d_gemm_f32_64x32x32_unfused", Spills::none_allowed);
}

// The same kernels with their f16 and bf16 dots on tensor cores.
TEST(DotKernelsOnTensorCores, MatmulF16) {
  auto compiled = compile_matmul<kl::f16, kernels::Epilogue{}, kernels::kMatmulSm80>();
  expect_lowers(compiled.ir(), "mma_matmul_f16", Spills::none_allowed, true);
  expect_lowers(compiled.program().specialized(launch_facts(kMatmulLaunchFacts))->optimized(),
                "mma_matmul_f16_specialized", Spills::none_allowed, true);
}
TEST(DotKernelsOnTensorCores, MatmulBf16BiasGeluTanhDropout) {
  constexpr kernels::Epilogue epilogue{.bias = true, .gelu = kernels::Gelu::tanh, .dropout = true};
  auto compiled = compile_matmul<kl::bf16, epilogue, kernels::kMatmulSm80>();
  expect_lowers(compiled.program().specialized(launch_facts(kMatmulLaunchFacts))->optimized(),
                "mma_matmul_bf16_bias_gelu_tanh_dropout_specialized", Spills::none_allowed, true);
}
// The library's default epilogue (bias, erf GELU, dropout) at sm_80's
// configuration, as a launch on contiguous buffers compiles it, without
// spills: ptxas fits it in 96 registers for sm_80, five programs per SM, and
// 91 for sm_90a (matmul.hpp). CompileOptions::max_registers caps the count
// (.maxnreg): 104 lets ptxas take more, 80 forces it to spill.
template <class T>
void expect_default_epilogue_fits_registers(const std::string& stem) {
  if (!std::filesystem::exists(kPtxas))
    GTEST_SKIP() << kPtxas << " not found: install the CUDA toolkit to check the PTX";
  constexpr kernels::Epilogue epilogue{.bias = true, .gelu = kernels::Gelu::erf, .dropout = true};
  constexpr kernels::MatmulConfig g = kernels::kMatmulSm80;
  constexpr auto kernel = kernels::matmul<T, T, g.block_m, g.block_n, g.block_k, g.group_m, epilogue>;
  // ptxas at `arch` on the kernel compiled with `options`, as a launch
  // on contiguous buffers specialises it.
  auto assemble = [&](const kl::CompileOptions& options, const char* arch, const std::string& name) {
    auto compiled = kl::compile<kernel>(options);
    const ir::Function& fn = compiled.program().specialized(launch_facts(kMatmulLaunchFacts))->optimized();
    const lowering::GpuKernel gpu = lowering::compile_for_gpu(
        fn, {.arch = arch, .num_warps = g.num_warps, .max_registers = compiled.program().options().max_registers});
    const PtxasResult ptxas = run_ptxas(gpu.ptx, arch, name);
    EXPECT_EQ(ptxas.exit_code, 0) << name << ": ptxas rejected the PTX:\n" << ptxas.output;
    std::printf("ptxas -arch=%s %s: %s, %d spill bytes (stores + loads)\n", arch, name.c_str(),
                register_usage(ptxas.output).c_str(), spill_bytes(ptxas.output));
    return ptxas.output;
  };
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const std::string output = assemble(g.compile_options(), arch, stem + "_" + arch);
    EXPECT_EQ(spill_bytes(output), 0) << stem << " " << arch << ": " << output;
  }
  kl::CompileOptions capped = g.compile_options();
  capped.max_registers = 104;
  const std::string roomier = assemble(capped, "sm_80", stem + "_maxnreg104");
  EXPECT_EQ(spill_bytes(roomier), 0) << roomier;
  EXPECT_GT(registers_used(roomier), 96) << "ptxas keeps 96 unless the cap lets it take more: " << roomier;
  EXPECT_LE(registers_used(roomier), 104) << roomier;
  capped.max_registers = 80;
  const std::string tighter = assemble(capped, "sm_80", stem + "_maxnreg80");
  EXPECT_LE(registers_used(tighter), 80) << tighter;
  EXPECT_GT(spill_bytes(tighter), 0) << "80 registers cannot hold what 96 do: " << tighter;
}
TEST(DotKernelsOnTensorCores, MatmulF16BiasGeluErfDropout) {
  expect_default_epilogue_fits_registers<kl::f16>("mma_matmul_f16_bias_gelu_erf_dropout_specialized");
}
TEST(DotKernelsOnTensorCores, MatmulBf16BiasGeluErfDropout) {
  expect_default_epilogue_fits_registers<kl::bf16>("mma_matmul_bf16_bias_gelu_erf_dropout_specialized");
}
TEST(DotKernelsOnTensorCores, AttentionF16Head64) {
  expect_attention_variants_lower<kl::f16, 64, kernels::kAttentionSm80<64>>("attention_f16_d64", true);
}
TEST(DotKernelsOnTensorCores, AttentionF16Head128) {
  expect_attention_variants_lower<kl::f16, 128, kernels::kAttentionSm80<128>>("attention_f16_d128", true);
}
TEST(DotKernelsOnTensorCores, AttentionBf16Head64) {
  expect_attention_variants_lower<kl::bf16, 64, kernels::kAttentionSm80<64>>("attention_bf16_d64", true);
}
TEST(DotKernelsOnTensorCores, AttentionBf16Head128) {
  expect_attention_variants_lower<kl::bf16, 128, kernels::kAttentionSm80<128>>("attention_bf16_d128", true);
}
// f16 conv2d gemm at each tile plan_conv2d chooses, in both orders of its
// reduction (128 positions at 8 warps), on tensor cores.
template <int POSITIONS, int CHANNELS>
void expect_conv2d_gemm_lowers_on_tensor_cores() {
  const std::string stem = "mma_conv2d_gemm_f16_" + std::to_string(POSITIONS) + "x" + std::to_string(CHANNELS) + "x32";
  constexpr int kWarps = POSITIONS == 128 ? 8 : 4;
  expect_lowers(kl::compile<kernels::conv2d_bn_silu_gemm<kl::f16, POSITIONS, CHANNELS, 32>>().ir(), stem,
                Spills::none_allowed, true, kWarps);
  expect_lowers(kl::compile<kernels::conv2d_bn_silu_gemm<kl::f16, POSITIONS, CHANNELS, 32, true, true>>().ir(),
                stem + "_taps_outer", Spills::none_allowed, true, kWarps);
}
TEST(DotKernelsOnTensorCores, Conv2dGemm128x64) { expect_conv2d_gemm_lowers_on_tensor_cores<128, 64>(); }
TEST(DotKernelsOnTensorCores, Conv2dGemm64x64) { expect_conv2d_gemm_lowers_on_tensor_cores<64, 64>(); }
TEST(DotKernelsOnTensorCores, Conv2dGemm64x32) { expect_conv2d_gemm_lowers_on_tensor_cores<64, 32>(); }
TEST(DotKernelsOnTensorCores, Conv2dGemm16x64) { expect_conv2d_gemm_lowers_on_tensor_cores<16, 64>(); }
TEST(DotKernelsOnTensorCores, Conv2dGemm64x16) { expect_conv2d_gemm_lowers_on_tensor_cores<64, 16>(); }
TEST(DotKernelsOnTensorCores, Conv2dGemm16x32) { expect_conv2d_gemm_lowers_on_tensor_cores<16, 32>(); }
TEST(DotKernelsOnTensorCores, Conv2dGemm16x16) { expect_conv2d_gemm_lowers_on_tensor_cores<16, 16>(); }

}  // namespace
}  // namespace kiln::codegen_test
