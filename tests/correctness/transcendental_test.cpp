// Correctness of the libdevice functions Triton kernels reach for (expm1 tan
// atan sinh cosh asin acos, pow and atan2) for every float dtype, against long
// double references, on seeded random inputs over each function's domain and
// on the edges (signed zeros, infinities, NaN, huge and tiny values, negative
// bases, every quadrant and axis of atan2).
#include <cmath>
#include <cstdint>
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
constexpr int kOps = 9;

// Result k of element i is out[k * n + i]: the unary functions of x (any
// float) and of unit (mostly in [-1, 1]), then pow(base, exponent) and
// atan2(base, exponent), base taken as y.
template <class C>
void transcendental_kernel(kl::Ptr<kl::Scalar<C>> x_ptr, kl::Ptr<kl::Scalar<C>> unit_ptr,
                           kl::Ptr<kl::Scalar<C>> base_ptr, kl::Ptr<kl::Scalar<C>> exponent_ptr,
                           kl::Ptr<kl::Scalar<C>> out, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto x = kl::load(x_ptr + offs, mask);
  auto unit = kl::load(unit_ptr + offs, mask);
  auto base = kl::load(base_ptr + offs, mask);
  auto exponent = kl::load(exponent_ptr + offs, mask);
  int k = 0;
  auto put = [&](const auto& v) { kl::store(out + (offs + (k++) * n), v, mask); };
  put(kl::expm1(x));
  put(kl::tan(x));
  put(kl::atan(x));
  put(kl::sinh(x));
  put(kl::cosh(x));
  put(kl::asin(unit));
  put(kl::acos(unit));
  put(kl::pow(base, exponent));
  put(kl::atan2(base, exponent));
}

std::vector<long double> reference(long double x, long double unit, long double base, long double exponent) {
  return {std::expm1(x),
          std::tan(x),
          std::atan(x),
          std::sinh(x),
          std::cosh(x),
          std::asin(unit),
          std::acos(unit),
          std::pow(base, exponent),
          std::atan2(base, exponent)};
}

const char* const kNames[kOps] = {"expm1", "tan", "atan", "sinh", "cosh", "asin", "acos", "pow", "atan2"};

// The largest error of each function in ulps of its f32 and its f64 result
// on any device: libdevice's maximum ulp error (CUDA C++ Programming Guide,
// "Mathematical Functions", the single- and double-precision tables) or, on
// cpu and emu, glibc's (at most 2 ulps for each of these on x86-64), the
// larger of the two.
constexpr double kUlpsF32[kOps] = {2, 4, 2, 3, 2, 2, 2, 4, 3};
constexpr double kUlpsF64[kOps] = {2, 2, 2, 2, 2, 2, 2, 2, 2};

/// Where the reference is a zero, the result must be a zero of its sign
/// (expect_close takes -0 == +0).
template <class T>
void expect_signed_zeros(const std::vector<T>& got, const std::vector<double>& want, const char* what) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (want[i] == 0 && as_double(got[i]) == 0) {
      EXPECT_EQ(std::signbit(as_double(got[i])), std::signbit(want[i])) << what << ": sign of zero at index " << i;
    }
  }
}

template <class T>
class Transcendental : public ::testing::Test {};
TYPED_TEST_SUITE(Transcendental, kiln::test::FloatTypes, kiln::test::DTypeNames);

