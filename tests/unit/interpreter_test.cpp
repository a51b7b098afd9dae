// The CPU interpreter against plain C++ references: arithmetic in every
// dtype (f16/bf16 rounding), division, casts, shifts, masked loads, reduce,
// scan, dot, control flow, atomics under parallel programs, launch stats.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "interpreter_samples.hpp"
#include "ir_samples.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime {
namespace {

using interpreter_samples::buffer;
using interpreter_samples::compile;
using interpreter_samples::scalar;
using ir_samples::fill;

// ---- Helpers -------------------------------------------------------------------

template <class T> constexpr const char* dtype_of();
template <> constexpr const char* dtype_of<std::uint8_t>() { return "u8"; }
template <> constexpr const char* dtype_of<std::int8_t>() { return "i8"; }
template <> constexpr const char* dtype_of<std::int16_t>() { return "i16"; }
template <> constexpr const char* dtype_of<std::int32_t>() { return "i32"; }
template <> constexpr const char* dtype_of<std::int64_t>() { return "i64"; }
template <> constexpr const char* dtype_of<std::uint16_t>() { return "u16"; }
template <> constexpr const char* dtype_of<std::uint32_t>() { return "u32"; }
template <> constexpr const char* dtype_of<std::uint64_t>() { return "u64"; }
template <> constexpr const char* dtype_of<kiln::half>() { return "f16"; }
template <> constexpr const char* dtype_of<kiln::bfloat16>() { return "bf16"; }
template <> constexpr const char* dtype_of<kiln::float8_e4m3>() { return "f8e4m3"; }
template <> constexpr const char* dtype_of<kiln::float8_e5m2>() { return "f8e5m2"; }
template <> constexpr const char* dtype_of<float>() { return "f32"; }
template <> constexpr const char* dtype_of<double>() { return "f64"; }

template <class T>
constexpr bool is_narrow_float = std::is_same_v<T, kiln::half> || std::is_same_v<T, kiln::bfloat16> ||
                                 std::is_same_v<T, kiln::float8_e4m3> || std::is_same_v<T, kiln::float8_e5m2>;
template <class T>
constexpr bool is_host_float = is_narrow_float<T> || std::is_floating_point_v<T>;

template <class T>
std::vector<T> random_values(std::size_t n, std::uint32_t seed, double lo = -8.0, double hi = 8.0) {
  std::mt19937_64 rng(seed);
  std::vector<T> out(n);
  for (auto& v : out) {
    if constexpr (is_host_float<T>) {
      v = T(static_cast<float>(std::uniform_real_distribution<double>(lo, hi)(rng)));
    } else {
      v = static_cast<T>(rng());
    }
  }
  return out;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Lines that compute `%offs = pid * B + arange(B)` and `%mask = %offs < %n`.
std::string offsets(int block) {
  return fill(R"(
  %pid = program_id {axis = 0} : i32
  %block = constant {value = {B}} : i32
  %base = mul %pid, %block : i32
  %range = arange {start = 0} : tile<{B}xi32>
  %base_t = splat %base : tile<{B}xi32>
  %offs = add %base_t, %range : tile<{B}xi32>
  %n_t = splat %n : tile<{B}xi32>
  %mask = cmp %offs, %n_t {pred = lt} : tile<{B}xi1>
)",
              {{"B", std::to_string(block)}});
}

// `%name = %arg + %offs` as a tile of pointers to `type`.
std::string pointers(const std::string& name, const std::string& arg, const std::string& type, int block) {
  return fill("  %{N}_s = splat %{A} : tile<{B}xptr<{T}>>\n  %{N} = addptr %{N}_s, %offs : tile<{B}xptr<{T}>>\n",
              {{"N", name}, {"A", arg}, {"T", type}, {"B", std::to_string(block)}});
}

// Lines that compute `%<p>offs`, the row-major offsets of a [R x C] tile
// starting at pid * R * C.
std::string offsets_2d(const std::string& p, int rows, int cols) {
  return fill(R"(
  %{P}pid = program_id {axis = 0} : i32
  %{P}size = constant {value = {S}} : i32
  %{P}start = mul %{P}pid, %{P}size : i32
  %{P}start_t = splat %{P}start : tile<{R}x{C}xi32>
  %{P}r = arange {start = 0} : tile<{R}xi32>
  %{P}c = arange {start = 0} : tile<{C}xi32>
  %{P}r2 = expand_dims %{P}r {axis = 1} : tile<{R}x1xi32>
  %{P}c2 = expand_dims %{P}c {axis = 0} : tile<1x{C}xi32>
  %{P}cols = constant {value = {C}} : tile<{R}x1xi32>
  %{P}rs = mul %{P}r2, %{P}cols : tile<{R}x1xi32>
  %{P}rb = broadcast %{P}rs : tile<{R}x{C}xi32>
  %{P}cb = broadcast %{P}c2 : tile<{R}x{C}xi32>
  %{P}local = add %{P}rb, %{P}cb : tile<{R}x{C}xi32>
  %{P}offs = add %{P}local, %{P}start_t : tile<{R}x{C}xi32>
)",
              {{"P", p}, {"R", std::to_string(rows)}, {"C", std::to_string(cols)}, {"S", std::to_string(rows * cols)}});
}

// Loads `%<p>` : tile<R x C x T> from %arg at `%<p>offs` (see offsets_2d).
std::string load_2d(const std::string& p, const std::string& arg, const std::string& type, int rows, int cols) {
  return offsets_2d(p, rows, cols) +
         fill(R"(  %{P}ptr_s = splat %{A} : tile<{R}x{C}xptr<{T}>>
  %{P}ptr = addptr %{P}ptr_s, %{P}offs : tile<{R}x{C}xptr<{T}>>
  %{P} = load %{P}ptr {cache = none, evict = none} : tile<{R}x{C}x{T}>
)",
              {{"P", p}, {"A", arg}, {"T", type}, {"R", std::to_string(rows)}, {"C", std::to_string(cols)}});
}

