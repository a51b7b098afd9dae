// Correctness of fast_exp and fast_exp2, exp and exp2 with subnormal results
// flushed to +0 (OPS.md), for every float dtype: within exp's and exp2's
// error where the result is normal, exactly +0 where the exact result is at
// most half the least normal number of the format they are computed in (f32
// for f16 and bf16: far beyond their error), and the special values exactly.
// exp2 of the same inputs keeps the subnormal results T can hold, so the
// flush is fast_exp2's own.
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::from_double;

constexpr int kBlock = 64;

// out[i] = fast_exp(x[i]), out[n + i] = fast_exp2(x[i]), out[2n + i] = exp2(x[i]).
template <class C>
void fast_exp_kernel(kl::Ptr<kl::Scalar<C>> x_ptr, kl::Ptr<kl::Scalar<C>> out, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto x = kl::load(x_ptr + offs, mask);
  kl::store(out + offs, kl::fast_exp(x), mask);
  kl::store(out + (n + offs), kl::fast_exp2(x), mask);
  kl::store(out + (2 * n + offs), kl::exp2(x), mask);
}

template <class T>
struct Results {
  std::vector<T> fast_exp, fast_exp2, exp2;
};

template <class T>
Results<T> launch(const std::vector<T>& x) {
  const auto n = static_cast<std::ptrdiff_t>(x.size());
  kl::Buffer<T> out(3 * x.size());
  kl::compile<fast_exp_kernel<T>>().launch(kl::Grid(kl::cdiv(static_cast<int>(n), kBlock)), kiln::test::to_buffer(x),
                                           out, static_cast<int>(n));
  const std::vector<T> all = out.to_host();
  return {{all.begin(), all.begin() + n}, {all.begin() + n, all.begin() + 2 * n}, {all.begin() + 2 * n, all.end()}};
}

template <class T>
std::vector<T> of_values(const std::vector<double>& values) {
  std::vector<T> out;
  for (double v : values) out.push_back(from_double<T>(v));
  return out;
}

/// log2 of the least normal number of the format fast_exp and fast_exp2
/// compute T in: f64 for f64, f32 for the rest.
template <class T>
constexpr double kLog2LeastNormal = std::is_same_v<T, double> ? -1022 : -126;
/// log2 of that format's least subnormal number.
template <class T>
constexpr double kLog2LeastSubnormal = std::is_same_v<T, double> ? -1074 : -149;

template <class T>
class FastExp : public ::testing::Test {};
TYPED_TEST_SUITE(FastExp, kiln::test::FloatTypes, kiln::test::DTypeNames);

// Where the results are normal, fast_exp and fast_exp2 are exp and exp2:
// within the same error (the math tests' tolerance<T>() on [-8, 8]).
TYPED_TEST(FastExp, NormalResultsAreThoseOfExpAndExp2) {
  using T = TypeParam;
  const std::vector<T> x = kiln::test::random_values<T>(700, 901, -8, 8);
  const Results<T> got = launch(x);
  std::vector<double> want_exp, want_exp2;
  for (const T& v : x) {
    want_exp.push_back(static_cast<double>(std::exp(static_cast<long double>(as_double(v)))));
    want_exp2.push_back(static_cast<double>(std::exp2(static_cast<long double>(as_double(v)))));
  }
  kiln::test::expect_close(got.fast_exp, want_exp, kiln::test::tolerance<T>(), "fast_exp");
  kiln::test::expect_close(got.fast_exp2, want_exp2, kiln::test::tolerance<T>(), "fast_exp2");
}

