// RMS norm forward over the rows of an [m, n] row-major matrix:
// y = x / sqrt(mean(x^2) + eps) * w, one program per row. A row that fits one
// column tile is loaded once; a longer row is read twice: one pass summing the
// squares (a tile of f32 partial sums, reduced at the end), one writing y.
// When the sum of squares overflows f32 (|x| above about 2^64 / sqrt(n)), the
// squares are summed again of the row scaled by a power of two that brings its
// largest magnitude below 2 (norm_scale; running in the tiled kernel), so that
// a row of finite values still normalises; other rows keep their arithmetic.
// The per-row 1/sqrt(mean(x^2) + eps) is stored in f32 for a backward.
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
/// column tile (n <= BLOCK_N): x and w are loaded once.
template <class T, int BLOCK_N>
void rms_norm_forward_row_tile(kl::Ptr<T> x, kl::Ptr<T> weight, kl::Ptr<T> y, kl::Ptr<kl::f32> rstd_out, kl::i32 n,
                               kl::f32 eps) {
  auto row = kl::program_id(0);
  // Row offsets in i64: rows * n may pass 2^31 even when n does not.
  auto row_start = kl::cast<kl::i64>(row) * n;
  auto cols = kl::arange<BLOCK_N>();
  auto mask = cols < n;
  auto values = kl::cast<kl::f32>(kl::load(x + row_start + cols, mask));
  kl::Var scaled = values;
  kl::Var mean_square = kl::sum(values * values, kl::axis<0>) / kl::cast<kl::f32>(n);
  kl::Var inverse = kl::f32(1.0f);
  // Squares whose sum overflowed leave mean(x^2) inf: then again, in units of
  // norm_scale (a row with inf or NaN gets its old answer again).
  kl::if_(kl::isinf(mean_square), [&] {
    inverse = 1.0f / norm_scale(kl::max(kl::abs(values), kl::axis<0>));
    scaled = values * inverse;
    mean_square = kl::sum(scaled * scaled, kl::axis<0>) / kl::cast<kl::f32>(n);
  });
  auto rstd = kl::rsqrt(mean_square + scaled_eps(eps, inverse));
  kl::store(rstd_out + row, unscaled_rstd(mean_square, rstd, eps, inverse));
  auto w = kl::cast<kl::f32>(kl::load(weight + cols, mask));
  kl::store(y + row_start + cols, scaled * rstd * w, mask);
}

/// Adds the squares of the row's tiles, BLOCK_N columns at a time, to the
/// partial sums `squares`. SCALED: in units of the largest norm_scale so far
/// (`scale`, growing with the tiles; the sums so far are moved to it,
/// exactly); else as they are (scale 1).
template <bool SCALED, int BLOCK_N, class T>
void accumulate_squares(kl::Var<kl::Tile<kl::f32, BLOCK_N>>& squares, kl::Var<kl::f32>& scale, kl::Ptr<T> x_row,
                        kl::i32 n) {
  for (auto start : kl::range(0, n, BLOCK_N)) {
    auto cols = start + kl::arange<BLOCK_N>();
    auto values = kl::cast<kl::f32>(kl::load(x_row + cols, cols < n));
    if constexpr (SCALED) {
      auto merged_scale = kl::maximum(scale, norm_scale(kl::max(kl::abs(values), kl::axis<0>)));
      auto inverse = 1.0f / merged_scale;
      auto rescale = scale * inverse;  // a power of two
      auto scaled = values * inverse;
      squares = squares * (rescale * rescale) + scaled * scaled;
      scale = merged_scale;
    } else {
      squares = squares + values * values;
    }
  }
}

/// One program per row of x ([rows, n], row-major), any n: BLOCK_N columns at
/// a time.
template <class T, int BLOCK_N>
void rms_norm_forward(kl::Ptr<T> x, kl::Ptr<T> weight, kl::Ptr<T> y, kl::Ptr<kl::f32> rstd_out, kl::i32 n,
                      kl::f32 eps) {
  auto row = kl::program_id(0);
  // Row offsets in i64: rows * n may pass 2^31 even when n does not.
  auto row_start = kl::cast<kl::i64>(row) * n;
  auto x_row = x + row_start;
  auto y_row = y + row_start;
  // Partial sums of the squares in units of scale^2.
  kl::Var squares = kl::zeros<kl::f32, BLOCK_N>();
  kl::Var scale = kl::f32(1.0f);
  accumulate_squares<false, BLOCK_N>(squares, scale, x_row, n);
  kl::Var mean_square = kl::sum(squares, kl::axis<0>) / kl::cast<kl::f32>(n);
  // Squares whose sum overflowed leave mean(x^2) inf: then again, in units of
  // norm_scale (a row with inf or NaN gets its old answer again).
  kl::if_(kl::isinf(mean_square), [&] {
    squares = kl::zeros<kl::f32, BLOCK_N>();
    accumulate_squares<true, BLOCK_N>(squares, scale, x_row, n);
    mean_square = kl::sum(squares, kl::axis<0>) / kl::cast<kl::f32>(n);
  });
  auto inverse = 1.0f / scale;
  auto rstd = kl::rsqrt(mean_square + scaled_eps(eps, inverse));
  kl::store(rstd_out + row, unscaled_rstd(mean_square, rstd, eps, inverse));
  for (auto start : kl::range(0, n, BLOCK_N)) {
    auto cols = start + kl::arange<BLOCK_N>();
    auto mask = cols < n;
    auto values = kl::cast<kl::f32>(kl::load(x_row + cols, mask));
    auto w = kl::cast<kl::f32>(kl::load(weight + cols, mask));
    kl::store(y_row + cols, values * inverse * rstd * w, mask);
  }
}

