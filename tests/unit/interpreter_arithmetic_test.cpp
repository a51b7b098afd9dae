// The CPU interpreter against plain C++ references, element by element:
// arithmetic in every dtype (f16/bf16 rounding), division, shifts, math
// functions, compares and casts.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "interpreter_test_support.hpp"

namespace kiln::runtime {
namespace {

using namespace interpreter_test;

// ---- Elementwise arithmetic --------------------------------------------------------

/// Reference: wrap-around for integers, float arithmetic rounded back for narrow floats.
template <class T, class F>
T reference(T a, T b, F f) {
  if constexpr (is_narrow_float<T>) {
    return T(static_cast<float>(f(static_cast<float>(a), static_cast<float>(b))));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(f(a, b));
  } else {
    return static_cast<T>(f(static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b)));
  }
}

template <class T>
void check_arithmetic(std::uint32_t seed) {
  SCOPED_TRACE(dtype_of<T>());
  const auto a = random_values<T>(kCount, seed);
  const auto b = random_values<T>(kCount, seed + 1);
  const auto add = [](auto x, auto y) { return x + y; };
  const auto sub = [](auto x, auto y) { return x - y; };
  const auto mul = [](auto x, auto y) { return x * y; };
  const std::vector<std::pair<std::string, std::vector<T>>> results = {
      {"add", run_binary<T>("add", a, b)}, {"sub", run_binary<T>("sub", a, b)}, {"mul", run_binary<T>("mul", a, b)}};
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(same_bits(results[0].second[i], reference(a[i], b[i], add))) << "add at " << i;
    ASSERT_TRUE(same_bits(results[1].second[i], reference(a[i], b[i], sub))) << "sub at " << i;
    ASSERT_TRUE(same_bits(results[2].second[i], reference(a[i], b[i], mul))) << "mul at " << i;
  }
  const auto lo = run_binary<T>("minimum", a, b);
  const auto hi = run_binary<T>("maximum", a, b);
  for (int i = 0; i < kCount; ++i) {
    const bool less = static_cast<double>(a[i]) < static_cast<double>(b[i]);
    ASSERT_TRUE(same_bits(lo[i], less ? a[i] : b[i])) << "minimum at " << i;
    ASSERT_TRUE(same_bits(hi[i], less ? b[i] : a[i]) || static_cast<double>(a[i]) == static_cast<double>(b[i]))
        << "maximum at " << i;
  }
}

TEST(Interpreter, ArithmeticMatchesReferenceInEveryDtype) {
  check_arithmetic<std::int8_t>(1);
  check_arithmetic<std::int16_t>(2);
  check_arithmetic<std::int32_t>(3);
  check_arithmetic<std::int64_t>(4);
  check_arithmetic<std::uint8_t>(5);
  check_arithmetic<std::uint32_t>(6);
  check_arithmetic<std::uint64_t>(7);
  check_arithmetic<kiln::half>(8);
  check_arithmetic<kiln::bfloat16>(9);
  check_arithmetic<kiln::float8_e4m3>(12);
  check_arithmetic<kiln::float8_e5m2>(13);
  check_arithmetic<float>(10);
  check_arithmetic<double>(11);
}

TEST(Interpreter, HalfArithmeticRoundsEachResult) {
  // 2048 + 1 is not representable in f16: the sum rounds to even (2048).
  std::vector<kiln::half> a(kCount, kiln::half(2048.0f)), b(kCount, kiln::half(1.0f));
  const auto sum = run_binary<kiln::half>("add", a, b);
  EXPECT_EQ(static_cast<float>(sum[0]), 2048.0f);
  EXPECT_EQ(static_cast<float>(sum[kCount - 1]), 2048.0f);
  std::vector<kiln::bfloat16> c(kCount, kiln::bfloat16(256.0f)), d(kCount, kiln::bfloat16(1.0f));
  EXPECT_EQ(static_cast<float>(run_binary<kiln::bfloat16>("add", c, d)[5]), 256.0f);
}

TEST(Interpreter, MinimumAndMaximumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = random_values<float>(kCount, 20), b = random_values<float>(kCount, 21);
  a[3] = nan;
  b[7] = nan;
  const auto lo = run_binary<float>("minimum", a, b);
  const auto hi = run_binary<float>("maximum", a, b);
  EXPECT_TRUE(std::isnan(lo[3]) && std::isnan(lo[7]) && std::isnan(hi[3]) && std::isnan(hi[7]));
  EXPECT_EQ(lo[4], std::min(a[4], b[4]));
}

