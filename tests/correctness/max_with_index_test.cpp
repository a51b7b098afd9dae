// Correctness of max_with_index and min_with_index (the extreme along an axis
// and the index of its first occurrence, from one reduction) for every numeric
// dtype, along both axes of 2-D tiles with many ties, against a host scan.
#include <cstdint>
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

template <class T>
class MaxWithIndex : public ::testing::Test {};
TYPED_TEST_SUITE(MaxWithIndex, kiln::test::NumericTypes, kiln::test::DTypeNames);

TYPED_TEST(MaxWithIndex, ValuesAndFirstIndicesAlongEachAxis) {
  using T = TypeParam;
  // A small range makes ties common, so the first index is what is checked.
  const auto x = kiln::test::random_values<T>(R * K, 1301, -6, 6);
  kl::Buffer<T> row_max(R), col_min(K);
  kl::Buffer<std::int32_t> row_argmax(R), col_argmin(K);
  kl::compile<extremes_kernel<T>>().launch(kl::Grid(1), kiln::test::to_buffer(x), row_max, row_argmax, col_min,
                                           col_argmin);
  std::vector<T> w_row_max(R), w_col_min(K);
  std::vector<std::int32_t> w_row_argmax(R, 0), w_col_argmin(K, 0);
  using kiln::test::as_double;
  for (int i = 0; i < R; ++i) {
    for (int j = 1; j < K; ++j)
      if (as_double(x[i * K + j]) > as_double(x[i * K + w_row_argmax[i]])) w_row_argmax[i] = j;
    w_row_max[i] = x[i * K + w_row_argmax[i]];
  }
  for (int j = 0; j < K; ++j) {
    for (int i = 1; i < R; ++i)
      if (as_double(x[i * K + j]) < as_double(x[w_col_argmin[j] * K + j])) w_col_argmin[j] = i;
    w_col_min[j] = x[w_col_argmin[j] * K + j];
  }
  expect_equal(row_max.to_host(), w_row_max, "max_with_index value along axis 1");
  expect_equal(row_argmax.to_host(), w_row_argmax, "max_with_index index along axis 1");
  expect_equal(col_min.to_host(), w_col_min, "min_with_index value along axis 0");
  expect_equal(col_argmin.to_host(), w_col_argmin, "min_with_index index along axis 0");
}

}  // namespace