/// Calls fn with the compiled kernel for rows of `n` elements of C: the
/// one-tile kernel with tile norm_block_size(n) when the row fits, else the
/// tiled kernel with norm_max_block-wide tiles.
template <class C, class F>
decltype(auto) with_rms_norm_forward(std::int64_t n, F&& fn) {
  if (n > norm_max_block)
    return fn(kl::compile<rms_norm_forward<kl::Scalar<C>, norm_max_block>>(norm_compile_options(norm_max_block)));
  switch (norm_block_size(n)) {
    case 256: return fn(kl::compile<rms_norm_forward_row_tile<kl::Scalar<C>, 256>>(norm_compile_options(256)));
    case 1024: return fn(kl::compile<rms_norm_forward_row_tile<kl::Scalar<C>, 1024>>(norm_compile_options(1024)));
    default:
      return fn(
          kl::compile<rms_norm_forward_row_tile<kl::Scalar<C>, norm_max_block>>(norm_compile_options(norm_max_block)));
  }
}

/// Runs the RMS norm over `rows` rows of `n`: y and rstd ([rows] f32).
template <class C>
runtime::LaunchStats rms_norm_forward_launch(const Buffer<C>& x, const Buffer<C>& weight, const Buffer<C>& y,
                                             const Buffer<float>& rstd, std::int64_t rows, std::int64_t n, float eps) {
  return with_rms_norm_forward<C>(
      n, [&](auto kernel) { return kernel.launch(kl::Grid(static_cast<int>(rows)), x, weight, y, rstd, n, eps); });
}

/// The RMS norm in double: y and each row's 1 / sqrt(mean(x^2) + eps).
struct RmsNormReference {
  std::vector<double> y, rstd;
};

template <class C>
RmsNormReference rms_norm_reference(const std::vector<C>& x, const std::vector<C>& weight, std::int64_t rows,
                                    std::int64_t n, double eps) {
  RmsNormReference ref{std::vector<double>(x.size()), std::vector<double>(rows)};
  for (std::int64_t r = 0; r < rows; ++r) {
    double squares = 0;
    for (std::int64_t c = 0; c < n; ++c) squares += element_value(x[r * n + c]) * element_value(x[r * n + c]);
    const double rstd = 1 / std::sqrt(squares / static_cast<double>(n) + eps);
    ref.rstd[r] = rstd;
    for (std::int64_t c = 0; c < n; ++c)
      ref.y[r * n + c] = element_value(x[r * n + c]) * rstd * element_value(weight[c]);
  }
  return ref;
}

/// Absolute error bounds of each y and rstd the kernel computes.
struct RmsNormBounds {
  std::vector<double> y, rstd;
};

/// Bounds on |kernel - reference| for y in dtype `output` and f32 statistics
/// (u = 2^-24). The squares are nonnegative, so
/// their sum (one rounding per square, n - 1 additions in any order) is within
/// gamma_n relative; /n and +eps add one rounding each: mean(x^2) + eps within
/// gamma_{n+2}, and rsqrt (2 ulp) gives rstd within r = gamma_{n+2}/2 + 2u.
/// (Where the kernels square x scaled by a power of two, that is exact but for
/// scaled values below f32's normal range: their squares, under 2^-252 of
/// the largest, vanish next to the sum's roundings.)
/// y = x * rstd * w adds two roundings, then the rounding to the dtype:
/// |d y| <= (r + 2u)|y| plus output_rounding_error of the result. No
/// cancellation occurs, so the bound is relative (but for underflow in the
/// dtype) and independent of the data.
inline RmsNormBounds rms_norm_error_bounds(const RmsNormReference& ref, std::int64_t n, ir::DType output) {
  const double u = std::ldexp(1.0, -24);
  const double rstd_error = rounding_bound(static_cast<double>(n) + 2, u) / 2 + 2 * u;
  RmsNormBounds bounds{std::vector<double>(ref.y.size()), std::vector<double>(ref.rstd.size())};
  for (std::size_t i = 0; i < ref.y.size(); ++i) {
    const double before_rounding = (rstd_error + 2 * u) * std::abs(ref.y[i]);
    bounds.y[i] = before_rounding + output_rounding_error(output, std::abs(ref.y[i]) + before_rounding);
  }
  for (std::size_t r = 0; r < ref.rstd.size(); ++r) bounds.rstd[r] = rstd_error * ref.rstd[r];
  return bounds;
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::rms_norm_forward, "x", "weight", "y", "rstd_out", "n", "eps");
KILN_PARAMETERS(kiln::kernels::rms_norm_forward_row_tile, "x", "weight", "y", "rstd_out", "n", "eps");
