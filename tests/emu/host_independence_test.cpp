// The emu gives the same bits whatever x86-64 CPU it runs on: the cast and
// math kernels, JIT-compiled for several machines this host can execute (the
// emu's own fixed one, the baseline x86-64, x86-64-v2, -v3 and -v4 where the
// host has them, and the host's own CPU with every feature it has), must give
// bit-identical outputs. A machine whose instruction selection converted a
// narrow float its own way (AVX-512 BF16 flushing subnormals, F16C) or fused
// a multiply-add would differ here on any host that has it. And a host thread
// whose floating-point mode flushes subnormals runs emulated code in the
// emu's mode (round to nearest, subnormals kept) and gets its own back.
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "correctness/test_support.hpp"
#include "emu_support.hpp"
#include "kiln/runtime/emu_machine.hpp"

namespace {

namespace kl = kiln;
using kiln::Buffer;
using kiln::runtime::EmuMachine;
using kiln::runtime::KernelArgument;

constexpr int kBlock = 128;

/// Every cast of `From` into f16 and bf16.
template <class From>
void to_narrow(kl::Ptr<kl::Scalar<From>> x, kl::Ptr<kl::f16> h, kl::Ptr<kl::bf16> b, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto v = kl::load(x + offs, mask);
  kl::store(h + offs, kl::cast<kl::f16>(v), mask);
  kl::store(b + offs, kl::cast<kl::bf16>(v), mask);
}

/// Narrow `N` values given as bit patterns: widened, narrowed between the
/// two formats, converted to integers, and the arithmetic on them, each
/// result stored as its bit pattern.
template <class N>
void narrow_arithmetic(kl::Ptr<kl::i16> x, kl::Ptr<kl::i16> y, kl::Ptr<kl::i16> z, kl::Ptr<kl::i16> out,
                       kl::Ptr<kl::f32> wide, kl::Ptr<kl::i32> integer, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto a = kl::bitcast<N>(kl::load(x + offs, mask));
  auto b = kl::bitcast<N>(kl::load(y + offs, mask));
  auto c = kl::bitcast<N>(kl::load(z + offs, mask));
  const auto results = {a + b,
                        a - b,
                        a * b,
                        a / b,
                        kl::fma(a, b, c),
                        kl::sqrt(kl::abs(a)),
                        -a,
                        kl::minimum(a, b),
                        kl::maximum(a, b),
                        kl::exp(a),
                        kl::where(a < b, a, c),
                        a};
  int slot = 0;
  for (const auto& result : results) kl::store(out + (slot++) * n + offs, kl::bitcast<kl::i16>(result), mask);
  kl::store(wide + offs, kl::cast<kl::f32>(a), mask);
  kl::store(integer + offs, kl::cast<kl::i32>(a), mask);
}

/// f32 math: the libdevice and approximate functions, division and fma.
void float_math(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto a = kl::load(x + offs, mask);
  auto b = kl::load(y + offs, mask);
  const auto results = {
      kl::exp(a),   kl::exp2(a),      kl::log(kl::abs(a)), kl::log2(kl::abs(a)), kl::sin(a),
      kl::cos(a),   kl::tanh(a),      kl::erf(a),          kl::sqrt(kl::abs(a)), kl::rsqrt(kl::abs(a)),
      a / b,        kl::fma(a, b, a), a * b + a,           kl::floor(a),         kl::trunc(a),
      kl::round(a), kl::rint(a),      kl::tan(a),          kl::atan2(a, b),      kl::pow(a, b)};
  int slot = 0;
  for (const auto& result : results) kl::store(out + (slot++) * n + offs, result, mask);
}

/// Scales subnormal inputs: zero where subnormals are flushed or read as zero.
void scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto v = kl::load(x + offs, mask);
  kl::store(out + offs, v * 1.5f + v, mask);
}

/// The machines to compare: the emu's, then every x86-64 level the host
/// runs, then the host's own CPU.
std::vector<EmuMachine> machines() {
  std::vector<EmuMachine> list = {kiln::runtime::emu_machine(), {"x86-64", ""}};
  if (__builtin_cpu_supports("x86-64-v2")) list.push_back({"x86-64-v2", ""});
  if (__builtin_cpu_supports("x86-64-v3")) list.push_back({"x86-64-v3", ""});
  if (__builtin_cpu_supports("x86-64-v4")) list.push_back({"x86-64-v4", ""});
  list.push_back(kiln::runtime::host_machine());
  return list;
}

