// Layer norm forward over the rows of an [m, n] row-major matrix:
// y = (x - mean) / sqrt(var + eps) * w + b, one program per row. A row that
// fits one column tile is loaded once (twice where its sums overflow) and its
// mean and variance computed in two passes over the registers. A longer row
// is read twice: once for its mean and variance (each column tile's own mean
// and centred sum of squares, merged into the running ones with Chan's
// update), once to write y. Either way the variance never subtracts two large
// sums. When a sum overflows f32 (a row of 1000 values of 1e36, say) the
// statistics are taken again, of the row scaled by a power of two that brings
// its largest magnitude below 2 (norm_scale; running in the tiled kernel),
// each mean corrected once by the mean of the deviations from it, which makes
// a constant row's mean exact (its centred values are then exactly 0); other
// rows keep their arithmetic.
// The per-row mean and 1/sqrt(var + eps) are stored in f32 for the backward.
// Statistics are in f32 whatever the dtype; y is in the dtype.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kiln/kernels/layer_norm_common.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

/// One program per row of x ([rows, n], row-major) for rows that fit one
/// column tile (n <= BLOCK_N): x, w and b are loaded once (x twice in a row
/// whose sums overflow).
template <class T, int BLOCK_N>
void layer_norm_forward_row_tile(kl::Ptr<T> x, kl::Ptr<T> weight, kl::Ptr<T> bias, kl::Ptr<T> y,
                                 kl::Ptr<kl::f32> mean_out, kl::Ptr<kl::f32> rstd_out, kl::i32 n, kl::f32 eps) {
  auto row = kl::program_id(0);
  // Row offsets in i64: rows * n may pass 2^31 even when n does not.
  auto row_start = kl::cast<kl::i64>(row) * n;
  auto cols = kl::arange<BLOCK_N>();
  auto mask = cols < n;
  auto n_f32 = kl::cast<kl::f32>(n);
  auto values = kl::cast<kl::f32>(kl::load(x + row_start + cols, mask));
  kl::Var mean = kl::sum(values, kl::axis<0>) / n_f32;
  kl::Var centred = kl::where(mask, values - mean, 0.0f);
  kl::Var variance = kl::sum(centred * centred, kl::axis<0>) / n_f32;
  kl::Var scale = kl::f32(1.0f);
  // A sum that overflowed (or a row with inf or NaN) leaves the variance inf
  // or NaN: then again, in units of norm_scale, with the corrected mean.
  // The row is read again there, so that `values` need not stay live past
  // the centring (f32 on sm_80: 64 registers instead of 73, four programs
  // of 8 warps per SM instead of three).
  kl::if_(kl::isinf(variance) | kl::isnan(variance), [&] {
    auto row_again = kl::cast<kl::f32>(kl::load(x + row_start + cols, mask));
    scale = norm_scale(kl::max(kl::abs(row_again), kl::axis<0>));
    auto scaled = row_again / scale;
    auto rough_mean = kl::sum(scaled, kl::axis<0>) / n_f32;
    mean = rough_mean + kl::sum(kl::where(mask, scaled - rough_mean, 0.0f), kl::axis<0>) / n_f32;
    centred = kl::where(mask, scaled - mean, 0.0f);
    variance = kl::sum(centred * centred, kl::axis<0>) / n_f32;
  });
  auto inverse = 1.0f / scale;
  auto rstd = kl::rsqrt(variance + scaled_eps(eps, inverse));
  kl::store(mean_out + row, mean * scale);
  kl::store(rstd_out + row, unscaled_rstd(variance, rstd, eps, inverse));
  auto w = kl::cast<kl::f32>(kl::load(weight + cols, mask));
  auto b = kl::cast<kl::f32>(kl::load(bias + cols, mask));
  kl::store(y + row_start + cols, centred * rstd * w + b, mask);
}

/// The running count, mean and sum of centred squares (M2) of the tiles of a
/// row so far: the mean in units of `scale` and M2 in units of scale^2.
struct RowStatistics {
  kl::Var<kl::f32> count = kl::f32(0.0f);
  kl::Var<kl::f32> mean = kl::f32(0.0f);
  kl::Var<kl::f32> centred_squares = kl::f32(0.0f);
  kl::Var<kl::f32> scale = kl::f32(1.0f);
};

