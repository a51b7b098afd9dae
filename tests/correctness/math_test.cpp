// Correctness of the math functions (exp exp2 log log2 sqrt rsqrt sin cos tanh
// erf abs floor ceil, fma, log1p) and of the stdlib activations (sigmoid silu gelu
// gelu_tanh relu) for every float dtype, against long double references; and
// GELU's two forms at infinities, zeros and NaN, where the formulas alone would
// give NaN at -inf.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::from_double;

constexpr int kBlock = 64;
constexpr int kOps = 20;
// Elements 0 … kSpecials-1 hold special values (zeros, infinities, NaN, edge
// cases); the activations, written as formulas in the DSL, are compared on the
// others only.
constexpr int kSpecials = 12;

// Result k of element i is out[k * n + i]: x in [-4, 4], p > 0 (plus specials),
// fma(x, y, z).
template <class C>
void math_kernel(kl::Ptr<kl::Scalar<C>> x_ptr, kl::Ptr<kl::Scalar<C>> p_ptr, kl::Ptr<kl::Scalar<C>> y_ptr,
                 kl::Ptr<kl::Scalar<C>> z_ptr, kl::Ptr<kl::Scalar<C>> out, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto x = kl::load(x_ptr + offs, mask);
  auto p = kl::load(p_ptr + offs, mask);
  int k = 0;
  auto put = [&](const auto& v) { kl::store(out + (offs + (k++) * n), v, mask); };
  put(kl::exp(x));
  put(kl::exp2(x));
  put(kl::log(p));
  put(kl::log2(p));
  put(kl::sqrt(p));
  put(kl::rsqrt(p));
  put(kl::sin(x));
  put(kl::cos(x));
  put(kl::tanh(x));
  put(kl::erf(x));
  put(kl::abs(x));
  put(kl::floor(x));
  put(kl::ceil(x));
  put(kl::sigmoid(x));
  put(kl::silu(x));
  put(kl::gelu(x));
  put(kl::gelu_tanh(x));
  put(kl::relu(x));
  put(kl::fma(x, kl::load(y_ptr + offs, mask), kl::load(z_ptr + offs, mask)));
  put(kl::log1p(p));
}

// References in long double, written as the stdlib defines each activation.
std::vector<long double> math_reference(long double x, long double p, long double y, long double z) {
  const long double sigmoid = 1 / (1 + std::exp(-x));
  return {std::exp(x),
          std::exp2(x),
          std::log(p),
          std::log2(p),
          std::sqrt(p),
          1 / std::sqrt(p),
          std::sin(x),
          std::cos(x),
          std::tanh(x),
          std::erf(x),
          std::fabs(x),
          std::floor(x),
          std::ceil(x),
          sigmoid,
          x * sigmoid,
          x / 2 * (1 + std::erf(x / std::sqrt(2.0L))),
          x / 2 * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846L) * (x + 0.044715L * x * x * x))),
          std::isnan(x) ? x : std::fmax(x, 0.0L),
          std::fma(x, y, z),
          std::log1p(p)};
}

template <class T>
class Math : public ::testing::Test {};
TYPED_TEST_SUITE(Math, kiln::test::FloatTypes, kiln::test::DTypeNames);