std::string describe(const EmuMachine& machine) {
  return machine.cpu + (machine.features.empty() ? "" : " (" + machine.features.substr(0, 60) + "...)");
}

/// Bit patterns probing float conversions: random magnitudes over the whole
/// exponent range, subnormals of f32, f16 and bf16, ties, infinities and NaNs.
std::vector<std::uint32_t> float_patterns(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> out = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00001,
                                    0x00000001, 0x000116c2, 0x00800000, 0x33800000, 0x33000001, 0x387fe000,
                                    0x3f801000, 0x3f808000, 0x3f808001, 0x477fe000, 0x477ff000, 0x7f7fffff};
  std::mt19937_64 rng(seed);
  while (out.size() < n) out.push_back(static_cast<std::uint32_t>(rng()));
  return out;
}

template <class T>
std::vector<T> random_bits(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> out(n);
  for (T& v : out) {
    const std::uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof(T));
  }
  return out;
}

template <class T>
KernelArgument argument(const Buffer<T>& buffer, const char* name) {
  return kiln::emu_test::pointer_to(buffer, name);
}
KernelArgument argument(int value) { return {static_cast<std::uint32_t>(value), {}}; }

/// Runs `kernel` (compiled by kl::compile) on every machine with `arguments`
/// (the outputs listed in `outputs`, which are reset between machines) and
/// requires the outputs to be the first machine's, bit for bit.
template <class Kernel, class... Outputs>
void expect_same_bits_on_every_machine(const Kernel& kernel, const char* what, int n,
                                       const std::vector<KernelArgument>& arguments, Outputs&... outputs) {
  const kiln::runtime::Program& program = kernel.program();
  std::vector<std::vector<std::uint8_t>> first;
  for (const EmuMachine& machine : machines()) {
    SCOPED_TRACE(std::string(what) + " on " + describe(machine));
    const auto compiled = kiln::runtime::emu::compile_for_emu(program, machine);
    compiled->launch(kiln::Device::emu(1), {kl::cdiv(n, kBlock), 1, 1}, arguments);
    std::vector<std::vector<std::uint8_t>> results;
    auto collect = [&](auto& output) {
      const auto host = output.to_host();
      std::vector<std::uint8_t> bytes(output.bytes());
      std::memcpy(bytes.data(), host.data(), bytes.size());
      results.push_back(std::move(bytes));
      output.copy_from(decltype(host)(host.size()));
    };
    (collect(outputs), ...);
    if (first.empty()) {
      first = std::move(results);
      continue;
    }
    for (std::size_t i = 0; i < results.size(); ++i)
      EXPECT_EQ(results[i], first[i]) << "output " << i << " differs from " << describe(machines().front());
  }
}

template <class From>
void check_casts_to_narrow(std::vector<From> x) {
  const int n = static_cast<int>(x.size());
  const auto input = Buffer<From>::from(x, kiln::Device::emu());
  Buffer<kl::half> h(n, kiln::Device::emu());
  Buffer<kl::bfloat16> b(n, kiln::Device::emu());
  const auto kernel = kl::compile<to_narrow<From>>();
  const std::string name(kiln::ir::dtype_name(kl::dtype_v<From>));
  expect_same_bits_on_every_machine(kernel, name.c_str(), n,
                                    {argument(input, "x"), argument(h, "h"), argument(b, "b"), argument(n)}, h, b);
}

TEST(EmuHostIndependence, CastsIntoF16AndBf16GiveTheSameBitsOnEveryMachine) {
  constexpr std::size_t n = 1000;
  std::vector<float> floats;
  for (std::uint32_t bits : float_patterns(n, 1)) floats.push_back(std::bit_cast<float>(bits));
  check_casts_to_narrow(floats);
  std::vector<double> doubles = random_bits<double>(n, 2);
  for (float f : floats) doubles.push_back(f + static_cast<double>(f) * 0x1p-40);
  check_casts_to_narrow(doubles);
  check_casts_to_narrow(random_bits<std::int32_t>(n, 3));
  check_casts_to_narrow(random_bits<std::int64_t>(n, 4));
  check_casts_to_narrow(random_bits<std::uint32_t>(n, 5));
  check_casts_to_narrow(random_bits<std::uint64_t>(n, 6));
  check_casts_to_narrow(random_bits<std::int16_t>(n, 7));
}

