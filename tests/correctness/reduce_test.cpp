// Correctness of reductions and scans on the cpu device: sum/max/min along
// both axes of 2-D tiles (with keep_dims) and over all elements, argmax/argmin
// with ties, generic reduce with user combine functions, and cumsum, cumprod
// and associative_scan forward and reversed, for every numeric dtype.
//
// Each program reduces one 16 x 32 tile of an M x N = 45 x 27 matrix (row
// blocks of 16: the last one holds 13 rows; 27 of the 32 columns), so every
// reduction sees masked elements that must not count.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::expect_equal;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::is_float_v;
using kiln::test::random_values;
using kiln::test::sum_storage_t;
using kiln::test::unit_roundoff;
using kiln::test::wrap;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;
using PI = kl::Ptr<kl::i32>;

constexpr int BM = 16, BN = 32, M = 45, N = 27;
constexpr int kPrograms = (M + BM - 1) / BM;

// The identities of max and min, as C++ numbers the DSL turns into constants
// of the tile's dtype.
template <class C>
auto lowest() {
  if constexpr (is_float_v<C>) return -std::numeric_limits<double>::infinity();
  else return std::numeric_limits<C>::lowest();
}
template <class C>
auto highest() {
  if constexpr (is_float_v<C>) return std::numeric_limits<double>::infinity();
  else return std::numeric_limits<C>::max();
}

// The tile of this program: pointers, mask, and the row/column indices.
#define KILN_TILE_SETUP                       \
  auto pid = kl::program_id(0);               \
  auto row_ids = pid * BM + kl::arange<BM>(); \
  auto rows = kl::expand_dims<1>(row_ids);    \
  auto col_ids = kl::arange<BN>();            \
  auto cols = kl::expand_dims<0>(col_ids);    \
  auto mask = (rows < m) & (cols < n);        \
  auto offsets = rows * n + cols

template <class C>
void sums(P<C> x, P<sum_storage_t<C>> row_sums, P<sum_storage_t<C>> col_sums, P<sum_storage_t<C>> totals, kl::i32 m,
          kl::i32 n) {
  KILN_TILE_SETUP;
  auto v = kl::load(x + offsets, mask);
  kl::store(row_sums + rows, kl::sum(v, kl::axis<1>, kl::keep_dims), rows < m);
  kl::store(col_sums + pid * BN + col_ids, kl::sum(v, kl::axis<0>), col_ids < n);
  kl::store(totals + pid, kl::sum(v));
}

template <class C>
void extremes(P<C> x, P<C> row_max, P<C> col_max, P<C> row_min, P<C> col_min, PI row_argmax, PI col_argmax,
              PI row_argmin, PI col_argmin, kl::i32 m, kl::i32 n) {
  KILN_TILE_SETUP;
  auto v = kl::load(x + offsets, mask);
  auto low = kl::where(mask, v, lowest<C>());
  auto high = kl::where(mask, v, highest<C>());
  kl::store(row_max + row_ids, kl::max(low, kl::axis<1>), row_ids < m);
  kl::store(col_max + pid * BN + cols, kl::max(low, kl::axis<0>, kl::keep_dims), cols < n);
  kl::store(row_min + rows, kl::min(high, kl::axis<1>, kl::keep_dims), rows < m);
  kl::store(col_min + pid * BN + col_ids, kl::min(high, kl::axis<0>), col_ids < n);
  kl::store(row_argmax + row_ids, kl::argmax(low, kl::axis<1>), row_ids < m);
  kl::store(col_argmax + pid * BN + col_ids, kl::argmax(low, kl::axis<0>), col_ids < n);
  kl::store(row_argmin + row_ids, kl::argmin(high, kl::axis<1>), row_ids < m);
  kl::store(col_argmin + pid * BN + col_ids, kl::argmin(high, kl::axis<0>), col_ids < n);
}

