// Correctness of the rest of the libdevice functions Triton kernels call
// (asinh acosh atanh log10 exp10 cbrt erfc erfinv lgamma, hypot and copysign)
// for every float dtype against long double references, on seeded random
// inputs over each function's domain and on its edges; and popc and clz,
// exact, for every integer dtype.
#include <bit>
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
constexpr int kOps = 11;

// Result k of element i is out[k * n + i], each function on the input of its
// domain: x any float, at_least_one in [1, inf), unit in [-1, 1], positive
// in (0, inf), gamma_argument away from lgamma's poles, y a second float.
template <class C>
void special_kernel(kl::Ptr<kl::Scalar<C>> x_ptr, kl::Ptr<kl::Scalar<C>> at_least_one_ptr,
                    kl::Ptr<kl::Scalar<C>> unit_ptr, kl::Ptr<kl::Scalar<C>> positive_ptr,
                    kl::Ptr<kl::Scalar<C>> gamma_argument_ptr, kl::Ptr<kl::Scalar<C>> y_ptr, kl::Ptr<kl::Scalar<C>> out,
                    kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto x = kl::load(x_ptr + offs, mask);
  auto at_least_one = kl::load(at_least_one_ptr + offs, mask);
  auto unit = kl::load(unit_ptr + offs, mask);
  auto positive = kl::load(positive_ptr + offs, mask);
  auto gamma_argument = kl::load(gamma_argument_ptr + offs, mask);
  auto y = kl::load(y_ptr + offs, mask);
  int k = 0;
  auto put = [&](const auto& v) { kl::store(out + (offs + (k++) * n), v, mask); };
  put(kl::asinh(x));
  put(kl::acosh(at_least_one));
  put(kl::atanh(unit));
  put(kl::log10(positive));
  put(kl::exp10(x));
  put(kl::cbrt(x));
  put(kl::erfc(x));
  put(kl::erfinv(unit));
  put(kl::lgamma(gamma_argument));
  put(kl::hypot(x, y));
  put(kl::copysign(x, y));
}

struct Inputs {
  long double x, at_least_one, unit, positive, gamma_argument, y;
};

/// erf's inverse by bisection on long double erf (erfc above 1/2, where
/// 1 - |y| is exact and erf rounds to 1 first): slow, and independent of the
/// Halley iteration the devices use.
long double reference_erfinv(long double y) {
  const long double a = std::fabs(y);
  if (std::isnan(a) || a > 1) return std::numeric_limits<long double>::quiet_NaN();
  if (a == 1) return std::copysign(std::numeric_limits<long double>::infinity(), y);
  if (a == 0) return y;
  // erfinv(a) / a grows from sqrt(pi) / 2 = 0.886 at 0 to 0.954 at 1/2: a bracket of relative width.
  long double low = a < 0.5L ? 0.8L * a : 0.4L, high = a < 0.5L ? a : 10;
  for (int step = 0; step < 200; ++step) {
    const long double middle = (low + high) / 2;
    const bool below = a < 0.5L ? std::erf(middle) < a : std::erfc(middle) > 1 - a;
    (below ? low : high) = middle;
  }
  return std::copysign((low + high) / 2, y);
}

std::vector<long double> reference(const Inputs& in) {
  return {std::asinh(in.x),        std::acosh(in.at_least_one), std::atanh(in.unit),
          std::log10(in.positive), std::pow(10.0L, in.x),       std::cbrt(in.x),
          std::erfc(in.x),         reference_erfinv(in.unit),   std::lgamma(in.gamma_argument),
          std::hypot(in.x, in.y),  std::copysign(in.x, in.y)};
}

const char* const kNames[kOps] = {"asinh", "acosh",  "atanh",  "log10", "exp10",   "cbrt",
                                  "erfc",  "erfinv", "lgamma", "hypot", "copysign"};

// The largest error of each function in ulps of its f32 and its f64 result
// on any device: the larger of libdevice's maximum ulp error (CUDA C++
// Programming Guide, "Mathematical Functions"; lgamma's outside
// [-10.001, -2.264], which the inputs avoid) and glibc's on x86-64 (its
// libm-test-ulps), for cpu and emu; erfinv on those is kiln's own (a
// double-precision result, rounded: 1 ulp of f32, 2 of f64). copysign is exact.
constexpr double kUlpsF32[kOps] = {3, 4, 3, 2, 2, 1, 4, 2, 7, 3, 0};
constexpr double kUlpsF64[kOps] = {3, 3, 2, 2, 2, 4, 5, 5, 4, 2, 0};

template <class T>
struct Run {
  std::vector<T> x, at_least_one, unit, positive, gamma_argument, y;

