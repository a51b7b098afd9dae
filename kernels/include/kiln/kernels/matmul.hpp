// Matrix multiplication with a fused epilogue: C = epilogue(A @ B) for
// row-major A [M, K], B [K, N] and C [M, N] given by pointers and strides.
// Each program computes one BLOCK_M x BLOCK_N tile of C with an f32
// accumulator over K in steps of BLOCK_K; programs are ordered in groups of
// GROUP_M tile rows so that neighbouring programs share tiles of A and B in
// L2 (Triton's matmul tutorial). The epilogue, chosen at compile time, adds
// a bias per column, applies GELU (erf or tanh form) and dropout, and the
// store casts to the output dtype. Every tail of M, N and K is masked (A's
// rows past M are read as its last row, and their results not stored).
// Also the reference in double with a per-element error bound.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <source_location>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/kernels/accuracy.hpp"
#include "kiln/kernels/dropout.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

// [book:epilogue]
enum class Gelu { none, erf, tanh };

/// The operations applied to the f32 accumulator before the store (a
/// structural template parameter of the kernels).
struct Epilogue {
  bool bias = false;       // + bias[n]
  Gelu gelu = Gelu::none;  // GELU after the bias
  bool dropout = false;    // dropout after GELU (probability, seed and offset are kernel arguments)
};
// [/book:epilogue]

/// The (tile row, tile column) of C that program `pid` computes, in groups of
/// GROUP_M tile rows: within a group the programs walk down the rows first,
/// so consecutive programs reuse the same columns of B. The last group is
/// shorter when the tile rows are not a multiple of GROUP_M.
template <int GROUP_M>
std::pair<kl::i32, kl::i32> grouped_tile(const kl::i32& pid, const kl::i32& tiles_m, const kl::i32& tiles_n) {
  static_assert(GROUP_M >= 1, "grouped_tile: GROUP_M must be at least 1");
  auto programs_per_group = tiles_n * GROUP_M;
  auto first_row = (pid / programs_per_group) * GROUP_M;
  auto group_rows = kl::minimum(tiles_m - first_row, GROUP_M);
  auto within = pid % programs_per_group;
  return {first_row + within % group_rows, within / group_rows};
}

/// The epilogue's bias and GELU on an f32 tile `x` whose columns are `cols`
/// (a [1, BLOCK_N] tile of indices, masked against n for the bias load).
template <Epilogue EPILOGUE, Numeric X, class BiasPtr, Numeric Cols>
auto apply_bias_gelu(const X& x, const BiasPtr& bias, const Cols& cols, const kl::i32& n) {
  plain_t<X> y = x;
  if constexpr (EPILOGUE.bias) y = y + kl::cast<kl::f32>(kl::load(bias + cols, cols < n));
  if constexpr (EPILOGUE.gelu == Gelu::erf) y = kl::gelu(y);
  if constexpr (EPILOGUE.gelu == Gelu::tanh) y = kl::gelu_tanh(y);
  return y;
}

/// C = epilogue(A @ B). A grid of cdiv(m, BLOCK_M) * cdiv(n, BLOCK_N)
/// programs (one axis). T is the element type of A, B and the bias; Out that
/// of C. Element (i, j) of C draws its dropout decision with offset
/// `offset + i * n + j`, the offset the standalone dropout kernel gives it in
/// a contiguous C. bias, p, seed and offset are ignored when the epilogue
/// does not use them.
template <class T, class Out, int BLOCK_M, int BLOCK_N, int BLOCK_K, int GROUP_M, Epilogue EPILOGUE>
void matmul(kl::Ptr<T> a, kl::Ptr<T> b, kl::Ptr<Out> c, kl::Ptr<T> bias, kl::i32 m, kl::i32 n, kl::i32 k,
            kl::i32 stride_am, kl::i32 stride_ak, kl::i32 stride_bk, kl::i32 stride_bn, kl::i32 stride_cm,
            kl::i32 stride_cn, kl::f32 p, kl::i64 seed, kl::i32 offset) {
  static_assert(std::has_single_bit(unsigned{BLOCK_M}) && std::has_single_bit(unsigned{BLOCK_N}) &&
                    std::has_single_bit(unsigned{BLOCK_K}),
                "matmul: BLOCK_M, BLOCK_N and BLOCK_K must be powers of two");
  auto [tile_m, tile_n] = grouped_tile<GROUP_M>(kl::program_id(0), kl::cdiv(m, BLOCK_M), kl::cdiv(n, BLOCK_N));
  auto rows = kl::expand_dims<1>(tile_m * BLOCK_M + kl::arange<BLOCK_M>());
  auto cols = kl::expand_dims<0>(tile_n * BLOCK_N + kl::arange<BLOCK_N>());
  auto row_mask = rows < m;
  auto col_mask = cols < n;
  // The first tiles of A and B, and the offsets along K, are computed once;
  // each step moves the pointers by k0 and masks against the K left. Rows
  // of the tile past m read A's last row instead of being masked (Triton's
  // tutorial wraps them around m): they only make rows of C the store
  // leaves out, and each thread's copies of A, several rows of one run of
  // K, then share one mask (the K loop's SASS per iteration: 112 -> 102 on
  // sm_90a, 86 -> 82 on sm_80).
  auto k_across = kl::expand_dims<0>(kl::arange<BLOCK_K>());
  auto k_down = kl::expand_dims<1>(kl::arange<BLOCK_K>());
  auto first_a = a + kl::minimum(rows, m - 1) * stride_am + k_across * stride_ak;
  auto first_b = b + k_down * stride_bk + cols * stride_bn;
  kl::Var acc = kl::zeros<kl::f32, BLOCK_M, BLOCK_N>();
  for (auto k0 : kl::range(0, k, BLOCK_K)) {
    auto k_left = k - k0;
    auto tile_a = kl::load(first_a + k0 * stride_ak, k_across < k_left);
    auto tile_b = kl::load(first_b + k0 * stride_bk, (k_down < k_left) & col_mask);
    acc = kl::dot(tile_a, tile_b, acc);
  }
  // [book:epilogue_store]
  auto y = apply_bias_gelu<EPILOGUE>(acc, bias, cols, n);
  auto out = c + rows * stride_cm + cols * stride_cn;
  if constexpr (EPILOGUE.dropout)
    kl::store(out, kl::cast<Out>(dropout_apply(y, seed, offset + rows * n + cols, p)), row_mask & col_mask);
  else kl::store(out, kl::cast<Out>(y), row_mask & col_mask);
  // [/book:epilogue_store]
}