// Generic reduce with user combine functions: the product of each row of x
// (masked elements read as 1) and the largest magnitude of each column of y
// (masked as 0).
template <class C>
void generic_reduce(P<C> x, P<C> y, P<C> row_products, P<C> col_max_abs, kl::i32 m, kl::i32 n) {
  KILN_TILE_SETUP;
  auto ones = kl::load(x + offsets, mask, {.other = 1});
  auto zeros = kl::load(y + offsets, mask);
  kl::store(row_products + row_ids, kl::reduce(ones, kl::axis<1>, [](auto a, auto b) { return a * b; }), row_ids < m);
  kl::store(col_max_abs + pid * BN + col_ids,
            kl::reduce(zeros, kl::axis<0>, [](auto a, auto b) { return kl::maximum(kl::abs(a), kl::abs(b)); }),
            col_ids < n);
}

template <class C>
void scans(P<C> x, P<sum_storage_t<C>> row_cumsum, P<sum_storage_t<C>> row_cumsum_reversed,
           P<sum_storage_t<C>> col_cumsum, P<sum_storage_t<C>> row_cumprod, P<C> col_running_max_reversed, kl::i32 m,
           kl::i32 n) {
  KILN_TILE_SETUP;
  auto v = kl::load(x + offsets, mask);
  auto ones = kl::load(x + offsets, mask, {.other = 1});
  auto low = kl::where(mask, v, lowest<C>());
  kl::store(row_cumsum + offsets, kl::cumsum(v, kl::axis<1>), mask);
  kl::store(row_cumsum_reversed + offsets, kl::cumsum(v, kl::axis<1>, true), mask);
  kl::store(col_cumsum + offsets, kl::cumsum(v, kl::axis<0>), mask);
  kl::store(row_cumprod + offsets, kl::cumprod(ones, kl::axis<1>), mask);
  kl::store(col_running_max_reversed + offsets,
            kl::associative_scan(low, kl::axis<0>, [](auto a, auto b) { return kl::maximum(a, b); }, true), mask);
}

#undef KILN_TILE_SETUP

// ---------------------------------------------------------------------------
// References. An output element is described by the list of input indices it
// combines, in order.

using Group = std::vector<std::size_t>;

std::size_t at(int i, int j) { return static_cast<std::size_t>(i) * N + j; }

// Rows of the matrix; columns of each program's row block (kPrograms * BN
// entries, the masked columns empty); the whole of each block.
std::vector<Group> row_groups(bool reversed = false) {
  std::vector<Group> g(M);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) g[i].push_back(at(i, reversed ? N - 1 - j : j));
  return g;
}
std::vector<Group> block_column_groups() {
  std::vector<Group> g(kPrograms * BN);
  for (int p = 0; p < kPrograms; ++p)
    for (int j = 0; j < N; ++j)
      for (int i = p * BM; i < std::min(M, p * BM + BM); ++i) g[p * BN + j].push_back(at(i, j));
  return g;
}
std::vector<Group> block_groups() {
  std::vector<Group> g(kPrograms);
  for (int p = 0; p < kPrograms; ++p)
    for (int i = p * BM; i < std::min(M, p * BM + BM); ++i)
      for (int j = 0; j < N; ++j) g[p].push_back(at(i, j));
  return g;
}
// Inclusive prefixes of each group, the result of element k stored at index
// group[k] of an M x N output.
std::vector<Group> prefixes_by_position(const std::vector<Group>& groups) {
  std::vector<Group> out(static_cast<std::size_t>(M) * N);
  for (const Group& g : groups)
    for (std::size_t k = 0; k < g.size(); ++k) out[g[k]] = Group(g.begin(), g.begin() + static_cast<long>(k) + 1);
  return out;
}

/// Sums: ints exactly, wrapping at S's width; floats within the bound of a
/// recursive sum of `count` terms in S (gamma_{count} u_S sum|x|, the
/// reference's own double rounding adds gamma_{count} 2^-53 sum|x|).
/// Empty groups (masked columns) are not checked.
template <class C, class S>
void check_sums(const std::vector<S>& got, const std::vector<C>& x, const std::vector<Group>& groups,
                const char* what) {
  std::vector<S> got_checked;
  std::vector<S> exact;
  std::vector<double> want, bound;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    if (groups[k].empty()) continue;
    got_checked.push_back(got[k]);
    if constexpr (is_float_v<S>) {
      double sum = 0, magnitude = 0;
      for (std::size_t i : groups[k]) {
        sum += as_double(x[i]);
        magnitude += std::abs(as_double(x[i]));
      }
      const double count = static_cast<double>(groups[k].size());
      want.push_back(sum);
      bound.push_back((gamma_bound(count, unit_roundoff<S>()) + gamma_bound(count, 0x1p-53)) * magnitude);
    } else {
      std::uint64_t sum = 0;
      for (std::size_t i : groups[k]) sum += static_cast<std::uint64_t>(x[i]);
      exact.push_back(wrap<S>(sum));
    }
  }
  if constexpr (is_float_v<S>) expect_within(got_checked, want, bound, what);
  else expect_equal(got_checked, exact, what);
}

