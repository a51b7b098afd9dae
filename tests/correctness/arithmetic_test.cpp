// Correctness of the arithmetic operators (+ - * / %, unary -, compound
// assignment) between tiles, scalars and C++ literals, and of abs, minimum,
// maximum and clamp, for every numeric dtype.
#include <algorithm>
#include <array>
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
using kiln::test::is_float_v;

constexpr int kBlock = 64;
constexpr int kOps = 15;

// Result k of element i is out[k * n + i]. Masked-off lanes load b = 1: an
// integer division by zero is a fault even where the mask is false.
template <class C>
void arithmetic_kernel(kl::Ptr<kl::Scalar<C>> a_ptr, kl::Ptr<kl::Scalar<C>> b_ptr, kl::Scalar<C> s,
                       kl::Ptr<kl::Scalar<C>> out, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto a = kl::load(a_ptr + offs, mask);
  auto b = kl::load(b_ptr + offs, mask, {.other = 1});
  auto c = a;
  c *= 2;
  c -= b;
  int k = 0;
  auto put = [&](const auto& v) { kl::store(out + (offs + (k++) * n), v, mask); };
  put(a + b);
  put(a - b);
  put(a * b);
  put(a / b);
  put(a % b);
  put(-a);
  put(kl::abs(a));
  put(kl::minimum(a, b));
  put(kl::maximum(a, b));
  put(kl::clamp(a, s, 3));
  put(a + s);
  put(s - a);
  put(a * 3);
  put(7 - a);
  put(c);
}

// The expected results, in the order the kernel stores them. Integers: exact,
// with two's complement wrap-around (computed in 64-bit unsigned arithmetic,
// whose conversion back to T keeps the low bits) and C division. Floats: the
// exact result rounded once to T. Each basic operation of two T values is
// computed exactly, or correctly rounded to f64, in double; rounding that to a
// narrower T is then the correct rounding too, because every intermediate
// precision p' satisfies p' >= 2p + 2 for the next one (53 >= 2*24+2,
// 24 >= 2*11+2). So the derived tolerance is 0 ulps: results must be equal
// (the interpreter computing f16/bf16 in f32 is exact for the same reason).
template <class T>
std::array<T, kOps> arithmetic_reference(T a, T b, T s) {
  if constexpr (is_float_v<T>) {
    auto r = [](double v) { return from_double<T>(v); };
    const double x = as_double(a), y = as_double(b), z = as_double(s);
    auto min = [](double p, double q) { return std::isnan(p) || std::isnan(q) ? NAN : std::min(p, q); };
    auto max = [](double p, double q) { return std::isnan(p) || std::isnan(q) ? NAN : std::max(p, q); };
    return {r(x + y), r(x - y),        r(x * y),     r(x / y),     r(std::fmod(x, y)),
            r(-x),    r(std::fabs(x)), r(min(x, y)), r(max(x, y)), r(min(max(x, z), 3)),
            r(x + z), r(z - x),        r(x * 3),     r(7 - x),     r(as_double(r(x * 2)) - y)};
  } else {
    using U = std::uint64_t;
    using W = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    auto t = [](U v) { return static_cast<T>(v); };
    const U x = static_cast<U>(a), y = static_cast<U>(b), z = static_cast<U>(s);
    const W wa = a, wb = b;
    return {t(x + y),
            t(x - y),
            t(x * y),
            t(static_cast<U>(wa / wb)),
            t(static_cast<U>(wa % wb)),
            t(0 - x),
            std::is_signed_v<T> && a < 0 ? t(0 - x) : a,
            std::min(a, b),
            std::max(a, b),
            std::min(std::max(a, s), static_cast<T>(3)),
            t(x + z),
            t(z - x),
            t(x * 3),
            t(7 - x),
            t(x * 2 - y)};
  }
}

// Operands: ints over their whole range (wrap-around), b never 0 and never
// min / -1 (undefined in C, a fault here); floats in [-4, 4] with b = 0, a
// NaN and an infinity at fixed places.
template <class T>
void make_operands(std::vector<T>& a, std::vector<T>& b, int n) {
  const double lo = kiln::test::is_float_v<T> ? -4 : -1e30, hi = kiln::test::is_float_v<T> ? 4 : 1e30;
  a = kiln::test::random_values<T>(n, 101, lo, hi);
  b = kiln::test::random_values<T>(n, 102, lo, hi);
  // Small divisors, so that quotients and remainders are not mostly 0 and a.
  const auto small = kiln::test::random_values<T>(n, 103, -9, 9);
  for (int i = 0; i < n; i += 2) b[i] = small[i];
  for (int i = 0; i < n; ++i) {
    if constexpr (!is_float_v<T>) {
      if (b[i] == 0) b[i] = 1;
      if (std::is_signed_v<T> && a[i] == std::numeric_limits<T>::min() && b[i] == static_cast<T>(-1)) b[i] = 2;
    }
  }
  if constexpr (is_float_v<T>) {
    b[3] = from_double<T>(0.0);
    a[5] = from_double<T>(NAN);
    b[8] = from_double<T>(NAN);
    a[13] = from_double<T>(INFINITY);
    b[21] = from_double<T>(-INFINITY);
  } else {
    a[3] = std::numeric_limits<T>::min();
    a[4] = std::numeric_limits<T>::max();
  }
}

template <class T>
class Arithmetic : public ::testing::Test {};
TYPED_TEST_SUITE(Arithmetic, kiln::test::NumericTypes, kiln::test::DTypeNames);

TYPED_TEST(Arithmetic, OperatorsMinMaxClampAbsMatchTheReference) {
  using T = TypeParam;
  const int n = 777;
  std::vector<T> a, b;
  make_operands(a, b, n);
  const T s = from_double<T>(std::is_signed_v<T> || is_float_v<T> ? -1.5 : 2);
  kl::Buffer<T> out(static_cast<std::size_t>(kOps) * n);
  const double s_arg = as_double(s);
  if constexpr (is_float_v<T>)
    kl::compile<arithmetic_kernel<T>>().launch(kl::Grid(kl::cdiv(n, kBlock)), kiln::test::to_buffer(a),
                                               kiln::test::to_buffer(b), s_arg, out, n);
  else
    kl::compile<arithmetic_kernel<T>>().launch(kl::Grid(kl::cdiv(n, kBlock)), kiln::test::to_buffer(a),
                                               kiln::test::to_buffer(b), s, out, n);
  static const char* const names[kOps] = {
      "a + b",         "a - b",          "a * b",      "a / b",      "a % b", "-a",    "abs(a)",        "minimum(a, b)",
      "maximum(a, b)", "clamp(a, s, 3)", "a + scalar", "scalar - a", "a * 3", "7 - a", "a *= 2; a -= b"};
  std::vector<std::vector<T>> want(kOps, std::vector<T>(n));
  for (int i = 0; i < n; ++i) {
    const auto r = arithmetic_reference(a[i], b[i], s);
    for (int k = 0; k < kOps; ++k) want[k][i] = r[k];
  }
  const auto got = out.to_host();
  for (int k = 0; k < kOps; ++k)
    kiln::test::expect_equal(std::vector<T>(got.begin() + k * n, got.begin() + (k + 1) * n), want[k], names[k]);
}

}  // namespace