TEST(Interpreter, MaximumOrdersSignedZeros) {
  std::vector<float> a(kCount, 0.0f), b(kCount, -0.0f);
  for (int i = 0; i < kCount; i += 2) std::swap(a[i], b[i]);
  const auto hi = run_binary<float>("maximum", a, b);
  const auto lo = run_binary<float>("minimum", a, b);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_FALSE(std::signbit(hi[i])) << i;
    ASSERT_TRUE(std::signbit(lo[i])) << i;
  }
}

TEST(Interpreter, IntegerDivisionTruncatesTowardZero) {
  // A whole number of blocks: masked-off lanes load 0, and dividing by them would fault.
  const int count = 16 * kBlock;
  auto a = random_values<std::int32_t>(count, 30);
  auto b = random_values<std::int32_t>(count, 31);
  for (int i = 0; i < count; ++i) {
    if (i % 3 == 0) b[i] = b[i] % 17;  // small divisors too
    if (b[i] == 0) b[i] = 7;
  }
  a[0] = std::numeric_limits<std::int32_t>::min();
  b[0] = -1;  // wraps
  a[1] = -7;
  b[1] = 2;
  const auto q = run_binary<std::int32_t>("div", a, b);
  const auto r = run_binary<std::int32_t>("rem", a, b);
  EXPECT_EQ(q[0], std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(q[1], -3);
  EXPECT_EQ(r[1], -1);
  for (int i = 2; i < count; ++i) {
    ASSERT_EQ(q[i], a[i] / b[i]) << i;
    ASSERT_EQ(r[i], a[i] % b[i]) << i;
  }
  auto ua = random_values<std::uint8_t>(count, 32);
  auto ub = random_values<std::uint8_t>(count, 33);
  for (auto& v : ub) v = v ? v : 3;
  const auto uq = run_binary<std::uint8_t>("div", ua, ub);
  const auto ur = run_binary<std::uint8_t>("rem", ua, ub);
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(uq[i], ua[i] / ub[i]);
    ASSERT_EQ(ur[i], ua[i] % ub[i]);
  }
}

TEST(Interpreter, FloatDivisionAndRemainder) {
  const auto a = random_values<float>(kCount, 40);
  const auto b = random_values<float>(kCount, 41);
  const auto q = run_binary<float>("div", a, b);
  const auto r = run_binary<float>("rem", a, b);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(q[i], a[i] / b[i]);
    ASSERT_EQ(r[i], std::fmod(a[i], b[i]));
  }
}

TEST(Interpreter, ShiftsClampLikePtx) {
  auto a = random_values<std::int32_t>(kCount, 50);
  std::vector<std::int32_t> amount(kCount);
  std::mt19937 rng(51);
  for (auto& s : amount) s = std::uniform_int_distribution<int>(-3, 40)(rng);
  const auto left = run_binary<std::int32_t>("shl", a, amount);
  const auto right = run_binary<std::int32_t>("shr", a, amount);
  for (int i = 0; i < kCount; ++i) {
    const auto s = static_cast<std::uint32_t>(amount[i]);
    ASSERT_EQ(left[i], s >= 32 ? 0 : static_cast<std::int32_t>(static_cast<std::uint32_t>(a[i]) << s)) << i;
    ASSERT_EQ(right[i], s >= 32 ? (a[i] < 0 ? -1 : 0) : a[i] >> s) << i;
  }
  auto u = random_values<std::uint8_t>(kCount, 52);
  std::vector<std::uint8_t> us(kCount);
  for (int i = 0; i < kCount; ++i) us[i] = static_cast<std::uint8_t>(i % 12);
  const auto ur = run_binary<std::uint8_t>("shr", u, us);
  const auto ul = run_binary<std::uint8_t>("shl", u, us);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(ur[i], us[i] >= 8 ? 0 : u[i] >> us[i]);
    ASSERT_EQ(ul[i], us[i] >= 8 ? 0 : static_cast<std::uint8_t>(u[i] << us[i]));
  }
}

