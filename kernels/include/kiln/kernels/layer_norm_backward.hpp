// Layer norm backward: from dy, x, w and the forward's per-row mean and rstd,
// dx = rstd * (w dy - mean(w dy) - xhat * mean(w dy xhat)) for every row, and
// dw = sum over rows of dy * xhat, db = sum over rows of dy.
//
// dw and db are reduced in parallel, deterministically and without locks
// (Triton's layer-norm tutorial accumulates them under a spin lock instead):
// program g of G handles rows g, g + G, g + 2G, … and sums its rows' dy * xhat
// and dy into one partial row of two [G, n] f32 buffers; a second kernel sums
// the G partial rows, column tile by column tile, into dw and db. The order of
// every addition is fixed by G and the tile sizes, so results repeat exactly.
//
// dx is in the dtype; dw and db are in f32 (sums over all rows, kept at the
// precision of the statistics, as an optimizer's f32 master weights want them).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kiln/kernels/layer_norm_common.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

/// dx for rows group, group + G, … (G = the grid size) of rows that fit one
/// column tile (n <= BLOCK_N); the group's sums of dy * xhat and dy stay in
/// registers and are written once, as row `group` of partial_dw and partial_db.
/// w is loaded again for every row (from the L1 cache after the first):
/// holding it too would take 16 more registers a thread at 4096 columns, 142
/// instead of about 120 on sm_90a, and then the
/// layer_norm_backward_programs_per_unit programs that the grid plans for
/// would not fit one multiprocessor's registers together.
template <class T, int BLOCK_N>
void layer_norm_backward_rows(kl::Ptr<T> dy, kl::Ptr<T> x, kl::Ptr<T> weight, kl::Ptr<kl::f32> mean,
                              kl::Ptr<kl::f32> rstd, kl::Ptr<T> dx, kl::Ptr<kl::f32> partial_dw,
                              kl::Ptr<kl::f32> partial_db, kl::i32 rows, kl::i32 n) {
  auto group = kl::program_id(0);
  auto cols = kl::arange<BLOCK_N>();
  auto mask = cols < n;
  auto n_f32 = kl::cast<kl::f32>(n);
  kl::Var dw = kl::zeros<kl::f32, BLOCK_N>();
  kl::Var db = kl::zeros<kl::f32, BLOCK_N>();
  for (auto row : kl::range(group, rows, kl::num_programs(0))) {
    // Row offsets in i64: rows * n may pass 2^31 even when n does not.
    auto row_start = kl::cast<kl::i64>(row) * n;
    auto w = kl::cast<kl::f32>(kl::load(weight + cols, mask));
    auto values = kl::cast<kl::f32>(kl::load(x + row_start + cols, mask));
    auto grad = kl::cast<kl::f32>(kl::load(dy + row_start + cols, mask));
    auto row_rstd = kl::load(rstd + row);
    auto xhat = kl::where(mask, (values - kl::load(mean + row)) * row_rstd, 0.0f);
    auto w_grad = w * grad;
    auto mean_w_grad_xhat = kl::sum(w_grad * xhat, kl::axis<0>) / n_f32;
    auto mean_w_grad = kl::sum(w_grad, kl::axis<0>) / n_f32;
    kl::store(dx + row_start + cols, (w_grad - (xhat * mean_w_grad_xhat + mean_w_grad)) * row_rstd, mask);
    dw = dw + grad * xhat;
    db = db + grad;
  }
  // Partial-row offsets in i64 too: groups * n may pass 2^31.
  auto partial_start = kl::cast<kl::i64>(group) * n;
  kl::store(partial_dw + partial_start + cols, dw, mask);
  kl::store(partial_db + partial_start + cols, db, mask);
}

