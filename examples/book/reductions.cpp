// Chapter 12, "Reductions and scans": sums, maxima, argmax and a custom
// combine function along either axis of a 2-D tile, and running sums and
// maxima with scans, each checked against plain C++.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:setup]
template <int ROWS, int BLOCK>
void reductions(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> row_sum, kl::Ptr<kl::f32> col_max, kl::Ptr<kl::i32> col_argmax,
                kl::Ptr<kl::i32> row_max_count, kl::Ptr<kl::f32> row_cumsum, kl::Ptr<kl::f32> row_running_max,
                kl::i32 n_cols) {
  auto row_ids = kl::arange<ROWS>();
  auto col_ids = kl::arange<BLOCK>();
  auto rows = kl::expand_dims<1>(row_ids);   // ROWS x 1
  auto cols = kl::expand_dims<0>(col_ids);   // 1 x BLOCK
  auto mask = cols < n_cols;                 // 1 x BLOCK, broadcast over the rows
  auto offsets = rows * n_cols + cols;       // ROWS x BLOCK
  auto v = kl::load(x + offsets, mask);      // the padding is 0, the identity of +
  auto low = kl::where(mask, v, -INFINITY);  // the padding is -inf, the identity of max
  // [/book:setup]

  // [book:reduce]
  kl::store(row_sum + row_ids, kl::sum(v, kl::axis<1>));  // ROWS sums, one per row
  kl::store(col_max + col_ids, kl::max(low, kl::axis<0>), col_ids < n_cols);
  kl::store(col_argmax + col_ids, kl::argmax(low, kl::axis<0>), col_ids < n_cols);
  // [/book:reduce]

  // [book:custom]
  // How often each row's maximum occurs: reduce (value, count) pairs.
  auto ones = kl::full<kl::i32, ROWS, BLOCK>(1);
  auto [row_max, count] = kl::reduce(std::tuple(low, ones), kl::axis<1>, [](auto va, auto ca, auto vb, auto cb) {
    auto m = kl::maximum(va, vb);
    return std::tuple(m, kl::where(va == m, ca, 0) + kl::where(vb == m, cb, 0));
  });
  kl::store(row_max_count + row_ids, count);
  // [/book:custom]

  // [book:scans]
  kl::store(row_cumsum + offsets, kl::cumsum(v, kl::axis<1>), mask);
  auto running_max = kl::associative_scan(low, kl::axis<1>, [](auto a, auto b) { return kl::maximum(a, b); });
  kl::store(row_running_max + offsets, running_max, mask);
}
// [/book:scans]

int main() {
  // [book:inputs]
  constexpr int kRows = 32, kCols = 50;
  constexpr int kBlock = std::bit_ceil(unsigned{kCols});  // 64
  std::mt19937 random(2024);
  std::uniform_int_distribution<int> small(-20, 20);  // whole numbers: every sum below is exact in f32
  std::vector<float> x(kRows * kCols);
  for (float& e : x) e = static_cast<float>(small(random));
  // [/book:inputs]

  // [book:launch]
  auto in = kl::Buffer<float>::from(x);
  kl::Buffer<float> row_sum(kRows), col_max(kCols), cumsum(kRows * kCols), running_max(kRows * kCols);
  kl::Buffer<int> col_argmax(kCols), max_count(kRows);
  kl::compile<reductions<kRows, kBlock>>().launch(kl::Grid(1), in, row_sum, col_max, col_argmax, max_count, cumsum,
                                                  running_max, kCols);
  // [/book:launch]

  // [book:check]
  const auto sums = row_sum.to_host(), maxima = col_max.to_host(), prefix = cumsum.to_host();
  const auto running = running_max.to_host();
  const auto argmax = col_argmax.to_host(), counts = max_count.to_host();
  int wrong_sums = 0, wrong_max = 0, wrong_argmax = 0, wrong_counts = 0, wrong_scans = 0, tied = 0;
  for (int r = 0; r < kRows; ++r) {
    const float* row = &x[r * kCols];
    float sum = 0, high = -INFINITY;
    for (int c = 0; c < kCols; ++c) {
      sum += row[c];
      high = std::max(high, row[c]);
      if (prefix[r * kCols + c] != sum || running[r * kCols + c] != high) ++wrong_scans;
    }
    if (sums[r] != sum) ++wrong_sums;
    if (counts[r] != std::count(row, row + kCols, high)) ++wrong_counts;
  }
  for (int c = 0; c < kCols; ++c) {
    int best = 0;  // the first row holding the column's maximum
    for (int r = 1; r < kRows; ++r)
      if (x[r * kCols + c] > x[best * kCols + c]) best = r;
    if (maxima[c] != x[best * kCols + c]) ++wrong_max;
    if (argmax[c] != best) ++wrong_argmax;
    int holders = 0;  // rows holding the maximum: argmax must name the first
    for (int r = 0; r < kRows; ++r) holders += x[r * kCols + c] == x[best * kCols + c] ? 1 : 0;
    tied += holders > 1 ? 1 : 0;
  }
  std::printf("a %d x %d matrix in one %d x %d tile\n", kRows, kCols, kRows, kBlock);
  std::printf("row 0: sum %.0f, last element of its cumsum %.0f\n", sums[0], prefix[kCols - 1]);
  std::printf("row 0: maximum (last element of its running max) %.0f, found %d times\n", running[kCols - 1], counts[0]);
  std::printf("column 0: maximum %.0f, first in row %d\n", maxima[0], argmax[0]);
  std::printf("row sums differing from C++: %d of %d\n", wrong_sums, kRows);
  std::printf("column maxima, argmax differing: %d, %d of %d (%d columns hold their maximum twice or more)\n",
              wrong_max, wrong_argmax, kCols, tied);
  std::printf("maximum counts differing: %d of %d\n", wrong_counts, kRows);
  std::printf("cumsum and running max elements differing: %d of %d\n", wrong_scans, kRows * kCols);
  // [/book:check]
  return wrong_sums + wrong_max + wrong_argmax + wrong_counts + wrong_scans == 0 ? 0 : 1;
}