TEST(Interpreter, BitwiseUmulhiAndFma) {
  const auto a = random_values<std::uint32_t>(kCount, 60);
  const auto b = random_values<std::uint32_t>(kCount, 61);
  const auto hi = run_binary<std::uint32_t>("umulhi", a, b);
  const auto x = run_binary<std::uint32_t>("xor", a, b);
  const auto o = run_binary<std::uint32_t>("or", a, b);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(hi[i], static_cast<std::uint32_t>((static_cast<std::uint64_t>(a[i]) * b[i]) >> 32));
    ASSERT_EQ(x[i], a[i] ^ b[i]);
    ASSERT_EQ(o[i], a[i] | b[i]);
  }
  const auto wa = random_values<std::uint64_t>(kCount, 65);
  const auto wb = random_values<std::uint64_t>(kCount, 66);
  const auto whi = run_binary<std::uint64_t>("umulhi", wa, wb);
  for (int i = 0; i < kCount; ++i)
    ASSERT_EQ(whi[i], static_cast<std::uint64_t>((static_cast<unsigned __int128>(wa[i]) * wb[i]) >> 64));
  auto fa = random_values<float>(kCount, 62), fb = random_values<float>(kCount, 63),
       fc = random_values<float>(kCount, 64);
  std::vector<float> out(kCount);
  const InterpretedKernel k =
      compile("kernel @fma(%a: ptr<f32>, %b: ptr<f32>, %c: ptr<f32>, %out: ptr<f32>, %n: i32) {" + offsets(kBlock) +
              pointers("pa", "a", "f32", kBlock) + pointers("pb", "b", "f32", kBlock) +
              pointers("pc", "c", "f32", kBlock) + pointers("po", "out", "f32", kBlock) + R"(
  %x = load %pa, %mask {cache = none, evict = none} : tile<64xf32>
  %y = load %pb, %mask {cache = none, evict = none} : tile<64xf32>
  %z = load %pc, %mask {cache = none, evict = none} : tile<64xf32>
  %r = fma %x, %y, %z : tile<64xf32>
  store %po, %r, %mask {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(fa, "a"), buffer(fb, "b"), buffer(fc, "c"), buffer(out, "out"), scalar(kCount)};
  k.launch(kGrid, args, 2);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(out[i], std::fma(fa[i], fb[i], fc[i]));
}

TEST(Interpreter, MathFunctionsMatchCmath) {
  const auto positive = random_values<float>(kCount, 70, 0.01, 20.0);
  const auto any = random_values<float>(kCount, 71);
  const std::vector<std::pair<std::string, float (*)(float)>> unary = {{"exp", [](float x) { return std::exp(x); }},
                                                                       {"exp2", [](float x) { return std::exp2(x); }},
                                                                       {"sin", [](float x) { return std::sin(x); }},
                                                                       {"cos", [](float x) { return std::cos(x); }},
                                                                       {"tanh", [](float x) { return std::tanh(x); }},
                                                                       {"erf", [](float x) { return std::erf(x); }},
                                                                       {"floor", [](float x) { return std::floor(x); }},
                                                                       {"ceil", [](float x) { return std::ceil(x); }},
                                                                       {"neg", [](float x) { return -x; }},
                                                                       {"abs", [](float x) { return std::fabs(x); }}};
  for (const auto& [op, f] : unary) {
    const auto out = run_unary<float, float>(op, any);
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(out[i], f(any[i])) << op << " at " << i;
  }
  const std::vector<std::pair<std::string, float (*)(float)>> domain = {
      {"log", [](float x) { return std::log(x); }},
      {"log2", [](float x) { return std::log2(x); }},
      {"log1p", [](float x) { return std::log1p(x); }},
      {"sqrt", [](float x) { return std::sqrt(x); }},
      {"rsqrt", [](float x) { return 1 / std::sqrt(x); }}};
  for (const auto& [op, f] : domain) {
    const auto out = run_unary<float, float>(op, positive);
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(out[i], f(positive[i])) << op << " at " << i;
  }
  const auto h = random_values<kiln::half>(kCount, 72);
  const auto he = run_unary<kiln::half, kiln::half>("exp", h);
  const auto d = random_values<double>(kCount, 73);
  const auto dt = run_unary<double, double>("tanh", d);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(same_bits(he[i], kiln::half(std::exp(static_cast<float>(h[i])))));
    ASSERT_EQ(dt[i], std::tanh(d[i]));
  }
}

