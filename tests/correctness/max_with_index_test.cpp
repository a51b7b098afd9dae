// Correctness of max_with_index and min_with_index (the extreme along an axis
// and the index of its first occurrence, from one reduction) for every numeric
// dtype, along both axes of 2-D tiles with many ties, against a host scan;
// NaNs, which win at their first index on every device; and argmax of a tile
// that other ops (join, topk, gather) want in layouts of their own.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "prims_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;
using PI = kl::Ptr<kl::i32>;

constexpr int R = 8, K = 16;

template <class C>
void extremes_kernel(P<C> x, P<C> row_max, PI row_argmax, P<C> col_min, PI col_argmin) {
  auto rows = kl::arange<R>();
  auto cols = kl::arange<K>();
  auto v = kl::load(x + kl::expand_dims<1>(rows) * K + kl::expand_dims<0>(cols));
  auto [largest, where_largest] = kl::max_with_index(v, kl::axis<1>);
  kl::store(row_max + rows, largest);
  kl::store(row_argmax + rows, where_largest);
  auto [smallest, where_smallest] = kl::min_with_index(v, kl::axis<0>);
  kl::store(col_min + cols, smallest);
  kl::store(col_argmin + cols, where_smallest);
}

/// The first index of the largest (smallest) of each row (column) of x
/// ([R, K]), a NaN counting as beyond every number; and that element.
template <class T>
struct HostExtremes {
  std::vector<T> row_max, col_min;
  std::vector<std::int32_t> row_argmax, col_argmin;

  explicit HostExtremes(const std::vector<T>& x) : row_max(R), col_min(K), row_argmax(R, 0), col_argmin(K, 0) {
    using kiln::test::as_double;
    // Whether a beats b (or ties it: then the earlier index, found first, stays).
    auto beats = [](double a, double b, bool larger) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && !std::isnan(b);
      return larger ? a > b : a < b;
    };
    for (int i = 0; i < R; ++i) {
      for (int j = 1; j < K; ++j)
        if (beats(as_double(x[i * K + j]), as_double(x[i * K + row_argmax[i]]), true)) row_argmax[i] = j;
      row_max[i] = x[i * K + row_argmax[i]];
    }
    for (int j = 0; j < K; ++j) {
      for (int i = 1; i < R; ++i)
        if (beats(as_double(x[i * K + j]), as_double(x[col_argmin[j] * K + j]), false)) col_argmin[j] = i;
      col_min[j] = x[col_argmin[j] * K + j];
    }
  }
};

template <class T>
void expect_extremes_of(const std::vector<T>& x) {
  kl::Buffer<T> row_max(R), col_min(K);
  kl::Buffer<std::int32_t> row_argmax(R), col_argmin(K);
  kl::compile<extremes_kernel<T>>().launch(kl::Grid(1), kiln::test::to_buffer(x), row_max, row_argmax, col_min,
                                           col_argmin);
  const HostExtremes<T> want(x);
  expect_equal(row_max.to_host(), want.row_max, "max_with_index value along axis 1");
  expect_equal(row_argmax.to_host(), want.row_argmax, "max_with_index index along axis 1");
  expect_equal(col_min.to_host(), want.col_min, "min_with_index value along axis 0");
  expect_equal(col_argmin.to_host(), want.col_argmin, "min_with_index index along axis 0");
}

template <class T>
class MaxWithIndex : public ::testing::Test {};
TYPED_TEST_SUITE(MaxWithIndex, kiln::test::NumericTypes, kiln::test::DTypeNames);

TYPED_TEST(MaxWithIndex, ValuesAndFirstIndicesAlongEachAxis) {
  using T = TypeParam;
  // A small range makes ties common, so the first index is what is checked.
  const auto x = kiln::test::random_values<T>(R * K, 1301, -6, 6);
  expect_extremes_of(x);
}

template <class T>
class MaxWithIndexOfFloats : public ::testing::Test {};
TYPED_TEST_SUITE(MaxWithIndexOfFloats, kiln::test::FloatTypes, kiln::test::DTypeNames);

// A NaN beats every number and ties with another NaN: the value is NaN (as
// kl::max's) and the index the first NaN's, whatever order the device
// combines in. Rows and columns with none, one and several NaNs, at random
// places.
TYPED_TEST(MaxWithIndexOfFloats, NaNsWinAtTheirFirstIndex) {
  using T = TypeParam;
  auto x = kiln::test::random_values<T>(R * K, 1302, -6, 6);
  const auto places = kiln::test::random_values<std::int32_t>(24, 1303, 0, R * K - 1);
  for (std::int32_t place : places) x[place] = kiln::test::from_double<T>(std::numeric_limits<double>::quiet_NaN());
  expect_extremes_of(x);
}

// argmax of a tile that a join also reads (the join asks for its operand in
// the slice of its pairs' layout) and argmin of one that topk and gather
// also read: the reduce's values and indices must meet in one layout.
template <class C>
void extremes_beside_other_uses_kernel(P<C> x, P<C> pairs, PI row_argmax, P<C> top, PI picks, P<C> picked) {
  auto rows = kl::expand_dims<1>(kl::arange<R>());
  auto cols = kl::expand_dims<0>(kl::arange<K>());
  auto v = kl::load(x + rows * K + cols);
  auto halves = kl::expand_dims<0>(kl::expand_dims<0>(kl::arange<2>()));
  kl::store(pairs + kl::expand_dims<2>(rows * K + cols) * 2 + halves, kl::join(v, v));
  kl::store(row_argmax + kl::arange<R>(), kl::argmax(v, kl::axis<1>));
  kl::store(top + rows * 2 + kl::expand_dims<0>(kl::arange<2>()), kl::topk<2>(v));
  auto chosen = kl::gather(v, kl::expand_dims<1>(kl::load(picks + kl::arange<R>())), kl::axis<1>);
  kl::store(picked + kl::arange<R>(), kl::reshape<R>(chosen));
}

TEST(MaxWithIndex, ArgmaxOfATileOtherOpsLayOutTheirOwnWay) {
  using T = float;
  const auto x = kiln::test::random_values<T>(R * K, 1304, -6, 6);
  const auto picks = kiln::test::random_values<std::int32_t>(R, 1305, 0, K - 1);
  kl::Buffer<T> pairs(2 * R * K), top(2 * R), picked(R);
  kl::Buffer<std::int32_t> row_argmax(R);
  kl::compile<extremes_beside_other_uses_kernel<T>>().launch(kl::Grid(1), kiln::test::to_buffer(x), pairs, row_argmax,
                                                             top, kiln::test::to_buffer(picks), picked);
  const HostExtremes<T> want(x);
  std::vector<T> want_pairs, want_top, want_picked;
  for (int i = 0; i < R; ++i) {
    std::vector<T> row(x.begin() + i * K, x.begin() + (i + 1) * K);
    for (T value : row) want_pairs.insert(want_pairs.end(), {value, value});
    std::sort(row.begin(), row.end(), std::greater<>());
    want_top.insert(want_top.end(), {row[0], row[1]});
    want_picked.push_back(x[i * K + picks[i]]);
  }
  expect_equal(row_argmax.to_host(), want.row_argmax, "argmax");
  expect_equal(pairs.to_host(), want_pairs, "join");
  expect_equal(top.to_host(), want_top, "topk");
  expect_equal(picked.to_host(), want_picked, "gather");
}

}  // namespace