/// Merges a tile's count, mean and M2 into `stats` (same units): Chan, Golub
/// and LeVeque's pairwise update.
inline void merge_tile(RowStatistics& stats, const kl::f32& tile_count, const kl::f32& tile_mean,
                       const kl::f32& tile_squares) {
  auto merged_count = stats.count + tile_count;
  auto delta = tile_mean - stats.mean;
  auto tile_share = tile_count / merged_count;
  stats.centred_squares = stats.centred_squares + tile_squares + delta * delta * stats.count * tile_share;
  stats.mean = stats.mean + delta * tile_share;
  stats.count = merged_count;
}

/// Folds the row's tiles, BLOCK_N columns at a time, into `stats`. SCALED:
/// each tile in units of the largest norm_scale so far (stats.scale, growing
/// with the tiles; the statistics so far are moved to it, exactly), its mean
/// corrected once; else as they are (scale 1).
template <bool SCALED, int BLOCK_N, class T>
void accumulate_row_statistics(RowStatistics& stats, kl::Ptr<T> x_row, kl::i32 n) {
  for (auto start : kl::range(0, n, BLOCK_N)) {
    auto cols = start + kl::arange<BLOCK_N>();
    auto mask = cols < n;
    auto values = kl::cast<kl::f32>(kl::load(x_row + cols, mask));
    auto tile_count = kl::cast<kl::f32>(kl::minimum(n - start, BLOCK_N));
    if constexpr (SCALED) {
      auto merged_scale = kl::maximum(stats.scale, norm_scale(kl::max(kl::abs(values), kl::axis<0>)));
      auto inverse = 1.0f / merged_scale;
      auto rescale = stats.scale * inverse;  // a power of two
      auto scaled = values * inverse;
      auto rough_mean = kl::sum(scaled, kl::axis<0>) / tile_count;
      auto tile_mean = rough_mean + kl::sum(kl::where(mask, scaled - rough_mean, 0.0f), kl::axis<0>) / tile_count;
      auto centred = kl::where(mask, scaled - tile_mean, 0.0f);
      stats.mean = stats.mean * rescale;
      stats.centred_squares = stats.centred_squares * rescale * rescale;
      stats.scale = merged_scale;
      merge_tile(stats, tile_count, tile_mean, kl::sum(centred * centred, kl::axis<0>));
    } else {
      auto tile_mean = kl::sum(values, kl::axis<0>) / tile_count;
      auto centred = kl::where(mask, values - tile_mean, 0.0f);
      merge_tile(stats, tile_count, tile_mean, kl::sum(centred * centred, kl::axis<0>));
    }
  }
}

/// One program per row of x ([rows, n], row-major), any n: BLOCK_N columns at
/// a time.
template <class T, int BLOCK_N>
void layer_norm_forward(kl::Ptr<T> x, kl::Ptr<T> weight, kl::Ptr<T> bias, kl::Ptr<T> y, kl::Ptr<kl::f32> mean_out,
                        kl::Ptr<kl::f32> rstd_out, kl::i32 n, kl::f32 eps) {
  auto row = kl::program_id(0);
  // Row offsets in i64: rows * n may pass 2^31 even when n does not.
  auto row_start = kl::cast<kl::i64>(row) * n;
  auto x_row = x + row_start;
  auto y_row = y + row_start;
  RowStatistics stats;
  accumulate_row_statistics<false, BLOCK_N>(stats, x_row, n);
  // A sum that overflowed (or a row with inf or NaN) leaves M2 inf or NaN:
  // then the first pass again, in units of norm_scale, with corrected means.
  kl::if_(kl::isinf(stats.centred_squares) | kl::isnan(stats.centred_squares), [&] {
    stats.count = kl::f32(0.0f);
    stats.mean = kl::f32(0.0f);
    stats.centred_squares = kl::f32(0.0f);
    accumulate_row_statistics<true, BLOCK_N>(stats, x_row, n);
  });
  auto inverse = 1.0f / stats.scale;
  auto variance = stats.centred_squares / stats.count;
  auto rstd = kl::rsqrt(variance + scaled_eps(eps, inverse));
  kl::store(mean_out + row, stats.mean * stats.scale);
  kl::store(rstd_out + row, unscaled_rstd(variance, rstd, eps, inverse));
  for (auto start : kl::range(0, n, BLOCK_N)) {
    auto cols = start + kl::arange<BLOCK_N>();
    auto mask = cols < n;
    auto values = kl::cast<kl::f32>(kl::load(x_row + cols, mask));
    auto w = kl::cast<kl::f32>(kl::load(weight + cols, mask));
    auto b = kl::cast<kl::f32>(kl::load(bias + cols, mask));
    kl::store(y_row + cols, (values * inverse - stats.mean) * rstd * w + b, mask);
  }
}