// [book:tiled]
/// The same for rows of any length, BLOCK_N columns at a time: each row is
/// read twice (the two row means, then dx), and the group's partial dw and db
/// rows, too long for registers, are accumulated in place in partial_dw and
/// partial_db. Only this program touches its partial row, and it reads each
/// element back after its own store, in program order.
// [/book:tiled]
template <class T, int BLOCK_N>
void layer_norm_backward_rows_tiled(kl::Ptr<T> dy, kl::Ptr<T> x, kl::Ptr<T> weight, kl::Ptr<kl::f32> mean,
                                    kl::Ptr<kl::f32> rstd, kl::Ptr<T> dx, kl::Ptr<kl::f32> partial_dw,
                                    kl::Ptr<kl::f32> partial_db, kl::i32 rows, kl::i32 n) {
  auto group = kl::program_id(0);
  auto n_f32 = kl::cast<kl::f32>(n);
  // Partial-row offsets in i64: groups * n may pass 2^31.
  auto dw_row = partial_dw + kl::cast<kl::i64>(group) * n;
  auto db_row = partial_db + kl::cast<kl::i64>(group) * n;
  for (auto start : kl::range(0, n, BLOCK_N)) {
    auto cols = start + kl::arange<BLOCK_N>();
    kl::store(dw_row + cols, 0.0f, cols < n);
    kl::store(db_row + cols, 0.0f, cols < n);
  }
  for (auto row : kl::range(group, rows, kl::num_programs(0))) {
    // Row offsets in i64: rows * n may pass 2^31 even when n does not.
    auto row_start = kl::cast<kl::i64>(row) * n;
    auto row_mean = kl::load(mean + row);
    auto row_rstd = kl::load(rstd + row);
    kl::Var w_grad_xhat_sums = kl::zeros<kl::f32, BLOCK_N>();
    kl::Var w_grad_sums = kl::zeros<kl::f32, BLOCK_N>();
    for (auto start : kl::range(0, n, BLOCK_N)) {
      auto cols = start + kl::arange<BLOCK_N>();
      auto mask = cols < n;
      auto values = kl::cast<kl::f32>(kl::load(x + row_start + cols, mask));
      auto w_grad =
          kl::cast<kl::f32>(kl::load(weight + cols, mask)) * kl::cast<kl::f32>(kl::load(dy + row_start + cols, mask));
      auto xhat = kl::where(mask, (values - row_mean) * row_rstd, 0.0f);
      w_grad_xhat_sums = w_grad_xhat_sums + w_grad * xhat;
      w_grad_sums = w_grad_sums + w_grad;
    }
    auto mean_w_grad_xhat = kl::sum(w_grad_xhat_sums, kl::axis<0>) / n_f32;
    auto mean_w_grad = kl::sum(w_grad_sums, kl::axis<0>) / n_f32;
    for (auto start : kl::range(0, n, BLOCK_N)) {
      auto cols = start + kl::arange<BLOCK_N>();
      auto mask = cols < n;
      auto values = kl::cast<kl::f32>(kl::load(x + row_start + cols, mask));
      auto grad = kl::cast<kl::f32>(kl::load(dy + row_start + cols, mask));
      auto w_grad = kl::cast<kl::f32>(kl::load(weight + cols, mask)) * grad;
      auto xhat = kl::where(mask, (values - row_mean) * row_rstd, 0.0f);
      kl::store(dx + row_start + cols, (w_grad - (xhat * mean_w_grad_xhat + mean_w_grad)) * row_rstd, mask);
      // [book:tiled_accumulate]
      kl::store(dw_row + cols, kl::load(dw_row + cols, mask) + grad * xhat, mask);
      kl::store(db_row + cols, kl::load(db_row + cols, mask) + grad, mask);
      // [/book:tiled_accumulate]
    }
  }
}

/// dw and db: each program sums the `groups` partial rows of BLOCK_N columns,
/// BLOCK_G rows at a time, in a [BLOCK_G, BLOCK_N] tile reduced at the end.
template <int BLOCK_G, int BLOCK_N>
void layer_norm_backward_reduce(kl::Ptr<kl::f32> partial_dw, kl::Ptr<kl::f32> partial_db, kl::Ptr<kl::f32> dw,
                                kl::Ptr<kl::f32> db, kl::i32 groups, kl::i32 n) {
  auto cols = kl::program_id(0) * BLOCK_N + kl::arange<BLOCK_N>();
  auto col_mask = cols < n;
  kl::Var dw_sums = kl::zeros<kl::f32, BLOCK_G, BLOCK_N>();
  kl::Var db_sums = kl::zeros<kl::f32, BLOCK_G, BLOCK_N>();
  for (auto first : kl::range(0, groups, BLOCK_G)) {
    auto group = first + kl::arange<BLOCK_G>();
    // Row offsets in i64 (groups * n may pass 2^31), column offsets in i32.
    auto row_starts = kl::expand_dims<1>(kl::cast<kl::i64>(group) * n);
    auto mask = kl::expand_dims<1>(group < groups) & kl::expand_dims<0>(col_mask);
    dw_sums = dw_sums + kl::load(partial_dw + row_starts + kl::expand_dims<0>(cols), mask);
    db_sums = db_sums + kl::load(partial_db + row_starts + kl::expand_dims<0>(cols), mask);
  }
  kl::store(dw + cols, kl::sum(dw_sums, kl::axis<0>), col_mask);
  kl::store(db + cols, kl::sum(db_sums, kl::axis<0>), col_mask);
}