template <class N>
void check_narrow_arithmetic(const char* name) {
  constexpr int n = 1000;
  constexpr int results = 12;
  const kiln::Device emu = kiln::Device::emu();
  std::vector<std::int16_t> patterns = random_bits<std::int16_t>(3 * n, 8);
  // Subnormals, the largest finite values, infinities and NaNs of both formats among them.
  const std::int16_t edges[] = {0x0001,
                                0x03ff,
                                0x7bff,
                                0x7c00,
                                0x7e00,
                                0x7d01,
                                0x0080,
                                0x007f,
                                0x7f7f,
                                0x7f80,
                                0x7fc0,
                                0x7f81,
                                static_cast<std::int16_t>(0x8001),
                                0x3c00,
                                0x3f80};
  for (std::size_t i = 0; i < std::size(edges); ++i) patterns[i * 7] = edges[i];
  const auto x = Buffer<std::int16_t>::from(std::vector<std::int16_t>(patterns.begin(), patterns.begin() + n), emu);
  const auto y =
      Buffer<std::int16_t>::from(std::vector<std::int16_t>(patterns.begin() + n, patterns.begin() + 2 * n), emu);
  const auto z = Buffer<std::int16_t>::from(std::vector<std::int16_t>(patterns.begin() + 2 * n, patterns.end()), emu);
  Buffer<std::int16_t> out(results * n, emu);
  Buffer<float> wide(n, emu);
  Buffer<std::int32_t> integer(n, emu);
  const auto kernel = kl::compile<narrow_arithmetic<N>>();
  expect_same_bits_on_every_machine(kernel, name, n,
                                    {argument(x, "x"), argument(y, "y"), argument(z, "z"), argument(out, "out"),
                                     argument(wide, "wide"), argument(integer, "integer"), argument(n)},
                                    out, wide, integer);
}

TEST(EmuHostIndependence, F16AndBf16ArithmeticGivesTheSameBitsOnEveryMachine) {
  check_narrow_arithmetic<kl::f16>("f16");
  check_narrow_arithmetic<kl::bf16>("bf16");
}

TEST(EmuHostIndependence, FloatMathGivesTheSameBitsOnEveryMachine) {
  constexpr int n = 1000;
  constexpr int results = 20;
  const kiln::Device emu = kiln::Device::emu();
  std::vector<float> a, b;
  for (std::uint32_t bits : float_patterns(n, 9)) a.push_back(std::bit_cast<float>(bits));
  for (std::uint32_t bits : float_patterns(n, 10)) b.push_back(std::bit_cast<float>(bits));
  const auto x = Buffer<float>::from(a, emu), y = Buffer<float>::from(b, emu);
  Buffer<float> out(results * n, emu);
  const auto kernel = kl::compile<float_math>();
  expect_same_bits_on_every_machine(kernel, "f32 math", n,
                                    {argument(x, "x"), argument(y, "y"), argument(out, "out"), argument(n)}, out);
}

TEST(EmuFloatingPointMode, SubnormalsSurviveAHostThreadThatFlushesThem) {
  constexpr int n = 300;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = std::ldexp(static_cast<float>(i + 1), -149 + i % 20);  // subnormals
  const auto kernel = kl::compile<scale>();
  const kiln::Device emu = kiln::Device::emu(1);  // one host thread: this one
  const auto input = Buffer<float>::from(x, emu);
  Buffer<float> out(n, emu);
  const unsigned mode = _mm_getcsr();
  constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  _mm_setcsr(mode | kFlushToZero | kDenormalsAreZero);
  kernel.launch(kl::Grid(kl::cdiv(n, kBlock)), input, out, n);
  const unsigned after = _mm_getcsr();
  _mm_setcsr(mode);
  EXPECT_EQ(after & (kFlushToZero | kDenormalsAreZero), kFlushToZero | kDenormalsAreZero)
      << "the launching thread gets its own mode back";
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = x[i] * 1.5f + x[i];  // this thread's mode is the emu's again
  kiln::test::expect_equal(out.to_host(), want, "v * 1.5 + v on subnormals");
}

}  // namespace