/// Products: ints exactly (wrapping); floats within gamma_{count} relative of
/// the exact product (count - 1 roundings in S, plus the reference's in double).
template <class C, class S>
void check_products(const std::vector<S>& got, const std::vector<C>& x, const std::vector<Group>& groups,
                    const char* what) {
  std::vector<S> got_checked, exact;
  std::vector<double> want, bound;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    if (groups[k].empty()) continue;
    got_checked.push_back(got[k]);
    if constexpr (is_float_v<S>) {
      double product = 1;
      for (std::size_t i : groups[k]) product *= as_double(x[i]);
      const double count = static_cast<double>(groups[k].size());
      want.push_back(product);
      bound.push_back((gamma_bound(count, unit_roundoff<S>()) + gamma_bound(count, 0x1p-53)) * std::abs(product));
    } else {
      std::uint64_t product = 1;
      for (std::size_t i : groups[k]) product *= static_cast<std::uint64_t>(x[i]);
      exact.push_back(wrap<S>(product));
    }
  }
  if constexpr (is_float_v<S>) expect_within(got_checked, want, bound, what);
  else expect_equal(got_checked, exact, what);
}

/// The largest (Max) or smallest element of each group, with `key` applied,
/// and the position in the group of its first occurrence.
template <bool Max, class C, class Key>
void extreme_of(const std::vector<C>& x, const std::vector<Group>& groups, Key key, std::vector<C>& value,
                std::vector<std::int32_t>& index) {
  for (const Group& g : groups) {
    if (g.empty()) continue;
    std::size_t best = 0;
    for (std::size_t k = 1; k < g.size(); ++k) {
      const bool better = Max ? key(x[g[k]]) > key(x[g[best]]) : key(x[g[k]]) < key(x[g[best]]);
      if (better) best = k;
    }
    value.push_back(key(x[g[best]]));
    index.push_back(static_cast<std::int32_t>(best));
  }
}

template <class T>
std::vector<T> checked(const std::vector<T>& got, const std::vector<Group>& groups) {
  std::vector<T> out;
  for (std::size_t k = 0; k < groups.size(); ++k)
    if (!groups[k].empty()) out.push_back(got[k]);
  return out;
}

template <class C>
struct Identity {
  C operator()(C v) const { return v; }
};

// Inputs: floats in [-4, 4]; ints over the whole range of C (sums wrap).
template <class C>
std::vector<C> general_values(std::uint64_t seed) {
  if constexpr (is_float_v<C>) return random_values<C>(static_cast<std::size_t>(M) * N, seed);
  else
    return random_values<C>(static_cast<std::size_t>(M) * N, seed,
                            static_cast<double>(std::numeric_limits<C>::lowest()),
                            static_cast<double>(std::numeric_limits<C>::max()));
}
// Nonzero values of magnitude 1..3 (ints) or 0.8..1.25 (floats) with random
// signs (unsigned: positive): products of 27 neither vanish nor overflow f16,
// and wrap for ints.
template <class C>
std::vector<C> product_values(std::uint64_t seed) {
  const std::size_t count = static_cast<std::size_t>(M) * N;
  auto magnitude =
      is_float_v<C> ? random_values<double>(count, seed, 0.8, 1.25) : random_values<double>(count, seed, 1.0, 3.999);
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  std::vector<C> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double m = is_float_v<C> ? magnitude[i] : std::floor(magnitude[i]);
    const bool negative = std::is_signed_v<C> || is_float_v<C> ? (rng() & 1) != 0 : false;
    out[i] = kiln::test::from_double<C>(negative ? -m : m);
  }
  return out;
}

template <class C>
class Reduce : public ::testing::Test {};
TYPED_TEST_SUITE(Reduce, kiln::test::NumericTypes, kiln::test::DTypeNames);