/// Runs `cmp %x, %y {pred = P}` over a and b (T's dtype), checks every
/// element against C++'s comparison (ordered for floats except !=) and
/// returns the i1 results.
template <class T>
std::vector<std::uint8_t> check_compare(const char* pred, std::vector<T>& a, std::vector<T>& b) {
  std::vector<std::uint8_t> out(kCount);
  const InterpretedKernel k =
      compile(fill("kernel @cmp(%a: ptr<{T}>, %b: ptr<{T}>, %out: ptr<i1>, %n: i32) {" + offsets(kBlock) +
                       pointers("pa", "a", "{T}", kBlock) + pointers("pb", "b", "{T}", kBlock) +
                       pointers("po", "out", "i1", kBlock) + R"(
  %x = load %pa, %mask {cache = none, evict = none} : tile<64x{T}>
  %y = load %pb, %mask {cache = none, evict = none} : tile<64x{T}>
  %c = cmp %x, %y {pred = {P}} : tile<64xi1>
  store %po, %c, %mask {cache = none, evict = none}
}
)",
                   {{"P", pred}, {"T", dtype_of<T>()}}));
  const KernelArgument args[] = {buffer(a, "a"), buffer(b, "b"), buffer(out, "out"), scalar(kCount)};
  k.launch(kGrid, args, 2);
  const std::string p = pred;
  for (int i = 0; i < kCount; ++i) {
    const bool expected = p == "eq"   ? a[i] == b[i]
                          : p == "ne" ? a[i] != b[i]
                          : p == "lt" ? a[i] < b[i]
                          : p == "le" ? a[i] <= b[i]
                          : p == "gt" ? a[i] > b[i]
                                      : a[i] >= b[i];
    EXPECT_EQ(out[i], expected) << pred << " at " << i;
  }
  return out;
}

TEST(Interpreter, CompareFollowsNaNRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = random_values<float>(kCount, 80), b = random_values<float>(kCount, 81);
  a[0] = nan;
  b[1] = nan;
  b[2] = a[2];
  for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    const std::vector<std::uint8_t> out = check_compare(pred, a, b);
    EXPECT_EQ(out[0], std::string(pred) == "ne");
    EXPECT_EQ(out[1], std::string(pred) == "ne");
  }
}

template <class T>
void check_integer_compares(std::uint32_t seed) {
  SCOPED_TRACE(dtype_of<T>());
  auto a = random_values<T>(kCount, seed), b = random_values<T>(kCount, seed + 1);
  for (int i = 0; i < kCount; i += 7) b[i] = a[i];  // some ties
  for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) check_compare(pred, a, b);
}

TEST(Interpreter, IntegerComparesFollowTheSignedness) {
  check_integer_compares<std::int8_t>(85);
  check_integer_compares<std::uint8_t>(86);
  check_integer_compares<std::int64_t>(87);
  check_integer_compares<std::uint64_t>(88);
}

TEST(Interpreter, UmulhiOfNarrowAndSignedTypes) {
  const auto a = random_values<std::int16_t>(kCount, 90), b = random_values<std::int16_t>(kCount, 91);
  const auto hi = run_binary<std::int16_t>("umulhi", a, b);
  const auto ua = random_values<std::uint16_t>(kCount, 92), ub = random_values<std::uint16_t>(kCount, 93);
  const auto uhi = run_binary<std::uint16_t>("umulhi", ua, ub);
  for (int i = 0; i < kCount; ++i) {
    const auto product =
        static_cast<std::uint32_t>(static_cast<std::uint16_t>(a[i])) * static_cast<std::uint16_t>(b[i]);
    ASSERT_EQ(hi[i], static_cast<std::int16_t>(product >> 16)) << i;
    ASSERT_EQ(uhi[i], static_cast<std::uint16_t>((static_cast<std::uint32_t>(ua[i]) * ub[i]) >> 16)) << i;
  }
  const auto c = random_values<std::int8_t>(kCount, 94), d = random_values<std::int8_t>(kCount, 95);
  const auto bhi = run_binary<std::int8_t>("umulhi", c, d);
  for (int i = 0; i < kCount; ++i) {
    const auto product = static_cast<std::uint32_t>(static_cast<std::uint8_t>(c[i])) * static_cast<std::uint8_t>(d[i]);
    ASSERT_EQ(bhi[i], static_cast<std::int8_t>(product >> 8)) << i;
  }
}

// ---- Casts ------------------------------------------------------------------------