/// The reduce kernel's tile: 16 partial rows by 256 columns.
inline constexpr int layer_norm_reduce_block_groups = 16;
inline constexpr int layer_norm_reduce_block_cols = 256;

/// Programs of the row kernel per compute unit (a multiprocessor on a GPU):
/// two keep every unit busy and hide one program's latency behind another's.
inline constexpr int layer_norm_backward_programs_per_unit = 2;

// [book:groups]
/// The number of partial rows G for `rows` rows on a device running
/// `compute_units` programs at once: layer_norm_backward_programs_per_unit
/// (two) programs per unit, and each program gets at least 8 rows so that
/// writing and re-reading the [G, n] partials (8 G n bytes each way for dw
/// and db) stays small next to the rows' own traffic (at least 6 n bytes per
/// row for dy, x and dx in f16).
inline int layer_norm_backward_groups(std::int64_t rows, int compute_units) {
  return static_cast<int>(std::clamp<std::int64_t>(
      rows / 8, 1, layer_norm_backward_programs_per_unit * static_cast<std::int64_t>(std::max(compute_units, 1))));
}
// [/book:groups]

/// Calls fn with the compiled row kernel for rows of `n` elements of C: the
/// register-partial kernel with tile norm_block_size(n) when a row fits one
/// tile, else the tiled kernel with norm_max_block-wide tiles.
template <class C, class F>
decltype(auto) with_layer_norm_backward_rows(std::int64_t n, F&& fn) {
  if (n > norm_max_block)
    return fn(kl::compile<layer_norm_backward_rows_tiled<kl::Scalar<C>, norm_max_block>>(
        norm_compile_options(norm_max_block)));
  switch (norm_block_size(n)) {
    case 256: return fn(kl::compile<layer_norm_backward_rows<kl::Scalar<C>, 256>>(norm_compile_options(256)));
    case 1024: return fn(kl::compile<layer_norm_backward_rows<kl::Scalar<C>, 1024>>(norm_compile_options(1024)));
    default:
      return fn(
          kl::compile<layer_norm_backward_rows<kl::Scalar<C>, norm_max_block>>(norm_compile_options(norm_max_block)));
  }
}

/// The compiled reduce kernel.
inline auto layer_norm_backward_reduce_kernel() {
  return kl::compile<layer_norm_backward_reduce<layer_norm_reduce_block_groups, layer_norm_reduce_block_cols>>();
}

/// Runs the backward for `rows` rows of `n` with `groups` partial rows
/// (partial_dw and partial_db hold groups * n f32 each): dx, dw and db.
/// Returns the traffic of both launches.
template <class C>
runtime::LaunchStats layer_norm_backward_launch(const Buffer<C>& dy, const Buffer<C>& x, const Buffer<C>& weight,
                                                const Buffer<float>& mean, const Buffer<float>& rstd,
                                                const Buffer<C>& dx, const Buffer<float>& dw, const Buffer<float>& db,
                                                const Buffer<float>& partial_dw, const Buffer<float>& partial_db,
                                                std::int64_t rows, std::int64_t n, int groups) {
  runtime::LaunchStats stats = with_layer_norm_backward_rows<C>(n, [&](auto kernel) {
    return kernel.launch(kl::Grid(groups), dy, x, weight, mean, rstd, dx, partial_dw, partial_db, rows, n);
  });
  const auto reduce_grid = static_cast<int>((n + layer_norm_reduce_block_cols - 1) / layer_norm_reduce_block_cols);
  const runtime::LaunchStats reduce =
      layer_norm_backward_reduce_kernel().launch(kl::Grid(reduce_grid), partial_dw, partial_db, dw, db, groups, n);
  stats += reduce;
  return stats;
}

/// The backward in double: dx, dw, db.
struct LayerNormBackwardReference {
  std::vector<double> dx, dw, db;
};

/// The reference, from the analytic formula with xhat = (x - mean) * rstd for
/// the given (f32) mean and rstd of each row.
template <class C>
LayerNormBackwardReference layer_norm_backward_reference(const std::vector<C>& dy, const std::vector<C>& x,
                                                         const std::vector<C>& weight, const std::vector<float>& mean,
                                                         const std::vector<float>& rstd, std::int64_t rows,
                                                         std::int64_t n) {
  LayerNormBackwardReference ref{std::vector<double>(x.size()), std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> xhat(n), w_grad(n);
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean_w_grad = 0, mean_w_grad_xhat = 0;
    for (std::int64_t c = 0; c < n; ++c) {
      xhat[c] = (element_value(x[r * n + c]) - mean[r]) * static_cast<double>(rstd[r]);
      w_grad[c] = element_value(weight[c]) * element_value(dy[r * n + c]);
      mean_w_grad += w_grad[c];
      mean_w_grad_xhat += w_grad[c] * xhat[c];
      ref.dw[c] += element_value(dy[r * n + c]) * xhat[c];
      ref.db[c] += element_value(dy[r * n + c]);
    }
    mean_w_grad /= static_cast<double>(n);
    mean_w_grad_xhat /= static_cast<double>(n);
    for (std::int64_t c = 0; c < n; ++c)
      ref.dx[r * n + c] = rstd[r] * (w_grad[c] - mean_w_grad - xhat[c] * mean_w_grad_xhat);
  }
  return ref;
}

