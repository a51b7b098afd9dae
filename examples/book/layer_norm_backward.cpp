// Chapter 23, "The backward kernel: layer norm backward": from dy, x, the
// weight and the forward's per-row mean and rstd, dx for every row, and dw and
// db summed over all rows through G partial rows (one per program of the
// first kernel) that a second kernel adds up, without atomics. The formula is
// checked against central differences in double, the kernels against a
// double reference with bounds derived from the dtypes, the row length and
// the number of rows, for two values of G, and a second run for equal bits.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:rows]
/// dx for rows group, group + G, group + 2G, … (G = the number of programs),
/// rows of n <= BLOCK_N elements; the group's sums of dy * xhat and dy stay in
/// registers and are stored once, as row `group` of partial_dw and partial_db.
template <int BLOCK_N>
void backward_rows(kl::Ptr<kl::f16> dy, kl::Ptr<kl::f16> x, kl::Ptr<kl::f16> weight, kl::Ptr<kl::f32> mean,
                   kl::Ptr<kl::f32> rstd, kl::Ptr<kl::f16> dx, kl::Ptr<kl::f32> partial_dw, kl::Ptr<kl::f32> partial_db,
                   kl::i32 rows, kl::i32 n) {
  auto group = kl::program_id(0);
  auto cols = kl::arange<BLOCK_N>();
  auto mask = cols < n;
  auto w = kl::cast<kl::f32>(kl::load(weight + cols, mask));  // the same for every row: loaded once
  kl::Var dw = kl::zeros<kl::f32, BLOCK_N>();
  kl::Var db = kl::zeros<kl::f32, BLOCK_N>();
  for (auto row : kl::range(group, rows, kl::num_programs(0))) {
    auto x_row = kl::cast<kl::f32>(kl::load(x + row * n + cols, mask));
    auto dy_row = kl::cast<kl::f32>(kl::load(dy + row * n + cols, mask));
    auto row_rstd = kl::load(rstd + row);
    auto xhat = kl::where(mask, (x_row - kl::load(mean + row)) * row_rstd, 0.0f);  // the forward's normalised x
    auto w_dy = w * dy_row;                                                        // the gradient at xhat
    auto mean_w_dy_xhat = kl::sum(w_dy * xhat, kl::axis<0>) / kl::cast<kl::f32>(n);
    auto mean_w_dy = kl::sum(w_dy, kl::axis<0>) / kl::cast<kl::f32>(n);
    kl::store(dx + row * n + cols, kl::cast<kl::f16>((w_dy - (xhat * mean_w_dy_xhat + mean_w_dy)) * row_rstd), mask);
    dw = dw + dy_row * xhat;
    db = db + dy_row;
  }
  kl::store(partial_dw + group * n + cols, dw, mask);
  kl::store(partial_db + group * n + cols, db, mask);
}
// [/book:rows]

// [book:reduce]
/// dw and db: each program adds up the G partial rows of BLOCK_N columns,
/// BLOCK_G rows at a time into a BLOCK_G x BLOCK_N tile that is summed at the end.
template <int BLOCK_G, int BLOCK_N>
void backward_reduce(kl::Ptr<kl::f32> partial_dw, kl::Ptr<kl::f32> partial_db, kl::Ptr<kl::f32> dw, kl::Ptr<kl::f32> db,
                     kl::i32 groups, kl::i32 n) {
  auto cols = kl::program_id(0) * BLOCK_N + kl::arange<BLOCK_N>();
  kl::Var dw_sums = kl::zeros<kl::f32, BLOCK_G, BLOCK_N>();
  kl::Var db_sums = kl::zeros<kl::f32, BLOCK_G, BLOCK_N>();
  for (auto first : kl::range(0, groups, BLOCK_G)) {
    auto group = kl::expand_dims<1>(first + kl::arange<BLOCK_G>());  // BLOCK_G x 1
    auto offsets = group * n + kl::expand_dims<0>(cols);
    auto mask = (group < groups) & kl::expand_dims<0>(cols < n);
    dw_sums = dw_sums + kl::load(partial_dw + offsets, mask);
    db_sums = db_sums + kl::load(partial_db + offsets, mask);
  }
  kl::store(dw + cols, kl::sum(dw_sums, kl::axis<0>), cols < n);
  kl::store(db + cols, kl::sum(db_sums, kl::axis<0>), cols < n);
}
// [/book:reduce]