TYPED_TEST(Math, FunctionsAndActivationsMatchTheReference) {
  using T = TypeParam;
  const int n = 700;
  auto x = kiln::test::random_values<T>(n, 501);
  auto p = kiln::test::random_values<T>(n, 502, 1.0 / 16, 16);
  auto y = kiln::test::random_values<T>(n, 503);
  auto z = kiln::test::random_values<T>(n, 504);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double xs[kSpecials] = {0.0, -0.0, inf, -inf, nan, -2.5, 2.5, -0.5, 3.0, -1.0, 1e-3, 0.75};
  const double ps[kSpecials] = {0.0, -0.0, inf, -1.0, nan, 1.0, 4.0, 0.5, 2.0, 8.0, 1e-3, 0.25};
  for (int i = 0; i < kSpecials; ++i) {
    x[i] = from_double<T>(xs[i]);
    p[i] = from_double<T>(ps[i]);
  }
  // fma with one rounding: a*a - (1 + 2^(1-k)) = 2^-2k exactly for a = 1 + 2^-k
  // with k = ceil(precision / 2), while rounding a*a first gives 0.
  const int precision = std::is_same_v<T, kl::half>       ? 11
                        : std::is_same_v<T, kl::bfloat16> ? 8
                                                          : std::numeric_limits<T>::digits;
  const int k = (precision + 1) / 2;
  for (int i : {kSpecials, kSpecials + 1}) {
    const double sign = i == kSpecials ? 1 : -1;
    x[i] = y[i] = from_double<T>(sign * (1 + std::ldexp(1.0, -k)));
    z[i] = from_double<T>(-(1 + std::ldexp(1.0, 1 - k)));
  }
  kl::Buffer<T> out(static_cast<std::size_t>(kOps) * n);
  using kiln::test::to_buffer;
  kl::compile<math_kernel<T>>().launch(kl::Grid(kl::cdiv(n, kBlock)), to_buffer(x), to_buffer(p), to_buffer(y),
                                       to_buffer(z), out, n);

  std::vector<std::vector<double>> want(kOps, std::vector<double>(n));
  for (int i = 0; i < n; ++i) {
    const auto r = math_reference(as_double(x[i]), as_double(p[i]), as_double(y[i]), as_double(z[i]));
    for (int op = 0; op < kOps; ++op) want[op][i] = static_cast<double>(r[op]);
  }
  // Tolerances, with u = 2^-precision the unit roundoff of T and
  // tolerance<T>() = 2u for f16/bf16 (generous multiples of u for f32/f64,
  // whose functions come from libm):
  // - the math functions of one argument: f16/bf16 are computed in f32 and
  //   rounded once, so the error is u plus f32's few ulps: tolerance<T>().
  // - abs floor ceil relu: exact.
  // - fma: one rounding of the exact result: tolerance<T>() (the elements
  //   built above fail by 100% if the product is rounded first).
  // - sigmoid = 1 / (1 + exp(-x)): exp's error plus two roundings, each
  //   relative and not amplified (1 + e only damps e's error): 3u; silu adds
  //   the product's rounding: 4u. Allowed: 3 * tolerance<T>() = 6u.
  // - gelu = (x * 0.5) * (erf(x * c) + 1): x * c carries 2u (c is rounded to
  //   T), which erf (slope <= 2/sqrt(pi)) turns into <= 1.6u|x| absolute; erf's
  //   rounding and the sum's (values <= 2) add 3u; times x/2 and rounded:
  //   |error| <= u|w| + (0.8 x^2 + 1.5|x|)u. gelu_tanh: the tanh argument
  //   carries ~7u relative, its slope times |argument| is <= 0.45, so the
  //   bracket is off by <= 6.2u and the result by <= u|w| + 3.1u|x|. Allowed
  //   for both: tolerance<T>() * (|w| + x^2 / 2 + 2|x|), since tolerance<T>() >= 2u.
  const double tol = kiln::test::tolerance<T>();
  static const char* const names[kOps] = {"exp",  "exp2", "log",       "log2", "sqrt",  "rsqrt", "sin",
                                          "cos",  "tanh", "erf",       "abs",  "floor", "ceil",  "sigmoid",
                                          "silu", "gelu", "gelu_tanh", "relu", "fma",   "log1p"};
  const double rel[kOps] = {tol, tol, tol, tol,     tol,     tol, tol, tol, tol, tol,
                            0,   0,   0,   3 * tol, 3 * tol, tol, tol, 0,   tol, tol};
  const auto got = out.to_host();
  for (int op = 0; op < kOps; ++op) {
    const bool activation = op >= 13 && op <= 17;
    const int from = activation ? kSpecials : 0;
    std::vector<T> g(got.begin() + op * n + from, got.begin() + (op + 1) * n);
    std::vector<double> w(want[op].begin() + from, want[op].end());
    std::vector<double> allowance;
    if (op == 15 || op == 16)
      for (int i = from; i < n; ++i) {
        const double v = as_double(x[i]);
        allowance.push_back(tol * (v * v / 2 + 2 * std::abs(v)));
      }
    kiln::test::expect_close(g, w, rel[op], allowance, names[op]);
  }
}

// gelu and gelu_tanh of the specials: x and their limits at +-inf (-0 at -inf
// and for negative x so large that 1 + erf or 1 + tanh is 0 in f32, +inf at
// +inf), the signed zeros, and NaN only for NaN.
template <class C>
void gelu_kernel(kl::Ptr<kl::Scalar<C>> x_ptr, kl::Ptr<kl::Scalar<C>> exact, kl::Ptr<kl::Scalar<C>> approximate) {
  auto offs = kl::arange<8>();
  auto x = kl::load(x_ptr + offs);
  kl::store(exact + offs, kl::gelu(x));
  kl::store(approximate + offs, kl::gelu_tanh(x));
}

TYPED_TEST(Math, GeluTakesItsLimitsAtInfinity) {
  using T = TypeParam;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // -20: 1 + erf and 1 + tanh round to 0 in f32 (and so in f16 and bf16); 20: to 2.
  const std::vector<double> xs = {-inf, inf, nan, 0.0, -0.0, -20.0, 20.0, -1.0};
  std::vector<T> x;
  for (double v : xs) x.push_back(from_double<T>(v));
  kl::Buffer<T> exact(xs.size()), approximate(xs.size());
  kl::compile<gelu_kernel<T>>().launch(kl::Grid(1), kiln::test::to_buffer(x), exact, approximate);
  const auto got_exact = exact.to_host(), got_approximate = approximate.to_host();
  for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
    for (const auto& [name, got] : {std::pair{"gelu", got_exact}, std::pair{"gelu_tanh", got_approximate}}) {
      const double g = as_double(got[i]);
      SCOPED_TRACE(std::string(name) + " of " + std::to_string(xs[i]));
      if (std::isnan(xs[i])) {
        EXPECT_TRUE(std::isnan(g)) << g;
        continue;
      }
      // -0 at -inf and -20 (x * 0 with x < 0); x itself at 0, -0, 20 and +inf.
      const double want = xs[i] < 0 ? -0.0 : xs[i];
      EXPECT_EQ(g, want);
      EXPECT_EQ(std::signbit(g), std::signbit(want)) << g;
    }
  }
  // gelu(-1) is finite and negative: -0.1587 (erf form), -0.1588 (tanh form).
  EXPECT_NEAR(as_double(got_exact.back()), -0.15865525393145707, 0.01);
  EXPECT_NEAR(as_double(got_approximate.back()), -0.15880800939172324, 0.01);
}

}  // namespace