// Stores `%value` : tile<R x C x T> to %arg at `%<p>offs`.
std::string store_2d(const std::string& p, const std::string& arg, const std::string& value, const std::string& type,
                     int rows, int cols) {
  return offsets_2d(p, rows, cols) + fill(R"(  %{P}ptr_s = splat %{A} : tile<{R}x{C}xptr<{T}>>
  %{P}ptr = addptr %{P}ptr_s, %{P}offs : tile<{R}x{C}xptr<{T}>>
  store %{P}ptr, %{V} {cache = none, evict = none}
)",
                                          {{"P", p},
                                           {"A", arg},
                                           {"V", value},
                                           {"T", type},
                                           {"R", std::to_string(rows)},
                                           {"C", std::to_string(cols)}});
}

constexpr int kBlock = 64;
constexpr int kCount = 1000;  // not a multiple of the block: the last program is masked
constexpr Grid kGrid = {(kCount + kBlock - 1) / kBlock, 1, 1};

// out[i] = op(a[i], b[i]) over kCount elements.
std::string binary_kernel(const std::string& op, const std::string& type) {
  return fill("kernel @binary(%a: ptr<{T}>, %b: ptr<{T}>, %out: ptr<{T}>, %n: i32) {" + offsets(kBlock) +
                  pointers("pa", "a", type, kBlock) + pointers("pb", "b", type, kBlock) +
                  pointers("po", "out", type, kBlock) + R"(
  %x = load %pa, %mask {cache = none, evict = none} : tile<64x{T}>
  %y = load %pb, %mask {cache = none, evict = none} : tile<64x{T}>
  %z = {OP} %x, %y : tile<64x{T}>
  store %po, %z, %mask {cache = none, evict = none}
}
)",
              {{"T", type}, {"OP", op}});
}

// out[i] = op(a[i]), reading From and writing To.
std::string unary_kernel(const std::string& op, const std::string& from, const std::string& to) {
  return fill("kernel @unary(%a: ptr<{F}>, %out: ptr<{T}>, %n: i32) {" + offsets(kBlock) +
                  pointers("pa", "a", from, kBlock) + pointers("po", "out", to, kBlock) + R"(
  %x = load %pa, %mask {cache = none, evict = none} : tile<64x{F}>
  %z = {OP} %x : tile<64x{T}>
  store %po, %z, %mask {cache = none, evict = none}
}
)",
              {{"F", from}, {"T", to}, {"OP", op}});
}

template <class T>
std::vector<T> run_binary(const std::string& op, std::vector<T> a, std::vector<T> b, int threads = 3) {
  std::vector<T> out(a.size());
  const InterpretedKernel k = compile(binary_kernel(op, dtype_of<T>()));
  const KernelArgument args[] = {buffer(a, "a"), buffer(b, "b"), buffer(out, "out"),
                                 scalar(static_cast<std::int32_t>(a.size()))};
  k.launch({static_cast<int>((a.size() + kBlock - 1) / kBlock), 1, 1}, args, threads);
  return out;
}

template <class From, class To>
std::vector<To> run_unary(const std::string& op, std::vector<From> a) {
  std::vector<To> out(a.size());
  const InterpretedKernel k = compile(unary_kernel(op, dtype_of<From>(), dtype_of<To>()));
  const KernelArgument args[] = {buffer(a, "a"), buffer(out, "out"), scalar(static_cast<std::int32_t>(a.size()))};
  k.launch({static_cast<int>((a.size() + kBlock - 1) / kBlock), 1, 1}, args, 2);
  return out;
}

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

TEST(Interpreter, CompareFollowsNaNRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = random_values<float>(kCount, 80), b = random_values<float>(kCount, 81);
  a[0] = nan;
  b[1] = nan;
  b[2] = a[2];
  for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    std::vector<std::uint8_t> out(kCount);
    const InterpretedKernel k =
        compile(fill("kernel @cmp(%a: ptr<f32>, %b: ptr<f32>, %out: ptr<i1>, %n: i32) {" + offsets(kBlock) +
                         pointers("pa", "a", "f32", kBlock) + pointers("pb", "b", "f32", kBlock) +
                         pointers("po", "out", "i1", kBlock) + R"(
  %x = load %pa, %mask {cache = none, evict = none} : tile<64xf32>
  %y = load %pb, %mask {cache = none, evict = none} : tile<64xf32>
  %c = cmp %x, %y {pred = {P}} : tile<64xi1>
  store %po, %c, %mask {cache = none, evict = none}
}
)",
                     {{"P", pred}}));
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
      ASSERT_EQ(out[i], expected) << pred << " at " << i;
    }
    EXPECT_EQ(out[0], p == "ne");
    EXPECT_EQ(out[1], p == "ne");
  }
}

template <class T>
void check_integer_compares(std::uint32_t seed) {
  SCOPED_TRACE(dtype_of<T>());
  auto a = random_values<T>(kCount, seed), b = random_values<T>(kCount, seed + 1);
  for (int i = 0; i < kCount; i += 7) b[i] = a[i];  // some ties
  for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) {
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
      ASSERT_EQ(out[i], expected) << pred << " at " << i;
    }
  }
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

// ---- Memory ---------------------------------------------------------------------------

TEST(Interpreter, MaskedLoadUsesOtherAndCountsOnlyActiveLanes) {
  const int n = 100;
  auto x = random_values<float>(n, 120);  // exactly n: the masked-off lanes lie past the end
  std::vector<float> out(128);
  const InterpretedKernel k = compile("kernel @masked(%x: ptr<f32>, %out: ptr<f32>, %n: i32) {" + offsets(kBlock) +
                                      pointers("px", "x", "f32", kBlock) + pointers("po", "out", "f32", kBlock) + R"(
  %other = constant {value = -1.5} : tile<64xf32>
  %v = load %px, %mask, %other {cache = none, evict = none} : tile<64xf32>
  store %po, %v {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out"), scalar(n)};
  const LaunchStats stats = k.launch({2, 1, 1}, args, 2);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i]);
  for (int i = n; i < 128; ++i) ASSERT_EQ(out[i], -1.5f);
  EXPECT_EQ(stats.bytes_read, n * sizeof(float));
  EXPECT_EQ(stats.bytes_written, 128 * sizeof(float));
}