/// Calls fn with the compiled forward kernel for rows of `n` elements of C:
/// the one-tile kernel with tile norm_block_size(n) when the row fits, else
/// the tiled kernel with norm_max_block-wide tiles.
template <class C, class F>
decltype(auto) with_layer_norm_forward(std::int64_t n, F&& fn) {
  if (n > norm_max_block)
    return fn(kl::compile<layer_norm_forward<kl::Scalar<C>, norm_max_block>>(norm_compile_options(norm_max_block)));
  switch (norm_block_size(n)) {
    case 256: return fn(kl::compile<layer_norm_forward_row_tile<kl::Scalar<C>, 256>>(norm_compile_options(256)));
    case 1024: return fn(kl::compile<layer_norm_forward_row_tile<kl::Scalar<C>, 1024>>(norm_compile_options(1024)));
    default:
      return fn(kl::compile<layer_norm_forward_row_tile<kl::Scalar<C>, norm_max_block>>(
          norm_compile_options(norm_max_block)));
  }
}

/// Runs the forward over `rows` rows of `n`: y, mean and rstd ([rows] f32 each).
template <class C>
runtime::LaunchStats layer_norm_forward_launch(const Buffer<C>& x, const Buffer<C>& weight, const Buffer<C>& bias,
                                               const Buffer<C>& y, const Buffer<float>& mean, const Buffer<float>& rstd,
                                               std::int64_t rows, std::int64_t n, float eps) {
  return with_layer_norm_forward<C>(n, [&](auto kernel) {
    return kernel.launch(kl::Grid(static_cast<int>(rows)), x, weight, bias, y, mean, rstd, n, eps);
  });
}

/// The forward in double: y, and each row's mean and 1 / sqrt(var + eps).
struct LayerNormReference {
  std::vector<double> y, mean, rstd;
};

/// The reference: each row's mean and (biased) variance in double, two passes.
template <class C>
LayerNormReference layer_norm_reference(const std::vector<C>& x, const std::vector<C>& weight,
                                        const std::vector<C>& bias, std::int64_t rows, std::int64_t n, double eps) {
  LayerNormReference ref{std::vector<double>(x.size()), std::vector<double>(rows), std::vector<double>(rows)};
  for (std::int64_t r = 0; r < rows; ++r) {
    const C* in = x.data() + r * n;
    double mean = 0, var = 0;
    for (std::int64_t c = 0; c < n; ++c) mean += element_value(in[c]);
    mean /= static_cast<double>(n);
    for (std::int64_t c = 0; c < n; ++c) var += (element_value(in[c]) - mean) * (element_value(in[c]) - mean);
    var /= static_cast<double>(n);
    const double rstd = 1 / std::sqrt(var + eps);
    ref.mean[r] = mean;
    ref.rstd[r] = rstd;
    for (std::int64_t c = 0; c < n; ++c)
      ref.y[r * n + c] = (element_value(in[c]) - mean) * rstd * element_value(weight[c]) + element_value(bias[c]);
  }
  return ref;
}

/// Absolute error bounds of each y, mean and rstd the kernel computes.
struct LayerNormBounds {
  std::vector<double> y, mean, rstd;
};

