// Correctness of where for every numeric dtype: conditions and branches of
// different shapes broadcast together (a scalar condition included), C++
// literals as branches, over a 2-D grid with masked tails in both dimensions.
#include <cstdint>
#include <vector>

#include "test_support.hpp"
#include "tile_index.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::from_double;
using kiln::test::is_float_v;

constexpr int kRows = 37, kCols = 45;  // not multiples of the tile
constexpr int kBM = 8, kBN = 16;
constexpr int kOps = 4;

// x is kRows x kCols, row has kCols elements, col kRows; result k is the k-th
// kRows x kCols matrix of out.
template <class C>
void where_kernel(kl::Ptr<kl::Scalar<C>> x_ptr, kl::Ptr<kl::Scalar<C>> row_ptr, kl::Ptr<kl::Scalar<C>> col_ptr,
                  kl::Scalar<C> s, kl::Ptr<kl::Scalar<C>> out) {
  const auto t = kiln::test::Tile2<kRows, kCols, kBM, kBN>::here();
  auto x = kl::load(x_ptr + t.offs, t.mask);
  auto row = kl::load(row_ptr + t.cols, t.cols < kCols);                      // [BN]
  auto col = kl::expand_dims<1>(kl::load(col_ptr + t.rows, t.rows < kRows));  // [BM, 1]
  int k = 0;
  auto put = [&](const auto& v) { kl::store(out + (t.offs + (k++) * (kRows * kCols)), v, t.mask); };
  put(kl::where(x > 0, x, 0));        // literal second branch
  put(kl::where(col > row, 7, x));    // [BM, BN] condition from broadcasting, literal first branch
  put(kl::where(col < s, row, col));  // [BM, 1] condition, [BN] and [BM, 1] branches
  put(kl::where(s > 0, x, row));      // scalar condition
}

template <class T>
bool less(T a, T b) {
  if constexpr (is_float_v<T>) return as_double(a) < as_double(b);
  else return a < b;
}

template <class T>
class Where : public ::testing::Test {};
TYPED_TEST_SUITE(Where, kiln::test::NumericTypes, kiln::test::DTypeNames);

TYPED_TEST(Where, BroadcastsConditionsBranchesAndLiterals) {
  using T = TypeParam;
  const double lo = is_float_v<T> ? -4 : -1e30, hi = is_float_v<T> ? 4 : 1e30;
  const auto x = kiln::test::random_values<T>(kRows * kCols, 611, lo, hi);
  const auto row = kiln::test::random_values<T>(kCols, 612, lo, hi);
  const auto col = kiln::test::random_values<T>(kRows, 613, lo, hi);
  // s > 0 holds, so the scalar condition picks x.
  const T s = from_double<T>(is_float_v<T> ? 0.5 : 3);
  const T zero = from_double<T>(0), seven = from_double<T>(7);
  kl::Buffer<T> out(static_cast<std::size_t>(kOps) * kRows * kCols);
  using kiln::test::to_buffer;
  const kl::Grid grid(kl::cdiv(kRows, kBM), kl::cdiv(kCols, kBN));
  if constexpr (is_float_v<T>)
    kl::compile<where_kernel<T>>().launch(grid, to_buffer(x), to_buffer(row), to_buffer(col), as_double(s), out);
  else kl::compile<where_kernel<T>>().launch(grid, to_buffer(x), to_buffer(row), to_buffer(col), s, out);
  std::vector<std::vector<T>> want(kOps, std::vector<T>(kRows * kCols));
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kCols; ++j) {
      const int e = i * kCols + j;
      want[0][e] = less(zero, x[e]) ? x[e] : zero;
      want[1][e] = less(row[j], col[i]) ? seven : x[e];
      want[2][e] = less(col[i], s) ? row[j] : col[i];
      want[3][e] = x[e];
    }
  static const char* const names[kOps] = {"where(x > 0, x, 0)", "where(col > row, 7, x)", "where(col < s, row, col)",
                                          "where(s > 0, x, row)"};
  const auto got = out.to_host();
  const std::size_t size = kRows * kCols;
  for (int k = 0; k < kOps; ++k)
    kiln::test::expect_equal(std::vector<T>(got.begin() + k * size, got.begin() + (k + 1) * size), want[k], names[k]);
}

}  // namespace