TEST(Interpreter, VectorAddBuiltWithBuilderCountsBytes) {
  using ir::DType;
  using ir::OpCode;
  using ir::Type;
  ir::Function fn;
  fn.name = "vector_add";
  fn.argument_names = {"x", "y", "out", "n"};
  ir::Value* x = fn.add_argument(fn.body, Type::pointer(DType::f32));
  ir::Value* y = fn.add_argument(fn.body, Type::pointer(DType::f32));
  ir::Value* out = fn.add_argument(fn.body, Type::pointer(DType::f32));
  ir::Value* n = fn.add_argument(fn.body, Type::scalar(DType::i32));
  ir::Builder b(fn);
  b.set_loc({"vector_add.hpp", 7});
  const Type index = Type::tile(DType::i32, {kBlock});
  const Type ptr_tile = {DType::f32, true, {kBlock}};
  const Type values = Type::tile(DType::f32, {kBlock});
  ir::Value* pid = b.create(OpCode::program_id, {}, {Type::scalar(DType::i32)}, {{"axis", std::int64_t{0}}})->result();
  ir::Value* block = b.constant_int(Type::scalar(DType::i32), kBlock);
  ir::Value* start = b.create(OpCode::mul, {pid, block}, {Type::scalar(DType::i32)})->result();
  ir::Value* range = b.create(OpCode::arange, {}, {index}, {{"start", std::int64_t{0}}})->result();
  ir::Value* offs =
      b.create(OpCode::add, {b.create(OpCode::splat, {start}, {index})->result(), range}, {index})->result();
  ir::Value* mask = b.create(OpCode::cmp, {offs, b.create(OpCode::splat, {n}, {index})->result()},
                             {Type::tile(DType::i1, {kBlock})}, {{"pred", ir::Symbol{"lt"}}})
                        ->result();
  const auto at = [&](ir::Value* base) {
    ir::Value* s = b.create(OpCode::splat, {base}, {ptr_tile})->result();
    return b.create(OpCode::addptr, {s, offs}, {ptr_tile})->result();
  };
  const std::vector<std::pair<std::string, ir::Attribute>> memory = {{"cache", ir::Symbol{"none"}},
                                                                     {"evict", ir::Symbol{"none"}}};
  ir::Value* xv = b.create(OpCode::load, {at(x), mask}, {values}, memory)->result();
  ir::Value* yv = b.create(OpCode::load, {at(y), mask}, {values}, memory)->result();
  ir::Value* sum = b.create(OpCode::add, {xv, yv}, {values})->result();
  b.create(OpCode::store, {at(out), sum, mask}, {}, memory);
  ir::verify(fn);

  auto xs = random_values<float>(kCount, 130), ys = random_values<float>(kCount, 131);
  std::vector<float> result(kCount);
  const InterpretedKernel k(fn);
  const KernelArgument args[] = {buffer(xs, "x"), buffer(ys, "y"), buffer(result, "out"), scalar(kCount)};
  for (int threads : {1, 4}) {
    std::fill(result.begin(), result.end(), 0.0f);
    const LaunchStats stats = k.launch(kGrid, args, threads);
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(result[i], xs[i] + ys[i]);
    EXPECT_EQ(stats.bytes_read, 2u * kCount * sizeof(float));
    EXPECT_EQ(stats.bytes_written, kCount * sizeof(float));
  }
}