/// Bounds on |kernel - reference| for the forward with column tile `block`, y
/// in dtype `output` and f32 statistics (u = 2^-24). They hold for both
/// kernels: the one-tile kernel is the tiled one with k = 1 and no merge.
///
/// Per row, with k = ceil(n / block) tiles and at most p = min(n, block)
/// elements in a tile, g(j) = gamma_j(u), X = max |x|, D = max |x - mean| and
/// s = 1 / rstd (the kernels work on x scaled by a power of two, which is
/// exact but for scaled values below f32's normal range, each then off by at
/// most 2^-126 u X: p of them stay below u X):
/// - mean: a tile's plain mean m1 (a sum of at most p terms, within
///   g(p - 1) p X of exact in any order, then / p) is within g(p) X of the
///   tile's exact mean; each of the k merges, mean + delta * share with
///   delta = tile mean - mean (at most 2X), rounds delta, share, the product
///   and the sum: under 8 u X each. So |d mean| <= g(p + 8k) X on the usual
///   path. On the scaled path (sums that overflowed) the correction adds the
///   mean of the rounded x - m1, each within u of |x - m1| <= D_t + g(p) X
///   (D_t = max |x - tile mean|, at most 2D, and D for one tile): within
///   g(p + 1)(D_t + g(p) X) of m1's exact error, then rounds the sum (u X):
///   g(8k + 2) X + g(p + 2)(D_t + g(p) X) with the merges. e is the larger.
/// - variance: the centred squares (a subtraction, a square: nonnegative
///   terms) sum to within g(p + 2) relative; the merges add 6 roundings each
///   and the /n and +eps one each: g(p + 6k + 4) relative to var + eps = s^2.
///   Centring a tile on a mean off by at most e adds n_b e^2 to its sum of
///   squares (the cross term vanishes): (e/s)^2 relative in all. Each of the
///   k - 1 merges adds delta^2 n_a n_b / (n_a + n_b) with delta, the difference
///   of two tile means (at most 2D, D = max |x - mean|), off by up to 2e:
///   at most (2 D 2e + 4e^2) n / 4 each, (k - 1)(2 D e + e^2) / s^2 relative in
///   all. So var + eps is within v = g(p + 6k + 4) + k (e/s)^2 + 2 (k - 1) D e / s^2
///   relative, and rsqrt (2 ulp) gives rstd within r = v/2 + 2u relative.
/// - xhat = (x - mean) * rstd: within e/s (1 + r) + (r + 2u) |xhat|.
/// - y = xhat * w + b: |w| times that, 2u (|xhat w| + |b|) for the product and
///   the sum, and output_rounding_error of the result in the dtype.
template <class C>
LayerNormBounds layer_norm_error_bounds(const std::vector<C>& x, const std::vector<C>& weight,
                                        const std::vector<C>& bias, const LayerNormReference& ref, std::int64_t rows,
                                        std::int64_t n, int block, ir::DType output) {
  const double u = std::ldexp(1.0, -24);
  const double tiles = static_cast<double>((n + block - 1) / block);
  const double per_tile = static_cast<double>(std::min<std::int64_t>(n, block));
  LayerNormBounds bounds{std::vector<double>(x.size()), std::vector<double>(rows), std::vector<double>(rows)};
  for (std::int64_t r = 0; r < rows; ++r) {
    double largest = 0;
    for (std::int64_t c = 0; c < n; ++c) largest = std::max(largest, std::abs(element_value(x[r * n + c])));
    double deviation = 0;
    for (std::int64_t c = 0; c < n; ++c)
      deviation = std::max(deviation, std::abs(element_value(x[r * n + c]) - ref.mean[r]));
    const double tile_deviation = (tiles > 1 ? 2 : 1) * deviation;
    const double mean_error =
        std::max(rounding_bound(per_tile + 8 * tiles, u) * largest,
                 rounding_bound(8 * tiles + 2, u) * largest +
                     rounding_bound(per_tile + 2, u) * (tile_deviation + rounding_bound(per_tile, u) * largest));
    const double spread = 1 / ref.rstd[r];
    const double shift = mean_error / spread;
    const double var_error = rounding_bound(per_tile + 6 * tiles + 4, u) + tiles * shift * shift +
                             2 * (tiles - 1) * deviation / spread * shift;
    const double rstd_error = var_error / 2 + 2 * u;
    bounds.mean[r] = mean_error;
    bounds.rstd[r] = rstd_error * ref.rstd[r];
    for (std::int64_t c = 0; c < n; ++c) {
      const std::int64_t i = r * n + c;
      const double w = std::abs(element_value(weight[c])), b = std::abs(element_value(bias[c]));
      const double xhat = std::abs((element_value(x[i]) - ref.mean[r]) * ref.rstd[r]);
      const double xhat_error = shift * (1 + rstd_error) + (rstd_error + 2 * u) * xhat;
      const double before_rounding = w * xhat_error + 2 * u * (xhat * w + b);
      bounds.y[i] = before_rounding + output_rounding_error(output, std::abs(ref.y[i]) + before_rounding);
    }
  }
  return bounds;
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::layer_norm_forward, "x", "weight", "bias", "y", "mean_out", "rstd_out", "n", "eps");
KILN_PARAMETERS(kiln::kernels::layer_norm_forward_row_tile, "x", "weight", "bias", "y", "mean_out", "rstd_out", "n",
                "eps");