// [book:reference]
/// dx, dw and db in double from the formula, for the given mean and rstd of each row.
struct Gradients {
  std::vector<double> dx, dw, db;
};
Gradients reference(const std::vector<kl::half>& dy, const std::vector<kl::half>& x, const std::vector<kl::half>& w,
                    const std::vector<double>& mean, const std::vector<double>& rstd, int rows, int n) {
  Gradients g{std::vector<double>(rows * n), std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> xhat(n), w_dy(n);
  for (int r = 0; r < rows; ++r) {
    double mean_w_dy_xhat = 0, mean_w_dy = 0;
    for (int c = 0; c < n; ++c) {
      xhat[c] = (float(x[r * n + c]) - mean[r]) * rstd[r];
      w_dy[c] = double{float(w[c])} * float(dy[r * n + c]);
      mean_w_dy_xhat += w_dy[c] * xhat[c] / n;
      mean_w_dy += w_dy[c] / n;
      g.dw[c] += float(dy[r * n + c]) * xhat[c];
      g.db[c] += float(dy[r * n + c]);
    }
    for (int c = 0; c < n; ++c) g.dx[r * n + c] = rstd[r] * (w_dy[c] - xhat[c] * mean_w_dy_xhat - mean_w_dy);
  }
  return g;
}
// [/book:reference]

// [book:finite_differences]
/// sum over the row of dy * y for the forward y = (x - mean(x)) / sqrt(var(x) + eps) * w (+ b,
/// which does not depend on x), all in double: its derivative by x[c] is dx[c].
double row_loss(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& dy, double eps) {
  const auto n = static_cast<double>(x.size());
  double mean = 0, variance = 0, loss = 0;
  for (double e : x) mean += e / n;
  for (double e : x) variance += (e - mean) * (e - mean) / n;
  for (std::size_t c = 0; c < x.size(); ++c) loss += dy[c] * (x[c] - mean) / std::sqrt(variance + eps) * w[c];
  return loss;
}
// [/book:finite_differences]

// [book:bounds]
/// How far a correct kernel may be from the reference (u: f32's unit roundoff).
Gradients bounds(const std::vector<kl::half>& dy, const std::vector<kl::half>& x, const std::vector<kl::half>& w,
                 const std::vector<double>& mean, const std::vector<double>& rstd, const Gradients& want, int rows,
                 int n) {
  const double u = std::numeric_limits<float>::epsilon() / 2, u_f16 = 0x1p-11, f16_underflow = 0x1p-25;
  auto gamma = [u](double roundings) { return roundings * u / (1 - roundings * u); };
  Gradients b{std::vector<double>(rows * n), std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> abs_xhat(n), abs_w_dy(n);
  for (int r = 0; r < rows; ++r) {
    double mean_abs_w_dy_xhat = 0, mean_abs_w_dy = 0;  // A and C in the chapter
    for (int c = 0; c < n; ++c) {
      abs_xhat[c] = std::abs((float(x[r * n + c]) - mean[r]) * rstd[r]);
      abs_w_dy[c] = std::abs(double{float(w[c])} * float(dy[r * n + c]));
      mean_abs_w_dy_xhat += abs_w_dy[c] * abs_xhat[c] / n;
      mean_abs_w_dy += abs_w_dy[c] / n;
      b.dw[c] += std::abs(float(dy[r * n + c])) * abs_xhat[c];
      b.db[c] += std::abs(float(dy[r * n + c]));
    }
    for (int c = 0; c < n; ++c) {
      const int i = r * n + c;
      const double f32_error =
          rstd[r] * gamma(n + 8) * (abs_w_dy[c] + 3 * abs_xhat[c] * mean_abs_w_dy_xhat + 2 * mean_abs_w_dy);
      b.dx[i] = f32_error + u_f16 * (std::abs(want.dx[i]) + f32_error) + f16_underflow;  // the store to f16
    }
  }
  for (int c = 0; c < n; ++c) {
    b.dw[c] *= gamma(rows + 2);  // rows terms, each within gamma(3), added in any grouping
    b.db[c] *= gamma(rows);
  }
  return b;
}
// [/book:bounds]

/// The elements of `got` farther from `want` than their bounds.
template <class T>
int outside(const std::vector<T>& got, const std::vector<double>& want, const std::vector<double>& bound) {
  int count = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(double{float(got[i])} - want[i]) <= bound[i])) ++count;  // false for NaN too
  return count;
}

/// Whether two f32 results are equal bit for bit (== would take -0 for +0).
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](float p, float q) {
    return std::bit_cast<std::uint32_t>(p) == std::bit_cast<std::uint32_t>(q);
  });
}

