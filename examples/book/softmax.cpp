// Chapter 8, "Softmax, the first reduction": a row-wise softmax, one program
// per row, checked against a double-precision reference with a tolerance
// derived from f32's unit roundoff and the row length.
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:kernel]
template <int BLOCK>
void softmax(kl::Ptr<kl::f32> in, kl::Ptr<kl::f32> out, kl::i32 n_cols) {
  auto row = kl::program_id(0);     // one program per row
  auto cols = kl::arange<BLOCK>();  // the whole row in one tile: BLOCK >= n_cols
  auto mask = cols < n_cols;        // false on the padding past the row's end
  // The padding reads -inf: it cannot be the maximum, and exp(-inf) = 0 adds nothing to the sum.
  auto x = kl::load(in + row * n_cols + cols, mask, {.other = -INFINITY});
  auto shifted = x - kl::max(x, kl::axis<0>);  // <= 0 everywhere, so exp cannot overflow
  auto numerator = kl::exp(shifted);
  auto denominator = kl::sum(numerator, kl::axis<0>);
  kl::store(out + row * n_cols + cols, numerator / denominator, mask);
}
// [/book:kernel]

// [book:naive]
template <int BLOCK>
void naive_softmax(kl::Ptr<kl::f32> in, kl::Ptr<kl::f32> out, kl::i32 n_cols) {
  auto cols = kl::arange<BLOCK>();
  auto mask = cols < n_cols;
  auto numerator = kl::exp(kl::load(in + kl::program_id(0) * n_cols + cols, mask, {.other = -INFINITY}));
  kl::store(out + kl::program_id(0) * n_cols + cols, numerator / kl::sum(numerator, kl::axis<0>), mask);
}
// [/book:naive]

// [book:reference]
std::vector<double> reference(const std::vector<float>& x, int rows, int cols) {
  std::vector<double> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* in = &x[static_cast<std::size_t>(r) * cols];
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, double{in[c]});
    for (int c = 0; c < cols; ++c) s += std::exp(in[c] - m);
    for (int c = 0; c < cols; ++c) y[static_cast<std::size_t>(r) * cols + c] = std::exp(in[c] - m) / s;
  }
  return y;
}
// [/book:reference]

int main() {
  // [book:inputs]
  constexpr int kRows = 64, kCols = 781;
  constexpr int kBlock = std::bit_ceil(unsigned{kCols});  // 1024, the next power of two
  constexpr double kSpread = 8;                           // each row's values lie in an interval this wide
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-kSpread / 2, kSpread / 2);
  std::vector<float> x(kRows * kCols);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) x[r * kCols + c] = uniform(random) + (r % 2 == 1 ? 100.0f : 0.0f);
  // [/book:inputs]

  // [book:launch]
  auto in = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(kRows * kCols), naive_out(kRows * kCols);
  kl::compile<softmax<kBlock>>().launch(kl::Grid(kRows), in, out, kCols);
  kl::compile<naive_softmax<kBlock>>().launch(kl::Grid(kRows), in, naive_out, kCols);
  const std::vector<float> y = out.to_host(), naive = naive_out.to_host();
  // [/book:launch]

  // [book:tolerance]
  const double u = std::numeric_limits<float>::epsilon() / 2;  // f32's unit roundoff, 2^-24
  // x - max rounded (exp turns it relative), then exp: 2 ulp of ex2.approx and the rounding of (x - max) * log2(e)
  const double element = kSpread * u + 4 * u + 1.25 * kSpread * u;
  const double sum = (kCols - 1) * u / (1 - (kCols - 1) * u);  // n - 1 additions of positive terms, any order
  const double tolerance = 2 * element + sum + u;              // numerator, denominator, the division
  // [/book:tolerance]

  // [book:check]
  const std::vector<double> want = reference(x, kRows, kCols);
  bool within = true, sums_to_one = true;
  int nan_rows = 0;
  for (int r = 0; r < kRows; ++r) {
    double row_sum = 0;
    bool row_nan = false;
    for (int c = 0; c < kCols; ++c) {
      const int i = r * kCols + c;
      if (!(std::abs(y[i] - want[i]) <= tolerance * want[i])) within = false;  // false for NaN too
      row_sum += y[i];
      row_nan = row_nan || std::isnan(naive[i]);
    }
    if (!(std::abs(row_sum - 1) <= tolerance)) sums_to_one = false;
    nan_rows += row_nan ? 1 : 0;
  }
  std::printf("%d rows of %d columns, one program per row, BLOCK = %d\n", kRows, kCols, kBlock);
  std::printf("tolerance: %.0f u = %.2e relative\n", tolerance / u, tolerance);
  std::printf("every element within tolerance of the double reference: %s\n", within ? "yes" : "NO");
  std::printf("every row sums to 1 within tolerance: %s\n", sums_to_one ? "yes" : "NO");
  std::printf("without the max subtraction, %d of %d rows hold NaN\n", nan_rows, kRows);
  // [/book:check]
  return within && sums_to_one && nan_rows == kRows / 2 ? 0 : 1;
}