TEST(Interpreter, FloatToIntCastsSaturateAndMapNaNToZero) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> a = {std::numeric_limits<float>::quiet_NaN(),
                          inf,
                          -inf,
                          1e10f,
                          -1e10f,
                          127.9f,
                          -128.9f,
                          3.7f,
                          -3.7f,
                          -0.5f,
                          300.0f,
                          255.9f};
  const auto i8 = run_unary<float, std::int8_t>("cast", a);
  const std::vector<std::int8_t> want_i8 = {0, 127, -128, 127, -128, 127, -128, 3, -3, 0, 127, 127};
  EXPECT_EQ(i8, want_i8);
  const auto u8 = run_unary<float, std::uint8_t>("cast", a);
  const std::vector<std::uint8_t> want_u8 = {0, 255, 0, 255, 0, 127, 0, 3, 0, 0, 255, 255};
  EXPECT_EQ(u8, want_u8);
  const auto i64 = run_unary<float, std::int64_t>("cast", {1e30f, -1e30f, 9.3e18f, -9.3e18f, 12345.6f});
  const std::int64_t max64 = std::numeric_limits<std::int64_t>::max(), min64 = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(i64, (std::vector<std::int64_t>{max64, min64, max64, min64, 12345}));
  const auto u32 = run_unary<float, std::uint32_t>("cast", {4.3e9f, -1.0f, 4.0e9f});
  EXPECT_EQ(u32, (std::vector<std::uint32_t>{4294967295u, 0u, 4000000000u}));
  const auto random = random_values<float>(kCount, 90, -1e5, 1e5);
  const auto i32 = run_unary<float, std::int32_t>("cast", random);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(i32[i], static_cast<std::int32_t>(random[i]));
}

TEST(Interpreter, FloatCastsRoundToNearestEvenOnce) {
  const auto f = random_values<float>(kCount, 100, -70000.0, 70000.0);
  const auto h = run_unary<float, kiln::half>("cast", f);
  const auto bf = run_unary<float, kiln::bfloat16>("cast", f);
  const auto small = random_values<float>(kCount, 101, -600.0, 600.0);
  const auto e4m3 = run_unary<float, kiln::float8_e4m3>("cast", small);
  const auto e5m2 = run_unary<float, kiln::float8_e5m2>("cast", small);
  const auto e4m3_from_half = run_unary<kiln::half, kiln::float8_e4m3>("cast", h);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(same_bits(h[i], kiln::half(f[i]))) << i;
    ASSERT_TRUE(same_bits(bf[i], kiln::bfloat16(f[i]))) << i;
    ASSERT_TRUE(same_bits(e4m3[i], kiln::float8_e4m3(small[i]))) << i;
    ASSERT_TRUE(same_bits(e5m2[i], kiln::float8_e5m2(small[i]))) << i;
    ASSERT_TRUE(same_bits(e4m3_from_half[i], kiln::float8_e4m3(static_cast<float>(h[i])))) << i;
  }
  // Rounding through f32 first would land on the midpoint and round to even.
  const double above_half_ulp_f16 = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  const double above_half_ulp_bf16 = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(static_cast<float>(run_unary<double, kiln::half>("cast", {above_half_ulp_f16})[0]),
            1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(static_cast<float>(run_unary<double, kiln::bfloat16>("cast", {above_half_ulp_bf16})[0]),
            1.0f + std::ldexp(1.0f, -7));
  const std::int64_t big = (std::int64_t{1} << 40) + (std::int64_t{1} << 32) + 1;
  EXPECT_EQ(static_cast<float>(run_unary<std::int64_t, kiln::bfloat16>("cast", {big})[0]),
            std::ldexp(1.0f + std::ldexp(1.0f, -7), 40));
  const auto widened = run_unary<kiln::half, double>("cast", h);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(widened[i], static_cast<double>(static_cast<float>(h[i])));
  EXPECT_EQ((run_unary<std::int32_t, float>("cast", {16777217, 16777219, -16777217})),
            (std::vector<float>{16777216.0f, 16777220.0f, -16777216.0f}));
}