TEST(Interpreter, ProgramIdsCoverTheThreeDimensionalGrid) {
  const Grid grid = {3, 4, 5};
  std::vector<std::int32_t> out(60 * 2, -1);
  const InterpretedKernel k = compile(R"(
kernel @ids(%out: ptr<i32>) {
  %x = program_id {axis = 0} : i32
  %y = program_id {axis = 1} : i32
  %z = program_id {axis = 2} : i32
  %gx = num_programs {axis = 0} : i32
  %gy = num_programs {axis = 1} : i32
  %gz = num_programs {axis = 2} : i32
  %zy = mul %z, %gy : i32
  %zyy = add %zy, %y : i32
  %row = mul %zyy, %gx : i32
  %id = add %row, %x : i32
  %two = constant {value = 2} : i32
  %slot = mul %id, %two : i32
  %p = addptr %out, %slot : ptr<i32>
  store %p, %id {cache = none, evict = none}
  %gxy = mul %gx, %gy : i32
  %total = mul %gxy, %gz : i32
  %one = constant {value = 1} : i32
  %slot1 = add %slot, %one : i32
  %p1 = addptr %out, %slot1 : ptr<i32>
  store %p1, %total {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(out, "out")};
  k.launch(grid, args, 3);
  for (int i = 0; i < 60; ++i) {
    ASSERT_EQ(out[2 * i], i);
    ASSERT_EQ(out[2 * i + 1], 60);
  }
}

// ---- Shape ops ---------------------------------------------------------------------

TEST(Interpreter, TransposeBroadcastJoinSplit) {
  auto x = random_values<std::int32_t>(2 * 4 * 8, 140);
  std::vector<std::int32_t> t(64), bc(32), swapped(64);
  const InterpretedKernel k = compile(R"(
kernel @shapes(%x: ptr<i32>, %t: ptr<i32>, %bc: ptr<i32>, %sw: ptr<i32>) {
  %r = arange {start = 0} : tile<64xi32>
  %px_s = splat %x : tile<64xptr<i32>>
  %px = addptr %px_s, %r : tile<64xptr<i32>>
  %flat = load %px {cache = none, evict = none} : tile<64xi32>
  %cube = reshape %flat : tile<2x4x8xi32>
  %perm = trans %cube {order = [2, 0, 1]} : tile<8x2x4xi32>
  %tflat = reshape %perm : tile<64xi32>
  %pt_s = splat %t : tile<64xptr<i32>>
  %pt = addptr %pt_s, %r : tile<64xptr<i32>>
  store %pt, %tflat {cache = none, evict = none}
  %r8 = arange {start = 0} : tile<8xi32>
  %row = expand_dims %r8 {axis = 0} : tile<1x8xi32>
  %rows = broadcast %row : tile<4x8xi32>
  %bflat = reshape %rows : tile<32xi32>
  %r32 = arange {start = 0} : tile<32xi32>
  %pb_s = splat %bc : tile<32xptr<i32>>
  %pb = addptr %pb_s, %r32 : tile<32xptr<i32>>
  store %pb, %bflat {cache = none, evict = none}
  %pairs = reshape %flat : tile<32x2xi32>
  %even, %odd = split %pairs : tile<32xi32>, tile<32xi32>
  %joined = join %odd, %even : tile<32x2xi32>
  %jflat = reshape %joined : tile<64xi32>
  %ps_s = splat %sw : tile<64xptr<i32>>
  %ps = addptr %ps_s, %r : tile<64xptr<i32>>
  store %ps, %jflat {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(t, "t"), buffer(bc, "bc"), buffer(swapped, "sw")};
  k.launch({1, 1, 1}, args, 1);
  for (int i = 0; i < 8; ++i)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 4; ++b) ASSERT_EQ(t[(i * 2 + a) * 4 + b], x[(a * 4 + b) * 8 + i]);
  for (int i = 0; i < 32; ++i) ASSERT_EQ(bc[i], i % 8);
  for (int i = 0; i < 32; ++i) {
    ASSERT_EQ(swapped[2 * i], x[2 * i + 1]);
    ASSERT_EQ(swapped[2 * i + 1], x[2 * i]);
  }
}

// ---- Reductions and scans -------------------------------------------------------

constexpr int kRows = 16, kCols = 64, kPrograms = 5;

// Runs `body` (which may use %x : tile<16x64xT>) storing `%out_v` with `out_shape`
// (rows or cols of T2) at pid * size.
template <class T, class R>
std::vector<R> run_rows(const std::string& body, const std::vector<T>& x_in, int out_len, const std::string& out_type) {
  auto x = x_in;
  std::vector<R> out(static_cast<std::size_t>(out_len) * kPrograms);
  const std::string text =
      fill("kernel @rows(%in: ptr<{T}>, %out: ptr<{O}>) {\n", {{"T", dtype_of<T>()}, {"O", out_type}}) +
      load_2d("x", "in", dtype_of<T>(), kRows, kCols) + body +
      fill(R"(
  %opid = program_id {axis = 0} : i32
  %olen = constant {value = {L}} : i32
  %ostart = mul %opid, %olen : i32
  %or = arange {start = 0} : tile<{L}xi32>
  %os = splat %ostart : tile<{L}xi32>
  %oo = add %os, %or : tile<{L}xi32>
  %op_s = splat %out : tile<{L}xptr<{O}>>
  %op = addptr %op_s, %oo : tile<{L}xptr<{O}>>
  store %op, %out_v {cache = none, evict = none}
}
)",
           {{"L", std::to_string(out_len)}, {"O", out_type}});
  const InterpretedKernel k = compile(text);
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out")};
  k.launch({kPrograms, 1, 1}, args, 3);
  return out;
}

TEST(Interpreter, SumAndMaxReductionsMatchSequentialReference) {
  const auto x = random_values<float>(kRows * kCols * kPrograms, 150);
  const auto sums = run_rows<float, float>(R"(
  %out_v = reduce %x {axis = 1} : tile<16xf32> {
  ^(%a: f32, %b: f32):
    %s = add %a, %b : f32
    yield %s
  }
)",
                                           x, kRows, "f32");
  const auto maxes = run_rows<float, float>(R"(
  %out_v = reduce %x {axis = 0} : tile<64xf32> {
  ^(%a: f32, %b: f32):
    %m = maximum %b, %a : f32
    yield %m
  }
)",
                                            x, kCols, "f32");
  for (int p = 0; p < kPrograms; ++p) {
    const float* tile = x.data() + p * kRows * kCols;
    for (int r = 0; r < kRows; ++r) {
      float s = tile[r * kCols];
      for (int c = 1; c < kCols; ++c) s += tile[r * kCols + c];
      ASSERT_EQ(sums[p * kRows + r], s);
    }
    for (int c = 0; c < kCols; ++c) {
      float m = tile[c];
      for (int r = 1; r < kRows; ++r) m = std::max(m, tile[r * kCols + c]);
      ASSERT_EQ(maxes[p * kCols + c], m);
    }
  }
}

TEST(Interpreter, MaxReductionPropagatesNaNAndPrefersPositiveZero) {
  auto x = random_values<float>(kRows * kCols * kPrograms, 155);
  std::fill(x.begin(), x.begin() + kCols, -0.0f);
  x[37] = 0.0f;                                             // row 0: +0 among -0s
  x[kCols + 50] = std::numeric_limits<float>::quiet_NaN();  // row 1: one NaN
  const auto maxes = run_rows<float, float>(R"(
  %out_v = reduce %x {axis = 1} : tile<16xf32> {
  ^(%a: f32, %b: f32):
    %m = maximum %a, %b : f32
    yield %m
  }
)",
                                            x, kRows, "f32");
  EXPECT_EQ(maxes[0], 0.0f);
  EXPECT_FALSE(std::signbit(maxes[0]));
  EXPECT_TRUE(std::isnan(maxes[1]));
  for (int row = 2; row < kRows * kPrograms; ++row)
    ASSERT_EQ(maxes[row], *std::max_element(x.begin() + row * kCols, x.begin() + (row + 1) * kCols)) << row;
}