/// One configuration of matmul: the BLOCK_M x BLOCK_N tile of C a program
/// computes, BLOCK_K, GROUP_M, and the warps and software-pipelining stages
/// it is compiled with (a structural template parameter of the library's
/// entries).
struct MatmulConfig {
  int block_m, block_n, block_k, group_m, num_warps, num_stages;

  CompileOptions compile_options() const {
    CompileOptions options;
    options.num_warps = num_warps;
    options.num_stages = num_stages;
    return options;
  }
};

/// The configuration for sm_90a, chosen from the generated code (no GPU has
/// timed it yet; the first run on one must compare it with cuBLAS and with
/// the 64 x 64 x 32 and 128 x 256 x 64 tiles):
/// - 8 warps are two warpgroups, each taking a 64 x 128 slice of C with one
///   wgmma m64n128k16 per 16 of K: 4 per iteration, reading the 16-bit
///   tiles straight from the rings. Per iteration a program copies 32 KiB
///   for 2 x 128 x 128 x 64 flops, 64 flops a byte, twice what 64 x 64 x 32
///   tiles give (and 4 times the tensor-core work per thread).
/// - 3 stages of 32 KiB are 96 KiB of rings, what the pipeliner allows
///   (software_pipeline.cpp), so the K loop keeps two iterations of copies
///   in flight; 128 x 256 tiles (Triton's first tutorial entry) would get
///   only 2 stages.
/// - ptxas (sm_90a, CUDA 13): 118 registers plain, 158 with bias and erf
///   GELU, 126 with bias, tanh GELU and dropout, 166 with bias, erf GELU
///   and dropout for f16 and bf16 (f32, on the FMA units: 174 with bias),
///   no spills for any dtype and epilogue (dot_test.cpp, bench/compare);
///   Triton's matmul at these tiles with that epilogue takes 255 and spills
///   1572 bytes (bench/compare, matmul_kiln_tiles). At 4 warps the
///   accumulator alone would take 128 registers a thread.
inline constexpr MatmulConfig kMatmulSm90a{
    .block_m = 128, .block_n = 128, .block_k = 64, .group_m = 8, .num_warps = 8, .num_stages = 3};
/// The configuration for sm_80 and every other target (the cpu and emu
/// devices included, emu-sm_90a aside): 4 warps splitting C 2 x 2, each
/// holding a 32 x 32 quarter in 2 x 4 mma.sync m16n8k16 tiles, its operands
/// read by ldmatrix (4 of a, 4 of b per iteration: mma_warps) from 3 stages
/// of 8 KiB rings (24.5 KiB of shared memory with the epilogue's scratch, so
/// several programs share an SM). ptxas (sm_80, CUDA 13, at a launch's
/// facts) picks 96 registers, plain and with the default bias, erf GELU and
/// dropout, without spills: five programs per SM
/// (CompileOptions::max_registers = 104 gives it 102, four); compiled for
/// sm_90a, 91 (dot_test.cpp checks both). Not yet timed on a GPU either.
inline constexpr MatmulConfig kMatmulSm80{
    .block_m = 64, .block_n = 64, .block_k = 32, .group_m = 8, .num_warps = 4, .num_stages = 3};

/// A configuration as a type, for the dispatch below.
template <MatmulConfig CONFIG>
struct matmul_config_tag {
  static constexpr MatmulConfig value = CONFIG;
};

