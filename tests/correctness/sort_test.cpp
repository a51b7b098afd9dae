// Correctness of sort and topk from the standard library for every dtype they
// take, on 2-D tiles sorted along the last axis, against std::stable_sort with
// the documented order (-0 before +0, NaN after +inf), bit for bit; inputs hold
// duplicates and, for floats, ±0, ±inf and NaNs of both signs with payloads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "prims_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;
using kiln::test::prims::bits_of;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;

constexpr int kPrograms = 2;

template <class C, int R, int K>
void sort_kernel(P<C> x, P<C> ascending, P<C> descending) {
  auto rows = kl::expand_dims<1>(kl::arange<R>());
  auto cols = kl::expand_dims<0>(kl::arange<K>());
  auto offsets = kl::program_id(0) * (R * K) + rows * K + cols;
  auto v = kl::load(x + offsets);
  kl::store(ascending + offsets, kl::sort(v));
  kl::store(descending + offsets, kl::sort(v, true));
}

template <class C, int R, int K, int Top>
void topk_kernel(P<C> x, P<C> out) {
  auto rows = kl::expand_dims<1>(kl::arange<R>());
  auto cols = kl::expand_dims<0>(kl::arange<K>());
  auto top_cols = kl::expand_dims<0>(kl::arange<Top>());
  auto v = kl::load(x + kl::program_id(0) * (R * K) + rows * K + cols);
  kl::store(out + kl::program_id(0) * (R * Top) + rows * Top + top_cols, kl::topk<Top>(v));
}

// The documented order: -inf < … < -0 < +0 < … < +inf < NaN.
template <class T>
bool sorts_before(T a, T b) {
  if constexpr (kiln::test::is_float_v<T>) {
    const double x = kiln::test::as_double(a), y = kiln::test::as_double(b);
    if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
    if (x == y) return std::signbit(x) && !std::signbit(y);
    return x < y;
  } else {
    return a < b;
  }
}

// Random values with many duplicates (every third element copies another).
template <class T>
std::vector<T> input(int n, std::uint64_t seed) {
  auto v = kiln::test::prims::values_with_specials<T>(n, seed, -60, 60);
  for (int i = 0; i < n; i += 3) v[i] = v[(i * 7 + 5) % n];
  return v;
}

// Each row of `rows` rows of length k sorted with `before`, keeping the first `keep`.
template <class T, class Before>
std::vector<T> sorted_rows(const std::vector<T>& x, int k, int keep, Before before) {
  std::vector<T> out;
  for (std::size_t r = 0; r < x.size() / k; ++r) {
    std::vector<T> row(x.begin() + r * k, x.begin() + (r + 1) * k);
    std::stable_sort(row.begin(), row.end(), before);
    out.insert(out.end(), row.begin(), row.begin() + keep);
  }
  return out;
}

// Every row of `got` holds the bit patterns of the same row of x (NaN payloads kept).
template <class T>
void expect_rows_permute(const std::vector<T>& got, const std::vector<T>& x, int k, const char* what) {
  for (std::size_t r = 0; r < x.size() / k; ++r) {
    std::vector<std::uint64_t> want_bits, got_bits;
    for (int j = 0; j < k; ++j) {
      want_bits.push_back(bits_of(x[r * k + j]));
      got_bits.push_back(bits_of(got[r * k + j]));
    }
    std::sort(want_bits.begin(), want_bits.end());
    std::sort(got_bits.begin(), got_bits.end());
    EXPECT_EQ(got_bits, want_bits) << what << ": row " << r << " is not a permutation of the input row";
  }
}

template <class T, int R, int K>
void check_sort(std::uint64_t seed) {
  constexpr int total = kPrograms * R * K;
  const auto x = input<T>(total, seed);
  kl::Buffer<T> ascending(total), descending(total);
  kl::compile<sort_kernel<T, R, K>>().launch(kl::Grid(kPrograms), kiln::test::to_buffer(x), ascending, descending);
  const auto up = ascending.to_host(), down = descending.to_host();
  expect_equal(up, sorted_rows(x, K, K, sorts_before<T>), "sort ascending");
  expect_equal(down, sorted_rows(x, K, K, [](T a, T b) { return sorts_before(b, a); }), "sort descending");
  expect_rows_permute(up, x, K, "sort ascending");
  expect_rows_permute(down, x, K, "sort descending");
}

template <class T, int R, int K, int Top>
void check_topk(std::uint64_t seed) {
  const auto x = input<T>(kPrograms * R * K, seed);
  kl::Buffer<T> out(kPrograms * R * Top);
  kl::compile<topk_kernel<T, R, K, Top>>().launch(kl::Grid(kPrograms), kiln::test::to_buffer(x), out);
  expect_equal(out.to_host(), sorted_rows(x, K, Top, [](T a, T b) { return sorts_before(b, a); }), "topk");
}

template <class T>
class Sort : public ::testing::Test {};
TYPED_TEST_SUITE(Sort, kiln::test::NumericTypes, kiln::test::DTypeNames);

TYPED_TEST(Sort, RowsOfSixtyFour) { check_sort<TypeParam, 4, 64>(1001); }
TYPED_TEST(Sort, OneRowOfTwo) { check_sort<TypeParam, 1, 2>(1002); }
TYPED_TEST(Sort, RowsOfOne) { check_sort<TypeParam, 16, 1>(1003); }
TYPED_TEST(Sort, TopEightOfSixtyFour) { check_topk<TypeParam, 4, 64, 8>(1004); }
TYPED_TEST(Sort, TopOneOfThirtyTwo) { check_topk<TypeParam, 2, 32, 1>(1005); }
TYPED_TEST(Sort, TopSixteenOfSixteen) { check_topk<TypeParam, 2, 16, 16>(1006); }

TEST(SortLong, OneRowOf1024Floats) { check_sort<float, 1, 1024>(1007); }
TEST(SortLong, TopFourOf1024Floats) { check_topk<float, 1, 1024, 4>(1008); }

}  // namespace