TYPED_TEST(Reduce, SumAlongEachAxisAndOfAll) {
  using C = TypeParam;
  using S = sum_storage_t<C>;
  const auto x = general_values<C>(41);
  auto bx = kl::Buffer<C>::from(x);
  kl::Buffer<S> row_sums(M), col_sums(kPrograms * BN), totals(kPrograms);
  kl::compile<sums<C>>().launch(kl::Grid(kPrograms), bx, row_sums, col_sums, totals, M, N);
  const auto columns = block_column_groups();
  check_sums(row_sums.to_host(), x, row_groups(), "sum axis 1 (keep_dims)");
  check_sums(col_sums.to_host(), x, columns, "sum axis 0");
  check_sums(totals.to_host(), x, block_groups(), "sum of all elements");
}

TYPED_TEST(Reduce, MaxMinArgmaxArgmin) {
  using C = TypeParam;
  // Once with values spread over the type's range, once with values in a
  // range of 7 so that every row and column has ties (argmax/argmin must give
  // the first index).
  std::vector<std::vector<C>> inputs{
      general_values<C>(42),
      random_values<C>(static_cast<std::size_t>(M) * N, 43, std::is_signed_v<C> || is_float_v<C> ? -3 : 0,
                       std::is_signed_v<C> || is_float_v<C> ? 3 : 6)};
  // Floats of the second input: whole numbers (+ 0.0 turns -0 into +0, whose
  // bits a tie between them would leave unspecified).
  if constexpr (is_float_v<C>)
    for (auto& v : inputs[1]) v = kiln::test::from_double<C>(std::round(as_double(v)) + 0.0);
  for (const auto& x : inputs) {
    auto bx = kl::Buffer<C>::from(x);
    kl::Buffer<C> row_max(M), col_max(kPrograms * BN), row_min(M), col_min(kPrograms * BN);
    kl::Buffer<std::int32_t> row_argmax(M), col_argmax(kPrograms * BN), row_argmin(M), col_argmin(kPrograms * BN);
    kl::compile<extremes<C>>().launch(kl::Grid(kPrograms), bx, row_max, col_max, row_min, col_min, row_argmax,
                                      col_argmax, row_argmin, col_argmin, M, N);
    const auto rows = row_groups();
    const auto columns = block_column_groups();
    std::vector<C> want_row_max, want_col_max, want_row_min, want_col_min;
    std::vector<std::int32_t> want_row_argmax, want_col_argmax, want_row_argmin, want_col_argmin;
    if constexpr (is_float_v<C>) {
      // Compare floats through double (the narrow types have no operator<).
      std::vector<double> xd(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) xd[i] = as_double(x[i]);
      std::vector<double> rmax, cmax, rmin, cmin;
      extreme_of<true>(xd, rows, Identity<double>{}, rmax, want_row_argmax);
      extreme_of<true>(xd, columns, Identity<double>{}, cmax, want_col_argmax);
      extreme_of<false>(xd, rows, Identity<double>{}, rmin, want_row_argmin);
      extreme_of<false>(xd, columns, Identity<double>{}, cmin, want_col_argmin);
      for (double v : rmax) want_row_max.push_back(kiln::test::from_double<C>(v));
      for (double v : cmax) want_col_max.push_back(kiln::test::from_double<C>(v));
      for (double v : rmin) want_row_min.push_back(kiln::test::from_double<C>(v));
      for (double v : cmin) want_col_min.push_back(kiln::test::from_double<C>(v));
    } else {
      extreme_of<true>(x, rows, Identity<C>{}, want_row_max, want_row_argmax);
      extreme_of<true>(x, columns, Identity<C>{}, want_col_max, want_col_argmax);
      extreme_of<false>(x, rows, Identity<C>{}, want_row_min, want_row_argmin);
      extreme_of<false>(x, columns, Identity<C>{}, want_col_min, want_col_argmin);
    }
    expect_equal(row_max.to_host(), want_row_max, "max axis 1");
    expect_equal(checked(col_max.to_host(), columns), want_col_max, "max axis 0 (keep_dims)");
    expect_equal(row_min.to_host(), want_row_min, "min axis 1 (keep_dims)");
    expect_equal(checked(col_min.to_host(), columns), want_col_min, "min axis 0");
    expect_equal(row_argmax.to_host(), want_row_argmax, "argmax axis 1");
    expect_equal(checked(col_argmax.to_host(), columns), want_col_argmax, "argmax axis 0");
    expect_equal(row_argmin.to_host(), want_row_argmin, "argmin axis 1");
    expect_equal(checked(col_argmin.to_host(), columns), want_col_argmin, "argmin axis 0");
  }
}