/// fn(matmul_config_tag<c>{}) for the configuration c the library launches
/// on GPU architecture `arch`: kMatmulSm90a on sm_90a, kMatmulSm80 elsewhere.
template <class F>
decltype(auto) with_matmul_config(std::string_view arch, F&& fn) {
  if (arch == "sm_90a") return fn(matmul_config_tag<kMatmulSm90a>{});
  return fn(matmul_config_tag<kMatmulSm80>{});
}

// ---------------------------------------------------------------------------
// Host reference.

/// GELU in double, in the form the epilogue names; at -inf its limit, -0 (the
/// formulas give -inf * 0 there), as the kernels' GELU does.
inline double gelu_reference(double x, Gelu form) {
  if (form != Gelu::none && x == -std::numeric_limits<double>::infinity()) return -0.0;
  switch (form) {
    case Gelu::erf: return 0.5 * x * (1 + std::erf(x * 0.7071067811865476));
    case Gelu::tanh: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    default: return x;
  }
}

/// What the reference needs to know besides the inputs.
struct MatmulProblem {
  int m = 0, n = 0, k = 0;
  Epilogue epilogue;
  float p = 0;  // dropout probability (used when epilogue.dropout)
  std::uint64_t seed = 0;
  std::uint32_t offset = 0;
  ir::DType out_dtype = ir::DType::f32;
  /// Times the result is rounded to the output dtype: 1 fused; 2 in the
  /// unfused sequence, which stores the GELU output before dropout.
  int output_roundings = 1;
};

// [book:reference_bound]
/// epilogue(A @ B) in double for contiguous row-major a [m, k], b [k, n] and
/// bias [n], with a bound on the error of a correct kernel per element:
/// - x = a_i . b_j + bias_j: each of the k products (exact in f32 for f16 and
///   bf16, one rounding for f32) passes through at most k additions in the f32
///   accumulator including the bias: |dx| <= gamma_{k+2}(u_f32) * mag, with
///   mag = sum |a b| + |bias| (plus the double reference's gamma_{k+2}(2^-53)).
/// - GELU: |gelu'| <= 1.13 for both forms (at most 1.1290, near x = 1.4), so the
///   error of x grows at most 1.13x; evaluating either form in f32 adds at
///   most 8 u_f32 |x| (the erf form: its argument, erf (a few ulp; its
///   absolute error at most 3u since |erf| <= 1 and t erf'(t) <= 0.49), 1 +
///   erf and the product with x/2 give ~4u |x|; the tanh form ~5u |x|; a
///   factor 2 covers libm's accuracy).
/// - dropout: dropped elements are exactly 0; kept ones are scaled by
///   1 / (1 - p), whose f32 evaluation (2 roundings) and product (1) add
///   gamma_3(u_f32) relative.
/// - each rounding to the output dtype adds u_out |z| + its underflow allowance.
// [/book:reference_bound]
template <class C>
ReferenceWithBounds matmul_reference(const std::vector<C>& a, const std::vector<C>& b, const std::vector<C>& bias,
                                     const MatmulProblem& problem) {
  const double u32 = unit_roundoff(ir::DType::f32), u_out = unit_roundoff(problem.out_dtype);
  auto gamma = [](double terms, double u) { return terms * u / (1 - terms * u); };
  const double accumulation = gamma(problem.k + 2.0, u32) + gamma(problem.k + 2.0, 0x1p-53);
  const double gamma3 = gamma(3, u32);
  const double scale = 1.0 / (1.0 - static_cast<double>(problem.p));
  const auto n = static_cast<std::size_t>(problem.n), k = static_cast<std::size_t>(problem.k);
  ReferenceWithBounds ref;
  ref.values.assign(static_cast<std::size_t>(problem.m) * n, 0.0);
  ref.bounds.assign(ref.values.size(), 0.0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(problem.m); ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double x = 0, magnitude = 0;
      for (std::size_t t = 0; t < k; ++t) {
        const double product = static_cast<double>(a[i * k + t]) * static_cast<double>(b[t * n + j]);
        x += product;
        magnitude += std::abs(product);
      }
      if (problem.epilogue.bias) {
        x += static_cast<double>(bias[j]);
        magnitude += std::abs(static_cast<double>(bias[j]));
      }
      double error = accumulation * magnitude;
      double y = x;
      if (problem.epilogue.gelu != Gelu::none) {
        y = gelu_reference(x, problem.epilogue.gelu);
        error = 1.13 * error + 8 * u32 * std::abs(x);
      }
      if (problem.epilogue.dropout) {
        const auto element_offset = problem.offset + static_cast<std::uint32_t>(i * n + j);
        if (!dropout_keep_host(problem.seed, element_offset, problem.p)) continue;
        y *= scale;
        error = scale * error + gamma3 * (std::abs(y) + scale * error);
      }
      error += problem.output_roundings * (u_out * (std::abs(y) + error) + underflow_allowance(problem.out_dtype));
      ref.values[i * n + j] = y;
      ref.bounds[i * n + j] = error;
    }
  }
  return ref;
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::matmul, "a", "b", "c", "bias", "m", "n", "k", "stride_am", "stride_ak", "stride_bk",
                "stride_bn", "stride_cm", "stride_cn", "p", "seed", "offset");