/// Absolute error bounds of each dx, dw and db the kernels compute.
struct LayerNormBackwardBounds {
  std::vector<double> dx, dw, db;
};

// [book:error_bounds]
/// Bounds on |kernel - reference| for dx in dtype `output` and f32 arithmetic
/// (u = 2^-24, g(j) = gamma_j(u)). Per row, xhat = (x - mean) * rstd is within
/// g(2) |xhat|, w dy within g(1), their product within g(4). The row means
/// a = mean(w dy xhat) and c = mean(w dy) sum n terms in any order and divide:
/// |d a| <= g(n + 5) A with A = mean |w dy xhat|, |d c| <= g(n + 2) C with
/// C = mean |w dy|. dx = (w dy - (xhat a + c)) rstd adds four roundings, so
/// |d dx| <= rstd g(n + 8) (|w dy| + 2 |xhat| A + |xhat| A + 2 C) (the terms:
/// w dy, a's error times xhat, xhat's error times a, |a| <= A, c and its
/// error), then the rounding to the dtype. dw and db (in f32, no final
/// rounding) sum `rows` terms each, in whatever grouping G and the tiles give:
/// |d dw| <= g(rows + 3) sum |dy xhat| (each term within g(3)), and
/// |d db| <= g(rows) sum |dy|.
// [/book:error_bounds]
template <class C>
LayerNormBackwardBounds layer_norm_backward_error_bounds(const std::vector<C>& dy, const std::vector<C>& x,
                                                         const std::vector<C>& weight, const std::vector<float>& mean,
                                                         const std::vector<float>& rstd,
                                                         const LayerNormBackwardReference& ref, std::int64_t rows,
                                                         std::int64_t n, ir::DType output) {
  const double u = std::ldexp(1.0, -24);
  const double row_error = rounding_bound(static_cast<double>(n) + 8, u);
  LayerNormBackwardBounds bounds{std::vector<double>(x.size()), std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> abs_xhat(n), abs_w_grad(n);
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean_abs_w_grad = 0, mean_abs_w_grad_xhat = 0;
    for (std::int64_t c = 0; c < n; ++c) {
      const double grad = std::abs(element_value(dy[r * n + c]));
      abs_xhat[c] = std::abs((element_value(x[r * n + c]) - mean[r]) * static_cast<double>(rstd[r]));
      abs_w_grad[c] = std::abs(element_value(weight[c])) * grad;
      mean_abs_w_grad += abs_w_grad[c];
      mean_abs_w_grad_xhat += abs_w_grad[c] * abs_xhat[c];
      bounds.dw[c] += grad * abs_xhat[c];
      bounds.db[c] += grad;
    }
    mean_abs_w_grad /= static_cast<double>(n);
    mean_abs_w_grad_xhat /= static_cast<double>(n);
    for (std::int64_t c = 0; c < n; ++c) {
      const std::int64_t i = r * n + c;
      const double before_rounding =
          rstd[r] * row_error * (abs_w_grad[c] + 3 * abs_xhat[c] * mean_abs_w_grad_xhat + 2 * mean_abs_w_grad);
      bounds.dx[i] = before_rounding + output_rounding_error(output, std::abs(ref.dx[i]) + before_rounding);
    }
  }
  const double rows_d = static_cast<double>(rows);
  for (std::int64_t c = 0; c < n; ++c) {
    bounds.dw[c] *= rounding_bound(rows_d + 3, u);
    bounds.db[c] *= rounding_bound(rows_d, u);
  }
  return bounds;
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::layer_norm_backward_rows_tiled, "dy", "x", "weight", "mean", "rstd", "dx", "partial_dw",
                "partial_db", "rows", "n");
KILN_PARAMETERS(kiln::kernels::layer_norm_backward_rows, "dy", "x", "weight", "mean", "rstd", "dx", "partial_dw",
                "partial_db", "rows", "n");
KILN_PARAMETERS(kiln::kernels::layer_norm_backward_reduce, "partial_dw", "partial_db", "dw", "db", "groups", "n");