// Inputs whose exact results are at most half the computing format's least
// normal number give +0 (-inf too); exp2 keeps the subnormal results T can
// hold (f32, f64, and bf16, whose subnormals are f32's; f16 rounds them all
// to 0 anyway).
TYPED_TEST(FastExp, SubnormalResultsAreFlushedToPositiveZero) {
  using T = TypeParam;
  const double high = kLog2LeastNormal<T> - 1, low = kLog2LeastSubnormal<T> - 8;
  const int half = 200;
  // The first half for fast_exp2, the second for fast_exp (the same range over ln 2).
  std::vector<T> x = kiln::test::random_values<T>(half, 902, low, high);
  const std::vector<T> for_exp =
      kiln::test::random_values<T>(half, 903, low * std::numbers::ln2, high * std::numbers::ln2);
  x.insert(x.end(), for_exp.begin(), for_exp.end());
  x[0] = x[half] = from_double<T>(-std::numeric_limits<double>::infinity());
  const Results<T> got = launch(x);
  int subnormals_kept = 0;
  for (int i = 0; i < 2 * half; ++i) {
    const double v = as_double(x[i]);
    const double flushed = as_double(i < half ? got.fast_exp2[i] : got.fast_exp[i]);
    EXPECT_EQ(flushed, 0.0) << (i < half ? "fast_exp2(" : "fast_exp(") << v << ")";
    EXPECT_FALSE(std::signbit(flushed)) << "+0 at " << v;
    // exp2 of the same input: T's value nearest its subnormal result.
    const double exact = as_double(from_double<T>(std::exp2(v)));
    if (i < half && exact != 0 && v > kLog2LeastSubnormal<T> + 2) {
      ++subnormals_kept;
      EXPECT_NEAR(as_double(got.exp2[i]), exact, exact * 0.01) << "exp2(" << v << ") keeps its subnormal result";
    }
  }
  if constexpr (!std::is_same_v<T, kl::half>) EXPECT_GT(subnormals_kept, 10) << "inputs that show exp2 keeping them";
}

// The flush is of the computing format's subnormals only: results from half
// a binade above its least normal number stay, and so do f16's own
// subnormals (normal in f32), exactly (f16's rounding absorbs the error).
TYPED_TEST(FastExp, OnlyTheComputingFormatsSubnormalsAreFlushed) {
  using T = TypeParam;
  std::vector<double> xs = {kLog2LeastNormal<T> + 0.5, kLog2LeastNormal<T> + 1, kLog2LeastNormal<T> + 2.5};
  if constexpr (std::is_same_v<T, kl::half>) xs = {-14, -20, -24};  // f16's least normal, two of its subnormals
  const Results<T> got = launch(of_values<T>(xs));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double want = as_double(from_double<T>(std::exp2(xs[i])));
    ASSERT_NE(want, 0.0);
    const double allowed = std::is_same_v<T, kl::half> ? 0 : want * kiln::test::tolerance<T>();
    EXPECT_NEAR(as_double(got.fast_exp2[i]), want, allowed) << "fast_exp2(" << xs[i] << ")";
  }
}

// NaN stays NaN, +inf gives +inf, -inf +0, the zeros and T's least
// subnormal inputs 1: by value on every device.
TYPED_TEST(FastExp, SpecialValuesAreExact) {
  using T = TypeParam;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double subnormal = std::is_same_v<T, kl::half>       ? 0x1p-24
                           : std::is_same_v<T, kl::bfloat16> ? 0x1p-133
                                                             : std::exp2(kLog2LeastSubnormal<T>);
  const std::vector<double> xs = {nan, inf, -inf, 0.0, -0.0, subnormal, -subnormal};
  const Results<T> got = launch(of_values<T>(xs));
  for (const auto& [name, results] : {std::pair{"fast_exp", got.fast_exp}, std::pair{"fast_exp2", got.fast_exp2}}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(std::isnan(as_double(results[0]))) << as_double(results[0]);
    EXPECT_EQ(as_double(results[1]), inf);
    EXPECT_EQ(as_double(results[2]), 0.0);
    EXPECT_FALSE(std::signbit(as_double(results[2])));
    for (std::size_t i = 3; i < xs.size(); ++i) EXPECT_EQ(as_double(results[i]), 1.0) << "of " << xs[i];
  }
}

}  // namespace