TEST(Interpreter, GenericCombineRegionMatchesReference) {
  // Not a bare add: runs the region per pair (with a constant inside it).
  const auto x = random_values<std::int32_t>(kRows * kCols * kPrograms, 160);
  const auto out = run_rows<std::int32_t, std::int32_t>(R"(
  %out_v = reduce %x {axis = 1} : tile<16xi32> {
  ^(%a: i32, %b: i32):
    %three = constant {value = 3} : i32
    %a3 = mul %a, %three : i32
    %s = xor %a3, %b : i32
    yield %s
  }
)",
                                                        x, kRows, "i32");
  for (int p = 0; p < kPrograms; ++p)
    for (int r = 0; r < kRows; ++r) {
      const std::int32_t* row = x.data() + (p * kRows + r) * kCols;
      std::uint32_t acc = static_cast<std::uint32_t>(row[0]);
      for (int c = 1; c < kCols; ++c) acc = (acc * 3u) ^ static_cast<std::uint32_t>(row[c]);
      ASSERT_EQ(out[p * kRows + r], static_cast<std::int32_t>(acc));
    }
}

TEST(Interpreter, HalfSumRoundsAtEveryStep) {
  const auto x = random_values<kiln::half>(kRows * kCols * kPrograms, 170);
  const auto sums = run_rows<kiln::half, kiln::half>(R"(
  %out_v = reduce %x {axis = 1} : tile<16xf16> {
  ^(%a: f16, %b: f16):
    %s = add %a, %b : f16
    yield %s
  }
)",
                                                     x, kRows, "f16");
  for (int p = 0; p < kPrograms; ++p)
    for (int r = 0; r < kRows; ++r) {
      const kiln::half* row = x.data() + (p * kRows + r) * kCols;
      kiln::half s = row[0];
      for (int c = 1; c < kCols; ++c) s = kiln::half(static_cast<float>(s) + static_cast<float>(row[c]));
      ASSERT_TRUE(same_bits(sums[p * kRows + r], s));
    }
}

TEST(Interpreter, ArgmaxThroughTwoOperandReduce) {
  auto x = random_values<float>(kRows * kCols * kPrograms, 180);
  x[5] = x[9] = 100.0f;  // a tie: the first index wins
  const auto idx = run_rows<float, std::int32_t>(R"(
  %ci = arange {start = 0} : tile<64xi32>
  %ci2 = expand_dims %ci {axis = 0} : tile<1x64xi32>
  %cols = broadcast %ci2 : tile<16x64xi32>
  %best, %out_v = reduce %x, %cols {axis = 1} : tile<16xf32>, tile<16xi32> {
  ^(%av: f32, %ai: i32, %bv: f32, %bi: i32):
    %gt = cmp %bv, %av {pred = gt} : i1
    %v = select %gt, %bv, %av : f32
    %i = select %gt, %bi, %ai : i32
    yield %v, %i
  }
)",
                                                 x, kRows, "i32");
  for (int p = 0; p < kPrograms; ++p)
    for (int r = 0; r < kRows; ++r) {
      const float* row = x.data() + (p * kRows + r) * kCols;
      ASSERT_EQ(idx[p * kRows + r], std::max_element(row, row + kCols) - row);
    }
  EXPECT_EQ(idx[0], 5);
}

TEST(Interpreter, ScansForwardAndReverse) {
  const auto x = random_values<float>(kRows * kCols * kPrograms, 190);
  const std::string scan = R"(
  %cs = scan %x {axis = 1, reverse = {REV}} : tile<16x64xf32> {
  ^(%a: f32, %b: f32):
    %s = add %a, %b : f32
    yield %s
  }
  %out_v = reshape %cs : tile<1024xf32>
)";
  const auto forward = run_rows<float, float>(fill(scan, {{"REV", "0"}}), x, kRows * kCols, "f32");
  const auto backward = run_rows<float, float>(fill(scan, {{"REV", "1"}}), x, kRows * kCols, "f32");
  for (int row = 0; row < kRows * kPrograms; ++row) {
    const float* in = x.data() + row * kCols;
    float acc = 0;
    for (int c = 0; c < kCols; ++c) {
      acc = c ? acc + in[c] : in[c];
      ASSERT_EQ(forward[row * kCols + c], acc);
    }
    for (int c = kCols - 1; c >= 0; --c) {
      acc = c < kCols - 1 ? acc + in[c] : in[c];
      ASSERT_EQ(backward[row * kCols + c], acc);
    }
  }
  // Along axis 0 with a generic region (max of a and 2b).
  const auto xi = random_values<std::int32_t>(kRows * kCols * kPrograms, 191);
  const auto generic = run_rows<std::int32_t, std::int32_t>(R"(
  %cs = scan %x {axis = 0, reverse = 0} : tile<16x64xi32> {
  ^(%a: i32, %b: i32):
    %b2 = add %b, %b : i32
    %m = maximum %a, %b2 : i32
    yield %m
  }
  %out_v = reshape %cs : tile<1024xi32>
)",
                                                            xi, kRows * kCols, "i32");
  for (int p = 0; p < kPrograms; ++p)
    for (int c = 0; c < kCols; ++c) {
      const std::int32_t* in = xi.data() + p * kRows * kCols;
      std::int32_t acc = in[c];
      for (int r = 0; r < kRows; ++r) {
        if (r) acc = std::max(acc, static_cast<std::int32_t>(2u * static_cast<std::uint32_t>(in[r * kCols + c])));
        ASSERT_EQ(generic[p * kRows * kCols + r * kCols + c], acc);
      }
    }
}

// ---- dot ------------------------------------------------------------------------------

constexpr int kM = 16, kN = 8, kK = 32;

float round_tf32(float x) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  b += 0xfffu + ((b >> 13) & 1u);
  return std::bit_cast<float>(b & ~0x1fffu);
}