TYPED_TEST(Transcendental, FunctionsMatchTheReferenceOverTheirDomains) {
  using T = TypeParam;
  const int n = 900;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double big = kiln::test::max_finite<T>(), tiny = kiln::test::min_normal<T>();
  auto x = kiln::test::random_values<T>(n, 601, -10, 10);
  auto unit = kiln::test::random_values<T>(n, 602, -1, 1);
  auto base = kiln::test::random_values<T>(n, 603, -4, 4);
  auto exponent = kiln::test::random_values<T>(n, 604, -6, 6);
  // Every other exponent an integer, so that negative bases give finite powers.
  for (int i = 0; i < n; i += 2) exponent[i] = from_double<T>(std::round(as_double(exponent[i])));
  // Small arguments, where expm1, tan, atan, sinh and asin are about x.
  for (int i = 1; i < n; i += 7) {
    x[i] = from_double<T>(as_double(x[i]) * 1e-4);
    unit[i] = from_double<T>(as_double(unit[i]) * 1e-3);
  }
  const std::vector<double> xs = {0.0, -0.0, inf, -inf, nan, big, -big, tiny, -tiny, 1e-6, -1e-7, 1.5, -1.5707963};
  const std::vector<double> units = {0.0, -0.0, 1.0, -1.0, nan, inf, 1.5, -2.0, tiny, 0.5, -0.5, 0.999, -0.999};
  // (base, exponent): pow's special cases, atan2's four quadrants and axes.
  const std::vector<std::pair<double, double>> pairs = {
      {-2, 3},    {-2, 2},      {-2, 0.5},   {-0.0, -1}, {0.0, -1},  {-0.0, 3},    {-inf, 3},   {-inf, 2},
      {nan, 0},   {1, nan},     {-1, inf},   {0.5, inf}, {2, -inf},  {2, inf},     {-3, -2},    {3, -2},
      {3, 2},     {-3, 2},      {1, 0},      {-1, 0},    {0.0, 0.0}, {-0.0, -0.0}, {0.0, -0.0}, {-0.0, 0.0},
      {inf, inf}, {-inf, -inf}, {inf, -inf}, {0.0, -2},  {-0.0, 2},  {0.0, inf},   {nan, 2},    {2, nan}};
  for (std::size_t i = 0; i < xs.size(); ++i) x[i] = from_double<T>(xs[i]);
  for (std::size_t i = 0; i < units.size(); ++i) unit[i] = from_double<T>(units[i]);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    base[i] = from_double<T>(pairs[i].first);
    exponent[i] = from_double<T>(pairs[i].second);
  }
  kl::Buffer<T> out(static_cast<std::size_t>(kOps) * n);
  using kiln::test::to_buffer;
  kl::compile<transcendental_kernel<T>>().launch(kl::Grid(kl::cdiv(n, kBlock)), to_buffer(x), to_buffer(unit),
                                                 to_buffer(base), to_buffer(exponent), out, n);

  const auto got = out.to_host();
  for (int op = 0; op < kOps; ++op) {
    std::vector<double> want(n);
    for (int i = 0; i < n; ++i) {
      want[i] = static_cast<double>(
          reference(as_double(x[i]), as_double(unit[i]), as_double(base[i]), as_double(exponent[i]))[op]);
      // A result past T's range rounds to an infinity (f16's 65504 is small: pow(0.1, -6)).
      if (std::isinf(as_double(from_double<T>(want[i])))) want[i] = as_double(from_double<T>(want[i]));
    }
    const std::vector<T> g(got.begin() + op * n, got.begin() + (op + 1) * n);
    kiln::test::expect_close(g, want, kiln::test::function_tolerance<T>(kUlpsF32[op], kUlpsF64[op]), kNames[op]);
    expect_signed_zeros(g, want, kNames[op]);
  }
}

/// The special values C (and libdevice) define, checked by value: the
/// tolerance test above would also pass a result a few ulps off them.
TYPED_TEST(Transcendental, SpecialValuesAreExact) {
  using T = TypeParam;
  const double inf = std::numeric_limits<double>::infinity();
  const double pi = std::numbers::pi;
  const std::vector<std::pair<double, double>> pairs = {{-2, 3}, {-0.0, -1}, {-inf, 3},  {1, 0},
                                                        {-1, 0}, {0.0, -1},  {-0.0, -1}, {-1, inf}};
  const int n = static_cast<int>(pairs.size());
  std::vector<T> base, exponent;
  for (const auto& [b, e] : pairs) {
    base.push_back(from_double<T>(b));
    exponent.push_back(from_double<T>(e));
  }
  const std::vector<T> x(n, from_double<T>(inf)), unit(n, from_double<T>(1.0));
  kl::Buffer<T> out(static_cast<std::size_t>(kOps) * n);
  using kiln::test::to_buffer;
  kl::compile<transcendental_kernel<T>>().launch(kl::Grid(1), to_buffer(x), to_buffer(unit), to_buffer(base),
                                                 to_buffer(exponent), out, n);
  const auto got = out.to_host();
  auto at = [&](int op, int i) { return got[op * n + i]; };
  auto exactly = [](double v) { return as_double(from_double<T>(v)); };
  EXPECT_EQ(as_double(at(0, 0)), inf) << "expm1(inf)";
  EXPECT_EQ(as_double(at(2, 0)), exactly(pi / 2)) << "atan(inf)";
  EXPECT_EQ(as_double(at(6, 0)), 0.0) << "acos(1)";
  EXPECT_FALSE(std::signbit(as_double(at(6, 0)))) << "acos(1) is +0";
  const double powers[] = {-8, -inf, -inf, 1, 1, inf, -inf, 1};
  for (int i = 0; i < n; ++i) EXPECT_EQ(as_double(at(7, i)), powers[i]) << "pow " << i;
  const double angles[] = {std::atan2(-2.0, 3.0), -pi, -pi / 2, pi / 2, -pi / 2, pi, -pi, -0.0};
  for (int i = 1; i < n; ++i) EXPECT_EQ(as_double(at(8, i)), exactly(angles[i])) << "atan2 " << i;
  EXPECT_TRUE(std::signbit(as_double(at(8, 7)))) << "atan2(-1, inf) is -0";
}

}  // namespace
