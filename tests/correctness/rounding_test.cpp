// Correctness of the exact float functions: trunc, round (halfway cases away
// from zero), rint (halfway cases to even), isnan, isinf and div_rn (the
// IEEE division that `/` also is), bit for bit against a double reference,
// for every float dtype, on ties of both signs, signed zeros, infinities,
// NaN, the largest and smallest values.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::from_double;

constexpr int kBlock = 64;
constexpr int kRoundings = 5;

// Rounding k of element i is rounded[k * n + i]; the classes go to is_nan and
// is_inf.
template <class C>
void rounding_kernel(kl::Ptr<kl::Scalar<C>> x_ptr, kl::Ptr<kl::Scalar<C>> y_ptr, kl::Ptr<kl::Scalar<C>> rounded,
                     kl::Ptr<kl::i1> is_nan, kl::Ptr<kl::i1> is_inf, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto x = kl::load(x_ptr + offs, mask);
  auto y = kl::load(y_ptr + offs, mask);
  int k = 0;
  auto put = [&](const auto& v) { kl::store(rounded + (offs + (k++) * n), v, mask); };
  put(kl::trunc(x));
  put(kl::round(x));
  put(kl::rint(x));
  put(kl::div_rn(x, y));
  put(x / y);
  kl::store(is_nan + offs, kl::isnan(x), mask);
  kl::store(is_inf + offs, kl::isinf(x), mask);
}

/// The number of significand bits of T (with the implicit one).
template <class T>
int precision() {
  if constexpr (std::is_same_v<T, kl::half>) return 11;
  else if constexpr (std::is_same_v<T, kl::bfloat16>) return 8;
  else return std::numeric_limits<T>::digits;
}

template <class T>
class Rounding : public ::testing::Test {};
TYPED_TEST_SUITE(Rounding, kiln::test::FloatTypes, kiln::test::DTypeNames);

TYPED_TEST(Rounding, RoundingsClassesAndDivisionAreExact) {
  using T = TypeParam;
  const int n = 800;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double big = kiln::test::max_finite<T>(), tiny = kiln::test::min_normal<T>();
  // 2^(p-1) - 1/2 is the largest tie below the integers-only range; 2^(p-1) + 1 is an integer.
  const double last_tie = std::ldexp(1.0, precision<T>() - 1) - 0.5;
  const double first_whole = std::ldexp(1.0, precision<T>() - 1) + 1;
  // The largest value below 1/2, which x + 1/2 rounds up to 1.
  const double below_half = 0.5 - std::ldexp(1.0, -precision<T>() - 1);
  auto x = kiln::test::random_values<T>(n, 701, -8, 8);
  auto y = kiln::test::random_values<T>(n, 702, -8, 8);
  // Every third x a tie k + 1/2 (exact in every dtype for |k| <= 6).
  const auto whole = kiln::test::random_values<std::int32_t>(n, 703, -6, 6);
  for (int i = 0; i < n; i += 3) x[i] = from_double<T>(whole[i] + 0.5);
  const std::vector<double> xs = {0.0,       -0.0,        inf,          -inf,       nan,  0.5,  -0.5,  1.5,   -1.5,
                                  2.5,       -2.5,        -0.4,         below_half, big,  -big, tiny,  -tiny, last_tie,
                                  -last_tie, first_whole, -first_whole, 1.0,        -3.5, 3.5,  -0.75, 7.0};
  const std::vector<double> ys = {0.0, 0.0,  inf, 0.0, 1.0,  -0.0, 0.0, 3.0,  -3.0, 7.0,  inf,  -inf, 5.0,
                                  0.5, -0.5, big, 3.0, -big, 2.0,  1.0, -1.0, nan,  -0.0, 1e-3, -7.0, 3.0};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    x[i] = from_double<T>(xs[i]);
    y[i] = from_double<T>(ys[i]);
  }
  kl::Buffer<T> rounded(static_cast<std::size_t>(kRoundings) * n);
  kl::Buffer<bool> is_nan(n), is_inf(n);
  using kiln::test::to_buffer;
  kl::compile<rounding_kernel<T>>().launch(kl::Grid(kl::cdiv(n, kBlock)), to_buffer(x), to_buffer(y), rounded, is_nan,
                                           is_inf, n);

  // Each reference is exact in double and representable in T: the roundings
  // of a T value are T values, and a quotient of two T values rounded to
  // double and then to T is rounded once (from_double).
  std::vector<std::vector<T>> want(kRoundings, std::vector<T>(n));
  std::vector<bool> want_nan(n), want_inf(n);
  for (int i = 0; i < n; ++i) {
    const double v = as_double(x[i]), w = as_double(y[i]);
    const double ties_away = std::round(v);
    const double ties_even = std::abs(v - std::trunc(v)) == 0.5 ? 2 * std::round(v / 2) : ties_away;
    const double results[kRoundings] = {std::trunc(v), ties_away, std::copysign(ties_even, v), v / w, v / w};
    for (int k = 0; k < kRoundings; ++k) want[k][i] = from_double<T>(results[k]);
    want_nan[i] = std::isnan(v);
    want_inf[i] = std::isinf(v);
  }
  const auto got = rounded.to_host();
  static const char* const names[kRoundings] = {"trunc", "round", "rint", "div_rn", "a / b"};
  for (int k = 0; k < kRoundings; ++k)
    kiln::test::expect_equal(std::vector<T>(got.begin() + k * n, got.begin() + (k + 1) * n), want[k], names[k]);
  kiln::test::expect_equal(is_nan.to_host(), want_nan, "isnan");
  kiln::test::expect_equal(is_inf.to_host(), want_inf, "isinf");
}

/// div_rn is the `div` op, not a second division: CSE merges div_rn(x, y)
/// and x / y of the kernel above into one.
TEST(Rounding, DivRnIsTheDivOp) {
  const auto kernel = kl::compile<rounding_kernel<float>>();
  int divisions = 0;
  kiln::ir::walk(kernel.ir().body, [&](kiln::ir::Operation& op) { divisions += op.code == kiln::ir::OpCode::div; });
  EXPECT_EQ(divisions, 1);
}

}  // namespace
