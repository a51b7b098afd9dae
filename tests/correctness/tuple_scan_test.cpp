// Correctness of associative_scan over tuples of tiles with combine functions
// that are associative but not commutative, forward and reversed, along a
// tile's axis 1 (lanes and warps of each row) and axis 0 (rows spread over
// lanes and warps), with masked tails:
//  - the first-order linear recurrence h[t] = a[t] h[t-1] + x[t], as the pairs
//    (a, x) under (a1, x1), (a2, x2) -> (a1 a2, a2 x1 + x2) (the scan behind
//    state-space models); exact for wrapping integers, within a bound derived
//    from the length for floats;
//  - forward fill, (present, value) -> the later present value, exact.
// Each device must give the result of the scan in index order, whatever
// grouping its code uses: reversing the operands of any combine changes it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::expect_equal;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::unit_roundoff;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;
using PI = kl::Ptr<kl::i32>;

// Rows: each program scans BR rows of BC columns of an M x N matrix along
// axis 1. Columns: each program scans CR rows of CC columns along axis 0.
constexpr int BR = 4, BC = 256, CR = 256, CC = 4;
constexpr int M = 10, N = 200;

template <class A, class X>
auto compose(A a1, X x1, A a2, X x2) {
  return std::make_tuple(a1 * a2, a2 * x1 + x2);
}

template <class C>
void recurrence_along_rows(P<C> a, P<C> x, P<C> products, P<C> forward, P<C> reversed, kl::i32 m, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BR + kl::arange<BR>());
  auto cols = kl::expand_dims<0>(kl::arange<BC>());
  auto mask = (rows < m) & (cols < n);
  auto offsets = rows * n + cols;
  // Outside the matrix, (1, 0) is the identity of the composition.
  auto av = kl::load(a + offsets, mask, {.other = 1});
  auto xv = kl::load(x + offsets, mask);
  auto [a_forward, h_forward] = kl::associative_scan(
      std::make_tuple(av, xv), kl::axis<1>, [](auto a1, auto x1, auto a2, auto x2) { return compose(a1, x1, a2, x2); });
  kl::store(products + offsets, a_forward, mask);
  kl::store(forward + offsets, h_forward, mask);
  auto [a_reversed, h_reversed] = kl::associative_scan(
      std::make_tuple(av, xv), kl::axis<1>, [](auto a1, auto x1, auto a2, auto x2) { return compose(a1, x1, a2, x2); },
      true);
  kl::store(reversed + offsets, h_reversed, mask);
}

template <class C>
void recurrence_along_columns(P<C> a, P<C> x, P<C> forward, P<C> reversed, kl::i32 m, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::arange<CR>());
  auto cols = kl::expand_dims<0>(kl::program_id(0) * CC + kl::arange<CC>());
  auto mask = (rows < m) & (cols < n);
  auto offsets = rows * n + cols;
  auto av = kl::load(a + offsets, mask, {.other = 1});
  auto xv = kl::load(x + offsets, mask);
  auto combine = [](auto a1, auto x1, auto a2, auto x2) { return compose(a1, x1, a2, x2); };
  kl::store(forward + offsets, std::get<1>(kl::associative_scan(std::make_tuple(av, xv), kl::axis<0>, combine)), mask);
  kl::store(reversed + offsets, std::get<1>(kl::associative_scan(std::make_tuple(av, xv), kl::axis<0>, combine, true)),
            mask);
}

// Forward fill along rows: each element becomes the last present value at or
// before it (or after it, reversed), and -1 before the first.
void fill_along_rows(PI present, PI values, PI filled, PI filled_backward, kl::i32 m, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BR + kl::arange<BR>());
  auto cols = kl::expand_dims<0>(kl::arange<BC>());
  auto mask = (rows < m) & (cols < n);
  auto offsets = rows * n + cols;
  auto p = kl::load(present + offsets, mask);
  auto v = kl::where(p != 0, kl::load(values + offsets, mask), -1);
  auto later_present = [](auto p1, auto v1, auto p2, auto v2) {
    return std::make_tuple(kl::maximum(p1, p2), kl::where(p2 != 0, v2, v1));
  };
  kl::store(filled + offsets, std::get<1>(kl::associative_scan(std::make_tuple(p, v), kl::axis<1>, later_present)),
            mask);
  kl::store(filled_backward + offsets,
            std::get<1>(kl::associative_scan(std::make_tuple(p, v), kl::axis<1>, later_present, true)), mask);
}

/// The positions of each line (a row, or a column) of the M x N matrix.
std::vector<std::vector<std::size_t>> lines(bool rows) {
  std::vector<std::vector<std::size_t>> out;
  for (int i = 0; i < (rows ? M : N); ++i) {
    std::vector<std::size_t>& line = out.emplace_back();
    for (int j = 0; j < (rows ? N : M); ++j) line.push_back(static_cast<std::size_t>(rows ? i * N + j : j * N + i));
  }
  return out;
}

/// The recurrence along each line, in order or reversed, exactly (wrapping
/// integers) or in double beside the bound a reordered float evaluation
/// stays within: h[t] is the sum over k <= t of x[k] times a[k+1..t], each term
/// a product of at most length factors, so any grouping is within
/// gamma_{2 length} of the sum of the terms' magnitudes.
template <class C>
struct Recurrence {
  std::vector<C> exact;
  std::vector<double> values, bounds, products, product_bounds;
};