// out = acc + a @ b per program, a: [M,K] of In, b: [K,N] of In, acc/out: [M,N] of Acc.
template <class In, class Acc>
std::vector<Acc> run_dot(std::vector<In> a, std::vector<In> b, std::vector<Acc> acc, const std::string& precision) {
  std::vector<Acc> out(acc.size());
  const std::string in = dtype_of<In>(), ac = dtype_of<Acc>();
  const InterpretedKernel k = compile(
      "kernel @dot(%a_in: ptr<" + in + ">, %b_in: ptr<" + in + ">, %c_in: ptr<" + ac + ">, %out: ptr<" + ac + ">) {\n" +
      load_2d("a", "a_in", in, kM, kK) + load_2d("b", "b_in", in, kK, kN) + load_2d("c", "c_in", ac, kM, kN) +
      fill("  %d = dot %a, %b, %c {precision = {P}} : tile<16x8x{T}>\n", {{"P", precision}, {"T", ac}}) +
      store_2d("o", "out", "d", ac, kM, kN) + "}\n");
  const KernelArgument args[] = {buffer(a, "a"), buffer(b, "b"), buffer(acc, "c"), buffer(out, "out")};
  k.launch({kPrograms, 1, 1}, args, 2);
  return out;
}

template <class In, class Acc, class W, class Round>
void check_dot(const std::vector<In>& a, const std::vector<In>& b, const std::vector<Acc>& acc,
               const std::vector<Acc>& out, Round round) {
  for (int p = 0; p < kPrograms; ++p)
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        W sum = static_cast<W>(acc[(p * kM + m) * kN + n]);
        for (int k = 0; k < kK; ++k)
          sum += round(static_cast<W>(static_cast<float>(a[(p * kM + m) * kK + k]))) *
                 round(static_cast<W>(static_cast<float>(b[(p * kK + k) * kN + n])));
        ASSERT_EQ(out[(p * kM + m) * kN + n], static_cast<Acc>(sum)) << p << " " << m << " " << n;
      }
}

TEST(Interpreter, DotAccumulatesInKOrder) {
  const auto a = random_values<float>(kM * kK * kPrograms, 200);
  const auto b = random_values<float>(kK * kN * kPrograms, 201);
  const auto c = random_values<float>(kM * kN * kPrograms, 202);
  const auto identity = [](float v) { return v; };
  check_dot<float, float, float>(a, b, c, run_dot<float, float>(a, b, c, "ieee"), identity);
  check_dot<float, float, float>(a, b, c, run_dot<float, float>(a, b, c, "tf32"), round_tf32);
  const auto ah = random_values<kiln::half>(kM * kK * kPrograms, 203);
  const auto bh = random_values<kiln::half>(kK * kN * kPrograms, 204);
  check_dot<kiln::half, float, float>(ah, bh, c, run_dot<kiln::half, float>(ah, bh, c, "ieee"), identity);
  const auto ab = random_values<kiln::bfloat16>(kM * kK * kPrograms, 205);
  const auto bb = random_values<kiln::bfloat16>(kK * kN * kPrograms, 206);
  check_dot<kiln::bfloat16, float, float>(ab, bb, c, run_dot<kiln::bfloat16, float>(ab, bb, c, "ieee"), identity);
  const auto a4 = random_values<kiln::float8_e4m3>(kM * kK * kPrograms, 207);
  const auto b4 = random_values<kiln::float8_e4m3>(kK * kN * kPrograms, 208);
  check_dot<kiln::float8_e4m3, float, float>(a4, b4, c, run_dot<kiln::float8_e4m3, float>(a4, b4, c, "ieee"), identity);
  const auto a5 = random_values<kiln::float8_e5m2>(kM * kK * kPrograms, 209);
  const auto b5 = random_values<kiln::float8_e5m2>(kK * kN * kPrograms, 210);
  check_dot<kiln::float8_e5m2, float, float>(a5, b5, c, run_dot<kiln::float8_e5m2, float>(a5, b5, c, "ieee"), identity);
}

TEST(Interpreter, DotTf32x3IsCloseToIeee) {
  const auto a = random_values<float>(kM * kK * kPrograms, 210);
  const auto b = random_values<float>(kK * kN * kPrograms, 211);
  const auto c = random_values<float>(kM * kN * kPrograms, 212);
  const auto ieee = run_dot<float, float>(a, b, c, "ieee");
  const auto split = run_dot<float, float>(a, b, c, "tf32x3");
  const auto tf32 = run_dot<float, float>(a, b, c, "tf32");
  double split_error = 0, tf32_error = 0;
  for (std::size_t i = 0; i < ieee.size(); ++i) {
    split_error = std::max(split_error, static_cast<double>(std::fabs(split[i] - ieee[i])));
    tf32_error = std::max(tf32_error, static_cast<double>(std::fabs(tf32[i] - ieee[i])));
  }
  // K = 32 products of magnitude <= 64 summing to <= 2048: f32 rounding is at
  // most K ulps of 2048 (~8e-3), tf32 input rounding ~2^-11 per product.
  EXPECT_LT(split_error, 8e-3);
  EXPECT_GT(tf32_error, 5 * split_error);
}

TEST(Interpreter, IntegerDotAccumulatesInI32) {
  const auto a = random_values<std::int8_t>(kM * kK * kPrograms, 220);
  const auto b = random_values<std::int8_t>(kK * kN * kPrograms, 221);
  const auto c = random_values<std::int32_t>(kM * kN * kPrograms, 222);
  const auto out = run_dot<std::int8_t, std::int32_t>(a, b, c, "ieee");
  for (int p = 0; p < kPrograms; ++p)
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n) {
        std::uint32_t sum = static_cast<std::uint32_t>(c[(p * kM + m) * kN + n]);
        for (int k = 0; k < kK; ++k)
          sum += static_cast<std::uint32_t>(a[(p * kM + m) * kK + k] * b[(p * kK + k) * kN + n]);
        ASSERT_EQ(out[(p * kM + m) * kN + n], static_cast<std::int32_t>(sum));
      }
}

// ---- Control flow ----------------------------------------------------------------------

