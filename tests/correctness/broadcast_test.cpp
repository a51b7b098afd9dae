// Correctness of implicit broadcasting in arithmetic for every numeric dtype:
// row + column -> 2-D, 2-D with a row and with a column, and a [1, N] value
// stored to an [M, N] tile, over a 2-D grid with masked tails in both dimensions.
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
void broadcast_kernel(kl::Ptr<kl::Scalar<C>> x_ptr, kl::Ptr<kl::Scalar<C>> row_ptr, kl::Ptr<kl::Scalar<C>> col_ptr,
                      kl::Scalar<C> s, kl::Ptr<kl::Scalar<C>> out) {
  const auto t = kiln::test::Tile2<kRows, kCols, kBM, kBN>::here();
  auto x = kl::load(x_ptr + t.offs, t.mask);
  auto row = kl::load(row_ptr + t.cols, t.cols < kCols);                      // [BN]
  auto col = kl::expand_dims<1>(kl::load(col_ptr + t.rows, t.rows < kRows));  // [BM, 1]
  int k = 0;
  auto put = [&](const auto& v) { kl::store(out + (t.offs + (k++) * (kRows * kCols)), v, t.mask); };
  put(row + col);                    // [BN] + [BM, 1]
  put(x * row);                      // [BM, BN] * [BN]
  put(x - col);                      // [BM, BN] - [BM, 1]
  put(kl::expand_dims<0>(row) * s);  // [1, BN] stored to [BM, BN]
}

// One operation in T: floats correctly rounded (exact in double, then rounded
// once: 0 ulps, as justified in arithmetic_test.cpp), ints wrapping.
template <class T, class Op>
T in_t(T a, T b, Op op) {
  if constexpr (is_float_v<T>) return from_double<T>(op(as_double(a), as_double(b)));
  else return static_cast<T>(op(static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b)));
}

template <class T>
class Broadcast : public ::testing::Test {};
TYPED_TEST_SUITE(Broadcast, kiln::test::NumericTypes, kiln::test::DTypeNames);

TYPED_TEST(Broadcast, RowsColumnsAndScalarsBroadcast) {
  using T = TypeParam;
  const double lo = is_float_v<T> ? -4 : -1e30, hi = is_float_v<T> ? 4 : 1e30;
  const auto x = kiln::test::random_values<T>(kRows * kCols, 601, lo, hi);
  const auto row = kiln::test::random_values<T>(kCols, 602, lo, hi);
  const auto col = kiln::test::random_values<T>(kRows, 603, lo, hi);
  const T s = from_double<T>(is_float_v<T> ? -1.5 : 3);
  kl::Buffer<T> out(static_cast<std::size_t>(kOps) * kRows * kCols);
  using kiln::test::to_buffer;
  const kl::Grid grid(kl::cdiv(kRows, kBM), kl::cdiv(kCols, kBN));
  if constexpr (is_float_v<T>)
    kl::compile<broadcast_kernel<T>>().launch(grid, to_buffer(x), to_buffer(row), to_buffer(col), as_double(s), out);
  else kl::compile<broadcast_kernel<T>>().launch(grid, to_buffer(x), to_buffer(row), to_buffer(col), s, out);
  const auto add = [](auto a, auto b) { return a + b; };
  const auto sub = [](auto a, auto b) { return a - b; };
  const auto mul = [](auto a, auto b) { return a * b; };
  std::vector<std::vector<T>> want(kOps, std::vector<T>(kRows * kCols));
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kCols; ++j) {
      const int e = i * kCols + j;
      want[0][e] = in_t(row[j], col[i], add);
      want[1][e] = in_t(x[e], row[j], mul);
      want[2][e] = in_t(x[e], col[i], sub);
      want[3][e] = in_t(row[j], s, mul);
    }
  static const char* const names[kOps] = {"row + column", "2-D * row", "2-D - column",
                                          "[1, N] * scalar stored to [M, N]"};
  const auto got = out.to_host();
  const std::size_t size = kRows * kCols;
  for (int k = 0; k < kOps; ++k)
    kiln::test::expect_equal(std::vector<T>(got.begin() + k * size, got.begin() + (k + 1) * size), want[k], names[k]);
}

}  // namespace