TEST(Interpreter, IntegerCastsTruncateOrExtendBySourceSignedness) {
  EXPECT_EQ((run_unary<std::int32_t, std::int8_t>("cast", {300, -129, 127, -1})),
            (std::vector<std::int8_t>{44, 127, 127, -1}));
  EXPECT_EQ((run_unary<std::int8_t, std::uint32_t>("cast", {-1, 5})), (std::vector<std::uint32_t>{4294967295u, 5u}));
  EXPECT_EQ((run_unary<std::uint8_t, std::int32_t>("cast", {250, 7})), (std::vector<std::int32_t>{250, 7}));
  const auto bytes = random_values<std::uint8_t>(kCount, 115);
  const auto halves = run_unary<std::uint8_t, kiln::half>("cast", bytes);
  const auto signed_halves =
      run_unary<std::int8_t, kiln::half>("cast", std::vector<std::int8_t>(bytes.begin(), bytes.end()));
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(static_cast<float>(halves[i]), static_cast<float>(bytes[i])) << i;
    ASSERT_EQ(static_cast<float>(signed_halves[i]), static_cast<float>(static_cast<std::int8_t>(bytes[i]))) << i;
  }
  EXPECT_EQ((run_unary<std::uint32_t, std::int64_t>("cast", {4294967295u})), (std::vector<std::int64_t>{4294967295}));
  const auto bits = run_unary<float, std::uint32_t>("bitcast", {1.0f, -2.5f});
  EXPECT_EQ(bits, (std::vector<std::uint32_t>{0x3f800000u, std::bit_cast<std::uint32_t>(-2.5f)}));
}

TEST(Interpreter, CastsToAndFromI1) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::uint8_t> out(4);
  std::vector<float> in = {0.0f, -0.0f, 0.5f, nan};
  const InterpretedKernel to_bool = compile(R"(
kernel @to_bool(%a: ptr<f32>, %out: ptr<i1>) {
  %r = arange {start = 0} : tile<4xi32>
  %pa_s = splat %a : tile<4xptr<f32>>
  %pa = addptr %pa_s, %r : tile<4xptr<f32>>
  %po_s = splat %out : tile<4xptr<i1>>
  %po = addptr %po_s, %r : tile<4xptr<i1>>
  %x = load %pa {cache = none, evict = none} : tile<4xf32>
  %b = cast %x : tile<4xi1>
  %i = cast %r : tile<4xi1>
  %both = and %b, %i : tile<4xi1>
  store %po, %both {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(in, "a"), buffer(out, "out")};
  to_bool.launch({1, 1, 1}, args, 1);
  EXPECT_EQ(out, (std::vector<std::uint8_t>{0, 0, 1, 1}));
  std::vector<std::uint8_t> flags = {1, 0, 1, 1};
  std::vector<float> values(4);
  const InterpretedKernel from_bool = compile(R"(
kernel @from_bool(%a: ptr<i1>, %out: ptr<f32>) {
  %r = arange {start = 0} : tile<4xi32>
  %pa_s = splat %a : tile<4xptr<i1>>
  %pa = addptr %pa_s, %r : tile<4xptr<i1>>
  %po_s = splat %out : tile<4xptr<f32>>
  %po = addptr %po_s, %r : tile<4xptr<f32>>
  %x = load %pa {cache = none, evict = none} : tile<4xi1>
  %f = cast %x : tile<4xf32>
  store %po, %f {cache = none, evict = none}
}
)");
  const KernelArgument args2[] = {buffer(flags, "a"), buffer(values, "out")};
  from_bool.launch({1, 1, 1}, args2, 1);
  EXPECT_EQ(values, (std::vector<float>{1.0f, 0.0f, 1.0f, 1.0f}));
}

TEST(Interpreter, PointerIntegerCastsKeepTheAddress) {
  // out[i] = x[i + 1], the pointer advanced through i64 arithmetic.
  auto x = random_values<float>(kCount + 1, 110);
  std::vector<float> out(kCount);
  const InterpretedKernel k = compile("kernel @shift(%x: ptr<f32>, %out: ptr<f32>, %n: i32) {" + offsets(kBlock) +
                                      pointers("px", "x", "f32", kBlock) + pointers("po", "out", "f32", kBlock) + R"(
  %addr = cast %px : tile<64xi64>
  %four = constant {value = 4} : tile<64xi64>
  %next = add %addr, %four : tile<64xi64>
  %pn = cast %next : tile<64xptr<f32>>
  %v = load %pn, %mask {cache = none, evict = none} : tile<64xf32>
  store %po, %v, %mask {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out"), scalar(kCount)};
  k.launch(kGrid, args, 2);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(out[i], x[i + 1]);
}

}  // namespace
}  // namespace kiln::runtime