TEST(Interpreter, ForLoopCarriesTileAndScalar) {
  // out[pid * 64 + j] = sum over k < blocks of x[k * 64 + j] + count of iterations.
  const int blocks = 7;
  auto x = random_values<float>(blocks * kBlock, 230);
  std::vector<float> out(kBlock * 3);
  const InterpretedKernel k = compile(R"(
kernel @loop(%x: ptr<f32>, %out: ptr<f32>, %blocks: i32) {
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %init = constant {value = 0.0} : tile<64xf32>
  %r = arange {start = 0} : tile<64xi32>
  %sum, %count = for %zero, %blocks, %one, %init, %zero : tile<64xf32>, i32 {
  ^(%k: i32, %acc: tile<64xf32>, %c: i32):
    %width = constant {value = 64} : i32
    %start = mul %k, %width : i32
    %start_t = splat %start : tile<64xi32>
    %offs = add %start_t, %r : tile<64xi32>
    %px_s = splat %x : tile<64xptr<f32>>
    %px = addptr %px_s, %offs : tile<64xptr<f32>>
    %v = load %px {cache = none, evict = none} : tile<64xf32>
    %next = add %acc, %v : tile<64xf32>
    %c1 = add %c, %one : i32
    yield %next, %c1
  }
  %countf = cast %count : f32
  %count_t = splat %countf : tile<64xf32>
  %result = add %sum, %count_t : tile<64xf32>
  %pid = program_id {axis = 0} : i32
  %w = constant {value = 64} : i32
  %base = mul %pid, %w : i32
  %base_t = splat %base : tile<64xi32>
  %oo = add %base_t, %r : tile<64xi32>
  %po_s = splat %out : tile<64xptr<f32>>
  %po = addptr %po_s, %oo : tile<64xptr<f32>>
  store %po, %result {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out"), scalar(blocks)};
  k.launch({3, 1, 1}, args, 2);
  for (int j = 0; j < kBlock; ++j) {
    float s = 0;
    for (int b = 0; b < blocks; ++b) s += x[b * kBlock + j];
    for (int p = 0; p < 3; ++p) ASSERT_EQ(out[p * kBlock + j], s + blocks);
  }
  // A loop that runs zero times yields its initial values.
  const KernelArgument none[] = {buffer(x, "x"), buffer(out, "out"), scalar(0)};
  k.launch({1, 1, 1}, none, 1);
  EXPECT_EQ(out[0], 0.0f);
}

TEST(Interpreter, ScalarPointerCarriedThroughLoopWalksRows) {
  // out[p * 16 + c] = sum over r of x[(p * rows + r) * 16 + c], the row pointer advancing by 16 per iteration.
  const int rows = 9, programs = 4;
  auto x = random_values<float>(programs * rows * 16, 235);
  std::vector<float> out(programs * 16);
  const InterpretedKernel k = compile(R"(
kernel @column_sums(%x: ptr<f32>, %out: ptr<f32>, %rows: i32) {
  %pid = program_id {axis = 0} : i32
  %w = constant {value = 16} : i32
  %rw = mul %rows, %w : i32
  %first = mul %pid, %rw : i32
  %base = addptr %x, %first : ptr<f32>
  %c = arange {start = 0} : tile<16xi32>
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %acc0 = constant {value = 0.0} : tile<16xf32>
  %sum, %end = for %zero, %rows, %one, %acc0, %base : tile<16xf32>, ptr<f32> {
  ^(%r: i32, %acc: tile<16xf32>, %p: ptr<f32>):
    %ps = splat %p : tile<16xptr<f32>>
    %pc = addptr %ps, %c : tile<16xptr<f32>>
    %v = load %pc {cache = none, evict = none} : tile<16xf32>
    %next = add %acc, %v : tile<16xf32>
    %pn = addptr %p, %w : ptr<f32>
    yield %next, %pn
  }
  %os = mul %pid, %w : i32
  %ob = addptr %out, %os : ptr<f32>
  %obs = splat %ob : tile<16xptr<f32>>
  %po = addptr %obs, %c : tile<16xptr<f32>>
  store %po, %sum {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out"), scalar(rows)};
  k.launch({programs, 1, 1}, args, 2);
  for (int p = 0; p < programs; ++p)
    for (int c = 0; c < 16; ++c) {
      float s = 0;
      for (int r = 0; r < rows; ++r) s += x[(p * rows + r) * 16 + c];
      ASSERT_EQ(out[p * 16 + c], s) << p << " " << c;
    }
}

TEST(Interpreter, ForLoopWithSwappedYieldsComputesFibonacci) {
  std::vector<std::int64_t> out(20);
  const InterpretedKernel k = compile(R"(
kernel @fib(%out: ptr<i64>) {
  %pid = program_id {axis = 0} : i32
  %lo = constant {value = 0} : i32
  %step = constant {value = 1} : i32
  %a0 = constant {value = 0} : i64
  %b0 = constant {value = 1} : i64
  %fa, %fb = for %lo, %pid, %step, %a0, %b0 : i64, i64 {
  ^(%i: i32, %a: i64, %b: i64):
    %s = add %a, %b : i64
    yield %b, %s
  }
  %p = addptr %out, %pid : ptr<i64>
  store %p, %fa {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(out, "out")};
  k.launch({20, 1, 1}, args, 4);
  std::int64_t a = 0, b = 1;
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(out[i], a) << i;
    b = a + b;
    a = b - a;
  }
}

TEST(Interpreter, IfAndWhile) {
  // Even programs store the Collatz step count of pid + 1, odd ones its negation.
  std::vector<std::int32_t> out(27);
  const InterpretedKernel k = compile(R"(
kernel @collatz(%out: ptr<i32>) {
  %pid = program_id {axis = 0} : i32
  %one = constant {value = 1} : i32
  %two = constant {value = 2} : i32
  %three = constant {value = 3} : i32
  %zero = constant {value = 0} : i32
  %start = add %pid, %one : i32
  %steps, %last = while %zero, %start : i32, i32 {
  ^(%s: i32, %v: i32):
    %go = cmp %v, %one {pred = ne} : i1
    yield %go
  } {
  ^(%s2: i32, %v2: i32):
    %r = rem %v2, %two : i32
    %even = cmp %r, %zero {pred = eq} : i1
    %half = div %v2, %two : i32
    %tv = mul %v2, %three : i32
    %odd = add %tv, %one : i32
    %next = select %even, %half, %odd : i32
    %s3 = add %s2, %one : i32
    yield %s3, %next
  }
  %pr = rem %pid, %two : i32
  %is_even = cmp %pr, %zero {pred = eq} : i1
  %value = if %is_even : i32 {
  ^():
    yield %steps
  } {
  ^():
    %neg = neg %steps : i32
    yield %neg
  }
  %p = addptr %out, %pid : ptr<i32>
  store %p, %value {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(out, "out")};
  k.launch({27, 1, 1}, args, 3);
  for (int pid = 0; pid < 27; ++pid) {
    int v = pid + 1, steps = 0;
    while (v != 1) {
      v = v % 2 == 0 ? v / 2 : 3 * v + 1;
      ++steps;
    }
    ASSERT_EQ(out[pid], pid % 2 == 0 ? steps : -steps) << pid;
  }
}

// ---- Atomics -------------------------------------------------------------------------

TEST(Interpreter, AtomicsAreAtomicAcrossParallelPrograms) {
  const int programs = 300;
  std::vector<std::int32_t> counter(1, 0);
  std::vector<float> total(1, 0.0f);
  std::vector<std::int32_t> biggest(1, std::numeric_limits<std::int32_t>::min());
  auto values = random_values<std::int32_t>(programs, 240);
  const InterpretedKernel k = compile(R"(
kernel @atomics(%counter: ptr<i32>, %total: ptr<f32>, %biggest: ptr<i32>, %values: ptr<i32>) {
  %pc = splat %counter : tile<64xptr<i32>>
  %ones = constant {value = 1} : tile<64xi32>
  %old = atomic_rmw %pc, %ones {kind = add, order = relaxed, scope = gpu} : tile<64xi32>
  %pid = program_id {axis = 0} : i32
  %pidf = cast %pid : f32
  %told = atomic_rmw %total, %pidf {kind = add, order = acq_rel, scope = gpu} : f32
  %pv = addptr %values, %pid : ptr<i32>
  %v = load %pv {cache = none, evict = none} : i32
  %mold = atomic_rmw %biggest, %v {kind = max, order = relaxed, scope = gpu} : i32
}
)");
  const KernelArgument args[] = {buffer(counter, "counter"), buffer(total, "total"), buffer(biggest, "biggest"),
                                 buffer(values, "values")};
  const LaunchStats stats = k.launch({programs, 1, 1}, args, 4);
  EXPECT_EQ(counter[0], programs * 64);
  EXPECT_EQ(total[0], programs * (programs - 1) / 2.0f);
  EXPECT_EQ(biggest[0], *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(stats.bytes_written, programs * (64 + 1 + 1) * 4u);
}

TEST(Interpreter, AtomicCasLetsExactlyOneProgramWin) {
  const int programs = 200;
  std::vector<std::int32_t> lock(1, 0), seen(programs, -1);
  const InterpretedKernel k = compile(R"(
kernel @cas(%lock: ptr<i32>, %seen: ptr<i32>) {
  %pid = program_id {axis = 0} : i32
  %one = constant {value = 1} : i32
  %zero = constant {value = 0} : i32
  %mine = add %pid, %one : i32
  %old = atomic_cas %lock, %zero, %mine {order = acq_rel, scope = gpu} : i32
  %p = addptr %seen, %pid : ptr<i32>
  store %p, %old {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(lock, "lock"), buffer(seen, "seen")};
  k.launch({programs, 1, 1}, args, 4);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), 1);
  const int winner = static_cast<int>(std::find(seen.begin(), seen.end(), 0) - seen.begin());
  EXPECT_EQ(lock[0], winner + 1);
  seen[winner] = winner + 1;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), winner + 1), programs);
}

TEST(Interpreter, MaskedAtomicsSkipInactiveLanesAndReturnZero) {
  std::vector<float> slots(64, 1.0f), olds(64, -1.0f);
  const InterpretedKernel k = compile(R"(
kernel @masked_xchg(%slots: ptr<f32>, %olds: ptr<f32>) {
  %r = arange {start = 0} : tile<64xi32>
  %ps_s = splat %slots : tile<64xptr<f32>>
  %ps = addptr %ps_s, %r : tile<64xptr<f32>>
  %half = constant {value = 32} : tile<64xi32>
  %low = cmp %r, %half {pred = lt} : tile<64xi1>
  %v = constant {value = 7.5} : tile<64xf32>
  %old = atomic_rmw %ps, %v, %low {kind = xchg, order = relaxed, scope = gpu} : tile<64xf32>
  %po_s = splat %olds : tile<64xptr<f32>>
  %po = addptr %po_s, %r : tile<64xptr<f32>>
  store %po, %old {cache = none, evict = none}
}
)");
  const KernelArgument args[] = {buffer(slots, "slots"), buffer(olds, "olds")};
  k.launch({1, 1, 1}, args, 1);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(slots[i], i < 32 ? 7.5f : 1.0f);
    ASSERT_EQ(olds[i], i < 32 ? 1.0f : 0.0f);
  }
}

// ---- Debugging ---------------------------------------------------------------------------

TEST(Interpreter, PrintWritesOneLinePerProgram) {
  const InterpretedKernel k = compile(R"(
kernel @show(%scale: f32) {
  %r = arange {start = 0} : tile<4xi32>
  print %r, %scale {prefix = "r:"}
}
)");
  const KernelArgument args[] = {scalar(2.5f)};
  testing::internal::CaptureStdout();
  k.launch({2, 1, 1}, args, 1);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed, "pid (0, 0, 0) r: [0, 1, 2, 3] 2.5\npid (1, 0, 0) r: [0, 1, 2, 3] 2.5\n");
}

TEST(Interpreter, PassingAssertIsSilent) {
  const InterpretedKernel k = compile(R"(
kernel @check(%n: i32) {
  %zero = constant {value = 0} : i32
  %ok = cmp %n, %zero {pred = gt} : i1
  assert %ok {message = "n must be positive"}
}
)");
  const KernelArgument args[] = {scalar(5)};
  EXPECT_NO_THROW(k.launch({8, 1, 1}, args, 2));
}

}  // namespace
}  // namespace kiln::runtime