int main() {
  // [book:inputs]
  constexpr int kRows = 300, kCols = 781, kBlockN = 1024;
  constexpr double kEps = 1e-5;
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> x_values(-2.0f, 6.0f), dy_values(-1.0f, 1.5f), w_values(0.5f, 1.5f);
  std::vector<kl::half> x(kRows * kCols), dy(kRows * kCols), w(kCols);
  for (auto& e : x) e = kl::half(x_values(random));  // off zero mean: x - mean cancels
  for (auto& e : dy) e = kl::half(dy_values(random));
  for (auto& e : w) e = kl::half(w_values(random));
  // What the forward kernel saved: each row's mean and 1 / sqrt(variance + eps), in f32.
  std::vector<double> exact_mean(kRows), exact_rstd(kRows);
  std::vector<float> mean(kRows), rstd(kRows);
  for (int r = 0; r < kRows; ++r) {
    double sum = 0, squares = 0;
    for (int c = 0; c < kCols; ++c) sum += float(x[r * kCols + c]);
    exact_mean[r] = sum / kCols;
    for (int c = 0; c < kCols; ++c) squares += std::pow(float(x[r * kCols + c]) - exact_mean[r], 2);
    exact_rstd[r] = 1 / std::sqrt(squares / kCols + kEps);
    mean[r] = static_cast<float>(exact_mean[r]);
    rstd[r] = static_cast<float>(exact_rstd[r]);
  }
  // [/book:inputs]

  // [book:gradient_check]
  // The formula's dx, with the exact statistics, against (L(x + h e_c) - L(x - h e_c)) / 2h for rows 0 to 2.
  const Gradients exact = reference(dy, x, w, exact_mean, exact_rstd, kRows, kCols);
  constexpr double kStep = 0x1p-10;
  double largest_difference = 0, largest_dx = 0;
  std::vector<double> w_row(w.begin(), w.end());
  for (int r = 0; r < 3; ++r) {
    std::vector<double> x_row(&x[r * kCols], &x[(r + 1) * kCols]), dy_row(&dy[r * kCols], &dy[(r + 1) * kCols]);
    for (int c = 0; c < kCols; ++c) {
      const double saved = x_row[c];
      x_row[c] = saved + kStep;
      const double above = row_loss(x_row, w_row, dy_row, kEps);
      x_row[c] = saved - kStep;
      const double below = row_loss(x_row, w_row, dy_row, kEps);
      x_row[c] = saved;
      largest_difference =
          std::max(largest_difference, std::abs((above - below) / (2 * kStep) - exact.dx[r * kCols + c]));
      largest_dx = std::max(largest_dx, std::abs(exact.dx[r * kCols + c]));
    }
  }
  const bool formula_agrees = largest_difference <= 1e-6 * largest_dx;
  // [/book:gradient_check]

  // [book:launch]
  auto dy_buffer = kl::Buffer<kl::half>::from(dy), x_buffer = kl::Buffer<kl::half>::from(x);
  auto w_buffer = kl::Buffer<kl::half>::from(w);
  auto mean_buffer = kl::Buffer<float>::from(mean), rstd_buffer = kl::Buffer<float>::from(rstd);
  constexpr int kReduceRows = 8, kReduceCols = 256;
  const auto rows_kernel = kl::compile<backward_rows<kBlockN>>();
  const auto reduce_kernel = kl::compile<backward_reduce<kReduceRows, kReduceCols>>();
  // dx, dw and db with `groups` partial rows.
  auto backward = [&](int groups) {
    kl::Buffer<kl::half> dx(kRows * kCols);
    kl::Buffer<float> partial_dw(groups * kCols), partial_db(groups * kCols), dw(kCols), db(kCols);
    rows_kernel.launch(kl::Grid(groups), dy_buffer, x_buffer, w_buffer, mean_buffer, rstd_buffer, dx, partial_dw,
                       partial_db, kRows, kCols);
    reduce_kernel.launch(kl::Grid(kl::cdiv(kCols, kReduceCols)), partial_dw, partial_db, dw, db, groups, kCols);
    return std::tuple(dx.to_host(), dw.to_host(), db.to_host());
  };
  // [/book:launch]

  // [book:check]
  const std::vector<double> saved_mean(mean.begin(), mean.end()), saved_rstd(rstd.begin(), rstd.end());
  const Gradients want = reference(dy, x, w, saved_mean, saved_rstd, kRows, kCols);
  const Gradients bound = bounds(dy, x, w, saved_mean, saved_rstd, want, kRows, kCols);
  std::printf("layer norm backward: %d rows of %d; dy, x, w and dx f16, dw and db f32\n", kRows, kCols);
  std::printf("the formula for dx against central differences in double, rows 0 to 2: within 1e-6: %s\n",
              formula_agrees ? "yes" : "NO");
  bool all_within = formula_agrees;
  for (const int groups : {16, 7}) {
    const auto [dx, dw, db] = backward(groups);
    const int dx_outside = outside(dx, want.dx, bound.dx), dw_outside = outside(dw, want.dw, bound.dw);
    const int db_outside = outside(db, want.db, bound.db);
    all_within = all_within && dx_outside == 0 && dw_outside == 0 && db_outside == 0;
    std::printf("G = %2d: %d or %d rows per program; outside their bounds: dx %d of %d, dw %d of %d, db %d of %d\n",
                groups, kRows / groups, kl::cdiv(kRows, groups), dx_outside, kRows * kCols, dw_outside, kCols,
                db_outside, kCols);
  }
  // [/book:check]

  // [book:repeat]
  const auto first = backward(16), second = backward(16);
  const bool repeats =
      same_bits(std::get<1>(first), std::get<1>(second)) && same_bits(std::get<2>(first), std::get<2>(second));
  std::printf("G = 16 twice: dw and db the same to the bit: %s\n", repeats ? "yes" : "NO");
  // [/book:repeat]
  return all_within && repeats ? 0 : 1;
}