  explicit Run(int n) : x(n), at_least_one(n), unit(n), positive(n), gamma_argument(n), y(n) {}
  int size() const { return static_cast<int>(x.size()); }
  Inputs inputs(int i) const {
    return {as_double(x[i]),        as_double(at_least_one[i]),   as_double(unit[i]),
            as_double(positive[i]), as_double(gamma_argument[i]), as_double(y[i])};
  }
  /// Function `op`'s results, as launched on the default device.
  std::vector<std::vector<T>> launch() const {
    const int n = size();
    kl::Buffer<T> out(static_cast<std::size_t>(kOps) * n);
    using kiln::test::to_buffer;
    kl::compile<special_kernel<T>>().launch(kl::Grid(kl::cdiv(n, kBlock)), to_buffer(x), to_buffer(at_least_one),
                                            to_buffer(unit), to_buffer(positive), to_buffer(gamma_argument),
                                            to_buffer(y), out, n);
    const std::vector<T> all = out.to_host();
    std::vector<std::vector<T>> results;
    for (int op = 0; op < kOps; ++op) results.emplace_back(all.begin() + op * n, all.begin() + (op + 1) * n);
    return results;
  }
};

template <class T>
class SpecialFunctions : public ::testing::Test {};
TYPED_TEST_SUITE(SpecialFunctions, kiln::test::FloatTypes, kiln::test::DTypeNames);

TYPED_TEST(SpecialFunctions, MatchTheReferenceOverTheirDomains) {
  using T = TypeParam;
  const int n = 900;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double big = kiln::test::max_finite<T>(), tiny = kiln::test::min_normal<T>();
  Run<T> run(n);
  run.x = kiln::test::random_values<T>(n, 701, -10, 10);
  run.at_least_one = kiln::test::random_values<T>(n, 702, 1, 50);
  run.unit = kiln::test::random_values<T>(n, 703, -1, 1);
  run.positive = kiln::test::random_values<T>(n, 704, 0, 1000);
  run.gamma_argument = kiln::test::random_values<T>(n, 705, 0.05, 30);
  run.y = kiln::test::random_values<T>(n, 706, -10, 10);
  const std::vector<double> poles_apart = kiln::test::random_values<double>(n, 707, -0.45, 0.45);
  for (int i = 0; i < n; ++i) {
    // Every third lgamma argument negative, in (-2, 0) and 0.05 or more from the poles.
    if (i % 3 == 0) run.gamma_argument[i] = from_double<T>((i % 2 ? -0.5 : -1.5) + poles_apart[i]);
    // Small arguments, where asinh, atanh, cbrt and erfinv are about linear;
    // positives near 1 (log10 about 0) and tiny ones.
    if (i % 7 == 1) {
      run.x[i] = from_double<T>(as_double(run.x[i]) * 1e-4);
      run.unit[i] = from_double<T>(as_double(run.unit[i]) * 1e-3);
      run.positive[i] = from_double<T>(1 + as_double(run.unit[i]));
    }
    if (i % 7 == 2) run.positive[i] = from_double<T>(as_double(run.positive[i]) * 1e-6 + tiny);
    // unit near +-1, where erfinv and atanh grow without bound.
    if (i % 11 == 3)
      run.unit[i] = from_double<T>(std::copysign(1 - std::fabs(as_double(run.unit[i])) * 1e-2, i % 2 - 0.5));
  }
  const std::vector<double> xs = {0.0, -0.0, inf, -inf, nan, big, -big, tiny, -tiny, 1e-6, -1e-7, 1.0, -8.0};
  const std::vector<double> at_least_ones = {1.0, inf, nan, big, 1.5, 2.0};
  const std::vector<double> units = {0.0, -0.0, 1.0, -1.0, nan, 0.5, -0.5, 0.999, -0.999, tiny, 1e-5};
  const std::vector<double> positives = {1.0, inf, nan, big, tiny, 10.0, 0.1};
  const std::vector<double> gamma_arguments = {1.0, 2.0, 3.0, 0.5, -0.5, -1.5, 10.0, 25.0, inf, nan};
  const std::vector<double> ys = {1.0, -1.0, inf, -inf, nan, 0.0, -0.0, tiny, -big, 3.0, -4.0, 0.0, 1.0};
  auto place = [](std::vector<T>& values, const std::vector<double>& edges) {
    for (std::size_t i = 0; i < edges.size(); ++i) values[i] = from_double<T>(edges[i]);
  };
  place(run.x, xs);
  place(run.at_least_one, at_least_ones);
  place(run.unit, units);
  place(run.positive, positives);
  place(run.gamma_argument, gamma_arguments);
  place(run.y, ys);

  const auto got = run.launch();
  for (int op = 0; op < kOps; ++op) {
    std::vector<double> want(n);
    for (int i = 0; i < n; ++i) {
      want[i] = static_cast<double>(reference(run.inputs(i))[op]);
      // A result past T's range rounds to an infinity (f16's 65504 is small: exp10(5)).
      if (std::isinf(as_double(from_double<T>(want[i])))) want[i] = as_double(from_double<T>(want[i]));
    }
    kiln::test::expect_close(got[op], want, kiln::test::function_tolerance<T>(kUlpsF32[op], kUlpsF64[op]), kNames[op]);
    for (int i = 0; i < n; ++i) {
      const double g = as_double(got[op][i]);
      if ((want[i] == 0 && g == 0) || op == kOps - 1)
        EXPECT_EQ(std::signbit(g), std::signbit(want[i])) << kNames[op] << ": sign at index " << i << " of " << g;
    }
  }
}

