// The saturating conversion to fp8 (OPS.md's cast row): every f16 and bf16
// bit pattern, and a sample of f32 values (random bit patterns, values around
// the fp8 range, every tie between neighbouring fp8 values and its f32
// neighbours), cast to e4m3 and e5m2 and checked bit for bit against the
// long double reference of cast_reference.hpp; then the named cases.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cast_reference.hpp"

namespace {

namespace kl = kiln;
using kiln::ir::DType;

constexpr int kSaturationBlock = 1024;

template <class From>
void to_fp8(kl::Ptr<kl::Scalar<From>> x, kl::i32 n, kl::Ptr<kl::Scalar<kl::float8_e4m3>> e4m3,
            kl::Ptr<kl::Scalar<kl::float8_e5m2>> e5m2) {
  auto offs = kl::program_id(0) * kSaturationBlock + kl::arange<kSaturationBlock>();
  auto mask = offs < n;
  auto v = kl::load(x + offs, mask);
  kl::store(e4m3 + offs, kl::cast<kl::Scalar<kl::float8_e4m3>>(v), mask);
  kl::store(e5m2 + offs, kl::cast<kl::Scalar<kl::float8_e5m2>>(v), mask);
}

struct Fp8Results {
  std::vector<kl::float8_e4m3> e4m3;
  std::vector<kl::float8_e5m2> e5m2;
};

template <class From>
Fp8Results convert(const std::vector<From>& x) {
  const int n = static_cast<int>(x.size());
  kl::Buffer<kl::float8_e4m3> e4m3(x.size());
  kl::Buffer<kl::float8_e5m2> e5m2(x.size());
  kl::compile<to_fp8<From>>().launch(kl::Grid(kl::cdiv(n, kSaturationBlock)), kiln::test::to_buffer(x), n, e4m3, e5m2);
  return {e4m3.to_host(), e5m2.to_host()};
}

/// Casts x to both fp8 formats on the test's device and checks each element
/// against the reference.
template <class From>
void check_against_reference(const std::vector<From>& x) {
  namespace cast = kiln::test::cast;
  const Fp8Results got = convert(x);
  const DType from = kl::dtype_v<From>;
  std::vector<unsigned char> input(x.size() * sizeof(From));
  std::memcpy(input.data(), x.data(), input.size());
  auto check = [&](DType to, const auto& result) {
    std::vector<unsigned char> bits(result.size()), want(result.size());
    for (std::size_t i = 0; i < result.size(); ++i) {
      bits[i] = result[i].bits;
      cast::reference_cast(from, &input[i * sizeof(From)], to, &want[i]);
    }
    cast::expect_same_elements(
        to, bits, want, input, from,
        "cast " + std::string(kiln::ir::dtype_name(from)) + " -> " + std::string(kiln::ir::dtype_name(to)));
  };
  check(DType::f8e4m3, got.e4m3);
  check(DType::f8e5m2, got.e5m2);
}

template <class Narrow>
std::vector<Narrow> every_bit_pattern() {
  std::vector<Narrow> out(65536);
  for (std::uint32_t b = 0; b < 65536; ++b) out[b] = Narrow::from_bits(static_cast<std::uint16_t>(b));
  return out;
}

/// Each fp8 format's ties (the midpoint of every pair of neighbouring finite
/// values, and the midpoint past the largest one) with both signs and their
/// f32 neighbours on each side.
template <class Fp8>
void push_ties(std::vector<float>& out) {
  for (std::uint32_t b = 0; b < 0x7f; ++b) {
    const float low = Fp8::from_bits(static_cast<std::uint8_t>(b));
    const float high = Fp8::from_bits(static_cast<std::uint8_t>(b + 1));
    if (!std::isfinite(low)) continue;
    // Past the largest finite value the next step is as wide as the last one.
    const float above =
        std::isfinite(high) ? high : low + (low - static_cast<float>(Fp8::from_bits(static_cast<std::uint8_t>(b - 1))));
    const float tie = low + (above - low) / 2;
    for (float sign : {1.0f, -1.0f}) {
      out.push_back(sign * tie);
      out.push_back(sign * std::nextafter(tie, 0.0f));
      out.push_back(sign * std::nextafter(tie, std::numeric_limits<float>::infinity()));
    }
  }
}

std::vector<float> f32_sample() {
  std::vector<float> out;
  push_ties<kl::float8_e4m3>(out);
  push_ties<kl::float8_e5m2>(out);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 464.1f, 1000.0f, -1000.0f,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()})
    out.push_back(v);
  std::mt19937 rng(1729);
  // Random bit patterns (NaN payloads, f32 subnormals, huge values), and
  // values with exponents from below e4m3's subnormals to past e5m2's range.
  std::uniform_int_distribution<std::uint32_t> exponent(127 - 20, 127 + 17);
  for (int i = 0; i < 16384; ++i) {
    out.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
    const std::uint32_t bits = (rng() & 0x807fffffu) | (exponent(rng) << 23);
    out.push_back(std::bit_cast<float>(bits));
  }
  return out;
}

TEST(Fp8Saturation, EveryF16BitPatternMatchesTheReference) { check_against_reference(every_bit_pattern<kl::half>()); }

TEST(Fp8Saturation, EveryBf16BitPatternMatchesTheReference) {
  check_against_reference(every_bit_pattern<kl::bfloat16>());
}

TEST(Fp8Saturation, F32TiesAndRandomValuesMatchTheReference) { check_against_reference(f32_sample()); }

TEST(Fp8Saturation, OverflowAndInfinitySaturateAndNanStaysNan) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {
      464.0f, 464.1f, 1000.0f, inf, -inf, -1e30f, 61439.0f, 61440.0f, std::numeric_limits<float>::quiet_NaN()};
  const Fp8Results got = convert(x);
  const std::vector<float> want_e4m3 = {448, 448, 448, 448, -448, -448, 448, 448};
  const std::vector<float> want_e5m2 = {448, 448, 1024, 57344, -57344, -57344, 57344, 57344};
  for (std::size_t i = 0; i + 1 < x.size(); ++i) {
    EXPECT_EQ(static_cast<float>(got.e4m3[i]), want_e4m3[i]) << "e4m3 of " << x[i];
    EXPECT_EQ(static_cast<float>(got.e5m2[i]), want_e5m2[i]) << "e5m2 of " << x[i];
  }
  EXPECT_TRUE(std::isnan(static_cast<float>(got.e4m3.back())));
  EXPECT_TRUE(std::isnan(static_cast<float>(got.e5m2.back())));
}

}  // namespace