TYPED_TEST(Reduce, GenericReduceWithUserCombine) {
  using C = TypeParam;
  const auto x = product_values<C>(44);
  // Max of magnitudes: values away from the most negative int, whose |x| wraps.
  const auto y = random_values<C>(static_cast<std::size_t>(M) * N, 45, -100, 100);
  auto bx = kl::Buffer<C>::from(x), by = kl::Buffer<C>::from(y);
  kl::Buffer<C> row_products(M), col_max_abs(kPrograms * BN);
  kl::compile<generic_reduce<C>>().launch(kl::Grid(kPrograms), bx, by, row_products, col_max_abs, M, N);
  check_products(row_products.to_host(), x, row_groups(), "reduce with a * b along axis 1");
  const auto columns = block_column_groups();
  std::vector<C> want;
  std::vector<std::int32_t> ignored;
  if constexpr (is_float_v<C>) {
    std::vector<double> yd(y.size()), w;
    for (std::size_t i = 0; i < y.size(); ++i) yd[i] = std::abs(as_double(y[i]));
    extreme_of<true>(yd, columns, Identity<double>{}, w, ignored);
    for (double v : w) want.push_back(kiln::test::from_double<C>(v));
  } else {
    extreme_of<true>(
        y, columns,
        [](C v) {
          if constexpr (std::is_signed_v<C>) return static_cast<C>(v < 0 ? -v : v);
          else return v;
        },
        want, ignored);
  }
  expect_equal(checked(col_max_abs.to_host(), columns), want, "reduce with max(|a|, |b|) along axis 0");
}

TYPED_TEST(Reduce, ScansForwardAndReversed) {
  using C = TypeParam;
  using S = sum_storage_t<C>;
  const auto x = product_values<C>(46);
  const std::size_t count = static_cast<std::size_t>(M) * N;
  auto bx = kl::Buffer<C>::from(x);
  kl::Buffer<S> row_cumsum(count), row_cumsum_reversed(count), col_cumsum(count), row_cumprod(count);
  kl::Buffer<C> col_running_max_reversed(count);
  kl::compile<scans<C>>().launch(kl::Grid(kPrograms), bx, row_cumsum, row_cumsum_reversed, col_cumsum, row_cumprod,
                                 col_running_max_reversed, M, N);
  // Column groups of each block, as M x N positions.
  std::vector<Group> columns, columns_reversed;
  for (const Group& g : block_column_groups())
    if (!g.empty()) {
      columns.push_back(g);
      columns_reversed.emplace_back(g.rbegin(), g.rend());
    }
  check_sums(row_cumsum.to_host(), x, prefixes_by_position(row_groups()), "cumsum axis 1");
  check_sums(row_cumsum_reversed.to_host(), x, prefixes_by_position(row_groups(true)), "cumsum axis 1 reversed");
  check_sums(col_cumsum.to_host(), x, prefixes_by_position(columns), "cumsum axis 0");
  check_products(row_cumprod.to_host(), x, prefixes_by_position(row_groups()), "cumprod axis 1");
  const auto suffixes = prefixes_by_position(columns_reversed);
  std::vector<C> want;
  std::vector<std::int32_t> ignored;
  if constexpr (is_float_v<C>) {
    std::vector<double> xd(x.size()), w;
    for (std::size_t i = 0; i < x.size(); ++i) xd[i] = as_double(x[i]);
    extreme_of<true>(xd, suffixes, Identity<double>{}, w, ignored);
    for (double v : w) want.push_back(kiln::test::from_double<C>(v));
  } else {
    extreme_of<true>(x, suffixes, Identity<C>{}, want, ignored);
  }
  expect_equal(col_running_max_reversed.to_host(), want, "associative_scan maximum along axis 0 reversed");
}

}  // namespace