/// The special values C (and libdevice) define, checked by value.
TYPED_TEST(SpecialFunctions, SpecialValuesAreExact) {
  using T = TypeParam;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Run<T> run(4);
  auto set = [](std::vector<T>& values, const std::vector<double>& edges) {
    for (std::size_t i = 0; i < edges.size(); ++i) values[i] = from_double<T>(edges[i]);
  };
  set(run.x, {inf, -inf, -0.0, nan});
  set(run.at_least_one, {1.0, inf, 0.5, -1.0});
  set(run.unit, {1.0, -1.0, 1.5, -0.0});
  set(run.positive, {1.0, 0.0, -1.0, inf});
  set(run.gamma_argument, {1.0, 2.0, 0.0, -2.0});
  set(run.y, {nan, 1.0, -0.0, -1.0});
  const auto got = run.launch();
  auto value = [&](int op, int i) { return as_double(got[op][i]); };
  auto is = [](double got_value, double want) {
    return std::isnan(want) ? std::isnan(got_value)
                            : got_value == want && std::signbit(got_value) == std::signbit(want);
  };
  const std::vector<std::vector<double>> want = {{inf, -inf, -0.0, nan},   // asinh
                                                 {0.0, inf, nan, nan},     // acosh
                                                 {inf, -inf, nan, -0.0},   // atanh
                                                 {0.0, -inf, nan, inf},    // log10
                                                 {inf, 0.0, 1.0, nan},     // exp10
                                                 {inf, -inf, -0.0, nan},   // cbrt
                                                 {0.0, 2.0, 1.0, nan},     // erfc
                                                 {inf, -inf, nan, -0.0},   // erfinv
                                                 {0.0, 0.0, inf, inf},     // lgamma
                                                 {inf, inf, 0.0, nan},     // hypot: an infinity wins over NaN
                                                 {inf, inf, -0.0, -nan}};  // copysign
  for (int op = 0; op < kOps; ++op)
    for (int i = 0; i < 4; ++i)
      EXPECT_TRUE(is(value(op, i), want[op][i]))
          << kNames[op] << " " << i << ": got " << value(op, i) << ", want " << want[op][i];
  EXPECT_TRUE(std::signbit(value(kOps - 1, 3))) << "copysign(NaN, -1) has the sign bit";
}

template <class T>
void bit_count_kernel(kl::Ptr<kl::Scalar<T>> x_ptr, kl::Ptr<kl::Scalar<T>> ones, kl::Ptr<kl::Scalar<T>> leading_zeros,
                      kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto x = kl::load(x_ptr + offs, mask);
  kl::store(ones + offs, kl::popc(x), mask);
  kl::store(leading_zeros + offs, kl::clz(x), mask);
}

template <class T>
class BitCounts : public ::testing::Test {};
TYPED_TEST_SUITE(BitCounts, kiln::test::IntTypes, kiln::test::DTypeNames);

TYPED_TEST(BitCounts, PopcAndClzCountTheBits) {
  using T = TypeParam;
  using U = std::make_unsigned_t<T>;
  const int n = 300;
  std::vector<T> x = kiln::test::random_values<T>(n, 708, -1e30, 1e30);
  // The edges, and values with their highest one bit at every position.
  const std::vector<T> edges = {0, 1, std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T(~T(0))};
  for (std::size_t i = 0; i < edges.size(); ++i) x[i] = edges[i];
  constexpr int width = std::numeric_limits<U>::digits;
  for (int bit = 0; bit < width; ++bit) {
    const U random_bits = static_cast<U>(x[edges.size() + bit]) | static_cast<U>(U(1) << (width - 1));
    x[edges.size() + bit] = static_cast<T>(static_cast<U>(random_bits >> bit));
  }
  kl::Buffer<T> ones(n), leading_zeros(n);
  kl::compile<bit_count_kernel<T>>().launch(kl::Grid(kl::cdiv(n, kBlock)), kiln::test::to_buffer(x), ones,
                                            leading_zeros, n);
  const std::vector<T> got_ones = ones.to_host(), got_zeros = leading_zeros.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    const U bits = static_cast<U>(x[i]);
    if (got_ones[i] != static_cast<T>(std::popcount(bits)) || got_zeros[i] != static_cast<T>(std::countl_zero(bits)))
      if (wrong++ < 3)
        ADD_FAILURE() << "x = " << +x[i] << ": popc " << +got_ones[i] << " (want " << std::popcount(bits) << "), clz "
                      << +got_zeros[i] << " (want " << std::countl_zero(bits) << ")";
  }
  EXPECT_EQ(wrong, 0);
}

}  // namespace
