// What the row-normalisation kernels (layer norm forward and backward, RMS
// norm) share: the column tile chosen from the row length, the error bound of
// k roundings and of the rounding to the output dtype, turning elementwise
// bounds into the tolerance of a normwise check, and reading stored elements
// as doubles.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/kernels/accuracy.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

/// The widest column tile of the norm kernels: a row up to this long is held in
/// one tile (registers on a GPU: 4096 f32 are 16 per thread at 8 warps);
/// longer rows are walked in tiles of this width.
inline constexpr int norm_max_block = 4096;

/// The column tile for rows of `n` elements: 256, 1024 or 4096, the smallest
/// that holds the row (past 256, at most 3/4 of the tile is masked off), else
/// norm_max_block. Three sizes keep the number of compiled variants small.
constexpr int norm_block_size(std::int64_t n) {
  if (n <= 256) return 256;
  if (n <= 1024) return 1024;
  return norm_max_block;
}

/// Compile options for a norm kernel with column tile `block`: one warp per
/// 256 columns, 1 to 8 warps (enough threads to cover the tile without
/// spilling registers on a GPU).
inline CompileOptions norm_compile_options(int block) {
  CompileOptions options;
  options.num_warps = std::clamp(block / 256, 1, 8);
  return options;
}

/// The power of two that scales a row of f32 values whose largest magnitude is
/// `largest` to below 2 in magnitude: 2^e, e the exponent of `largest`, when
/// that is at least 1, else 1 (small rows are not scaled up). Multiplying by
/// the inverse of a power of two is exact (but where a value falls below f32's
/// normal range, some 2^126 below the row's largest), so the scaled row's
/// arithmetic gives the unscaled arithmetic's bits times a power of two, while
/// its sums of n values or n squares stay far from overflow for any finite row.
/// A row with inf or NaN gets 2^127, the largest: its inf stays inf, so that
/// mean(x^2) is inf, rstd 0 and every finite x normalises to 0, as in the
/// unscaled arithmetic.
inline kl::f32 norm_scale(const kl::f32& largest) {
  // Clearing the mantissa leaves 2^floor(log2 largest) for a normal number,
  // 0 for 0 and subnormals, inf for inf and NaN.
  auto exponent_only = kl::bitcast<kl::f32>(kl::bitcast<kl::i32>(largest) & 0x7f800000);
  return kl::clamp(exponent_only, 1.0f, 0x1p127f);
}

/// eps in the units of a row multiplied by `inverse` (a power of two at most
/// 1), so that mean(x^2) + eps scales with the row: eps * inverse^2, but not
/// below f32's smallest normal number (or eps, if that is smaller). Where the
/// scale is huge, eps * inverse^2 underflows to 0, and a constant row, whose
/// centred values and variance are exactly 0, would compute 0 * rsqrt(0), NaN;
/// the floor changes nothing else, as a row that is not constant has a scaled
/// variance far above it.
inline kl::f32 scaled_eps(const kl::f32& eps, const kl::f32& inverse) {
  return kl::minimum(eps, kl::maximum(eps * inverse * inverse, std::numeric_limits<float>::min()));
}

/// The stored 1 / sqrt(variance + eps) from a row's variance and rstd in the
/// units of the row multiplied by `inverse`: rstd * inverse, but 1 / sqrt(eps)
/// for a variance of 0, where scaled_eps's floor stood in for eps.
inline kl::f32 unscaled_rstd(const kl::f32& scaled_variance, const kl::f32& scaled_rstd, const kl::f32& eps,
                             const kl::f32& inverse) {
  return kl::where(scaled_variance == 0.0f, kl::rsqrt(eps), scaled_rstd * inverse);
}

/// gamma_k = k u / (1 - k u): the bound on the relative error accumulated by k
/// successive roundings with unit roundoff u (Higham, Accuracy and Stability of
/// Numerical Algorithms, lemma 3.1). A sum of n terms in any order is within
/// gamma_{n-1} * sum |terms| of the exact sum.
inline double rounding_bound(double k, double u) { return k * u / (1 - k * u); }

/// The largest error of rounding y to `dtype`: u |y| + half the subnormal
/// spacing (the absolute error of rounding below the smallest normal number).
inline double output_rounding_error(ir::DType dtype, double y) {
  double half_subnormal_spacing;
  switch (dtype) {
    case ir::DType::f16: half_subnormal_spacing = std::ldexp(1.0, -25); break;
    case ir::DType::bf16: half_subnormal_spacing = std::ldexp(1.0, -134); break;
    case ir::DType::f64: half_subnormal_spacing = std::ldexp(1.0, -1075); break;
    default: half_subnormal_spacing = std::ldexp(1.0, -150); break;
  }
  return unit_roundoff(dtype) * std::abs(y) + half_subnormal_spacing;
}

/// One checked output: its normwise relative error against the reference and
/// the tolerance its elementwise error bounds give.
struct NormCheck {
  double error = 0, tolerance = 0;
};

/// When every |got_i - want_i| <= bounds_i, ||got - want|| <= ||bounds||: the
/// normwise relative error is at most ||bounds|| / ||want|| (||bounds|| when
/// want is all zeros, as relative_error does).
template <class T>
NormCheck norm_check(const std::vector<T>& got, const std::vector<double>& want, const std::vector<double>& bounds) {
  return {relative_error(got, want), normwise_tolerance(want, bounds)};
}

/// The check to report for several outputs: the one with the largest error
/// when all are within their tolerances, else the one furthest beyond its
/// tolerance (so the report fails exactly when one output does).
inline NormCheck worst_check(std::initializer_list<NormCheck> checks) {
  auto over = [](const NormCheck& c) {
    if (c.error <= c.tolerance) return 0.0;
    return c.tolerance > 0 ? c.error / c.tolerance : std::numeric_limits<double>::infinity();
  };
  const bool all_within =
      std::all_of(checks.begin(), checks.end(), [](const NormCheck& c) { return c.error <= c.tolerance; });
  return all_within
             ? *std::max_element(checks.begin(), checks.end(), [](auto& a, auto& b) { return a.error < b.error; })
             : *std::max_element(checks.begin(), checks.end(), [&](auto& a, auto& b) { return over(a) < over(b); });
}

/// A stored element (float, double, half, bfloat16) as a double.
template <class C>
double element_value(C v) {
  if constexpr (std::is_floating_point_v<C>) return static_cast<double>(v);
  else return static_cast<double>(static_cast<float>(v));
}

}  // namespace kiln::kernels