template <class C>
Recurrence<C> recurrence(const std::vector<C>& a, const std::vector<C>& x, bool rows, bool reversed) {
  // Integers wrap: their arithmetic is done unsigned, where it is defined.
  using Wide = typename std::conditional_t<std::is_integral_v<C>, std::make_unsigned<C>, std::type_identity<C>>::type;
  Recurrence<C> r;
  r.exact.resize(a.size());
  r.values.resize(a.size());
  r.bounds.resize(a.size());
  r.products.resize(a.size());
  r.product_bounds.resize(a.size());
  const double u = std::is_floating_point_v<C> ? unit_roundoff<C>() : 0;
  for (std::vector<std::size_t> line : lines(rows)) {
    if (reversed) std::ranges::reverse(line);
    const double gamma = gamma_bound(2.0 * static_cast<double>(line.size()), u);
    Wide h{0}, product{1};
    double hd = 0, magnitude = 0, pd = 1;
    for (std::size_t i : line) {
      h = static_cast<Wide>(static_cast<Wide>(a[i]) * h + static_cast<Wide>(x[i]));
      product = static_cast<Wide>(product * static_cast<Wide>(a[i]));
      hd = as_double(a[i]) * hd + as_double(x[i]);
      magnitude = std::abs(as_double(a[i])) * magnitude + std::abs(as_double(x[i]));
      pd *= as_double(a[i]);
      r.exact[i] = static_cast<C>(h);
      r.values[i] = hd;
      r.bounds[i] = gamma * magnitude;
      r.products[i] = pd;
      r.product_bounds[i] = gamma * std::abs(pd);
    }
  }
  return r;
}

// Coefficients a of floats of magnitude in [0.9, 1.1] and either sign, so
// that neither h nor the running product of a vanishes or explodes over a
// row, and inputs x in [-4, 4]; integers over their whole range, where they
// wrap.
template <class C>
std::vector<C> coefficients(std::uint64_t seed) {
  if constexpr (std::is_floating_point_v<C>) {
    std::vector<C> a = kiln::test::random_values<C>(M * N, seed, 0.9, 1.1);
    const std::vector<C> sign = kiln::test::random_values<C>(M * N, seed + 1, -1, 1);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::copysign(a[i], sign[i]);
    return a;
  } else {
    return kiln::test::random_values<C>(M * N, seed, -1e30, 1e30);
  }
}
template <class C>
std::vector<C> inputs(std::uint64_t seed) {
  if constexpr (std::is_floating_point_v<C>) return kiln::test::random_values<C>(M * N, seed);
  else return kiln::test::random_values<C>(M * N, seed, -1e30, 1e30);
}

template <class C>
void expect_recurrence(const std::vector<C>& got, const Recurrence<C>& want, const char* what) {
  if constexpr (std::is_floating_point_v<C>) expect_within(got, want.values, want.bounds, what);
  else expect_equal(got, want.exact, what);
}

template <class T>
class TupleScan : public ::testing::Test {};
using ScanTypes = ::testing::Types<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double>;
TYPED_TEST_SUITE(TupleScan, ScanTypes, kiln::test::DTypeNames);

TYPED_TEST(TupleScan, LinearRecurrenceAlongRowsForwardAndReversed) {
  using C = TypeParam;
  const std::vector<C> a = coefficients<C>(2101), x = inputs<C>(2102);
  kl::Buffer<C> products(M * N), forward(M * N), reversed(M * N);
  kl::compile<recurrence_along_rows<C>>().launch(kl::Grid((M + BR - 1) / BR), kiln::test::to_buffer(a),
                                                 kiln::test::to_buffer(x), products, forward, reversed, M, N);
  const Recurrence<C> in_order = recurrence(a, x, true, false);
  expect_recurrence(forward.to_host(), in_order, "h = a h + x along rows");
  expect_recurrence(reversed.to_host(), recurrence(a, x, true, true), "h = a h + x along rows, reversed");
  if constexpr (std::is_floating_point_v<C>)
    expect_within(products.to_host(), in_order.products, in_order.product_bounds, "running product of a");
}

TYPED_TEST(TupleScan, LinearRecurrenceAlongColumnsForwardAndReversed) {
  using C = TypeParam;
  const std::vector<C> a = coefficients<C>(2201), x = inputs<C>(2202);
  kl::Buffer<C> forward(M * N), reversed(M * N);
  kl::compile<recurrence_along_columns<C>>().launch(kl::Grid((N + CC - 1) / CC), kiln::test::to_buffer(a),
                                                    kiln::test::to_buffer(x), forward, reversed, M, N);
  expect_recurrence(forward.to_host(), recurrence(a, x, false, false), "h = a h + x along columns");
  expect_recurrence(reversed.to_host(), recurrence(a, x, false, true), "h = a h + x along columns, reversed");
}

TEST(TupleScan, ForwardFillAlongRowsTakesTheLastPresentValue) {
  const std::vector<std::int32_t> present = kiln::test::random_values<std::int32_t>(M * N, 2301, 0, 1);
  const std::vector<std::int32_t> values = kiln::test::random_values<std::int32_t>(M * N, 2302, 0, 1000);
  kl::Buffer<std::int32_t> filled(M * N), filled_backward(M * N);
  kl::compile<fill_along_rows>().launch(kl::Grid((M + BR - 1) / BR), kiln::test::to_buffer(present),
                                        kiln::test::to_buffer(values), filled, filled_backward, M, N);
  std::vector<std::int32_t> want(M * N), want_backward(M * N);
  for (bool backward : {false, true})
    for (std::vector<std::size_t> line : lines(true)) {
      if (backward) std::ranges::reverse(line);
      std::int32_t last = -1;
      for (std::size_t i : line) {
        if (present[i] != 0) last = values[i];
        (backward ? want_backward : want)[i] = last;
      }
    }
  expect_equal(filled.to_host(), want, "forward fill along rows");
  expect_equal(filled_backward.to_host(), want_backward, "backward fill along rows");
}

}  // namespace
