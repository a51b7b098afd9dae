// Correctness of the stdlib random numbers on the cpu device: philox,
// randint/randint4x/rand bit for bit against an independent host
// Philox4x32-10 and Triton's u32 -> float mapping, randn against a host
// Box-Muller, determinism per (seed, offset), and the sample statistics of
// rand and randn.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;
using kiln::test::expect_within;

// ---------------------------------------------------------------------------
// The host reference: Philox4x32 with 10 rounds (Salmon et al., SC'11), key
// (k0, k1) bumped by the Weyl constants after each round.

std::array<std::uint32_t, 4> philox_host(std::uint32_t k0, std::uint32_t k1, std::array<std::uint32_t, 4> c) {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c[0];
    const std::uint64_t p2 = std::uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<std::uint32_t>(p2 >> 32) ^ c[1] ^ k0, static_cast<std::uint32_t>(p2),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<std::uint32_t>(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

std::array<std::uint32_t, 4> randint4x_host(std::uint64_t seed, std::uint32_t offset) {
  return philox_host(static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), {offset, 0, 0, 0});
}

/// Triton's mapping: the bits as an i32, negatives folded onto -x - 1 (which
/// is ~x), converted to f32 and scaled by 4.6566127342e-10 (~2^-31), in f32.
float uniform_host(std::uint32_t bits) {
  const auto s = std::bit_cast<std::int32_t>(bits);
  const std::int32_t folded = s < 0 ? ~s : s;
  return static_cast<float>(folded) * 4.6566127342e-10f;
}

// Random123's published known-answer vectors for Philox4x32-10 (its
// tests/kat_vectors): they check the host reference itself, and the stdlib's
// philox through the kernel below.
struct KnownAnswer {
  std::array<std::uint32_t, 4> counter;
  std::array<std::uint32_t, 2> key;
  std::array<std::uint32_t, 4> output;
};
const KnownAnswer kKnownAnswers[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(PhiloxHost, MatchesRandom123KnownAnswers) {
  for (const auto& kat : kKnownAnswers) EXPECT_EQ(philox_host(kat.key[0], kat.key[1], kat.counter), kat.output);
}

// ---------------------------------------------------------------------------
// Kernels.

// Program p runs philox on counters[4p .. 4p+3] with the 64-bit seed seeds[p].
void philox_kernel(kl::Ptr<kl::u32> counters, kl::Ptr<kl::u64> seeds, kl::Ptr<kl::u32> out) {
  auto p = kl::program_id(0);
  auto [x0, x1, x2, x3] = kl::philox(kl::load(seeds + p), kl::load(counters + p * 4), kl::load(counters + (p * 4 + 1)),
                                     kl::load(counters + (p * 4 + 2)), kl::load(counters + (p * 4 + 3)));
  kl::store(out + p * 4, x0);
  kl::store(out + (p * 4 + 1), x1);
  kl::store(out + (p * 4 + 2), x2);
  kl::store(out + (p * 4 + 3), x3);
}

// Element i (of n) draws with offset base + i: randint, the four randint4x
// streams (interleaved), rand and randn.
template <int BLOCK>
void random_kernel(kl::Ptr<kl::u32> ints, kl::Ptr<kl::u32> streams, kl::Ptr<kl::f32> uniforms, kl::Ptr<kl::f32> normals,
                   kl::i64 seed, kl::i32 base, kl::i32 n) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  auto offset = base + offs;
  kl::store(ints + offs, kl::randint(seed, offset), mask);
  auto [r0, r1, r2, r3] = kl::randint4x(seed, offset);
  kl::store(streams + offs * 4, r0, mask);
  kl::store(streams + (offs * 4 + 1), r1, mask);
  kl::store(streams + (offs * 4 + 2), r2, mask);
  kl::store(streams + (offs * 4 + 3), r3, mask);
  kl::store(uniforms + offs, kl::rand(seed, offset), mask);
  kl::store(normals + offs, kl::randn(seed, offset), mask);
}

TEST(Philox, KnownAnswersThroughTheKernel) {
  std::vector<std::uint32_t> counters, want;
  std::vector<std::uint64_t> seeds;
  for (const auto& kat : kKnownAnswers) {
    counters.insert(counters.end(), kat.counter.begin(), kat.counter.end());
    want.insert(want.end(), kat.output.begin(), kat.output.end());
    seeds.push_back(kat.key[0] | std::uint64_t{kat.key[1]} << 32);
  }
  auto bcounters = kl::Buffer<std::uint32_t>::from(counters);
  auto bseeds = kl::Buffer<std::uint64_t>::from(seeds);
  kl::Buffer<std::uint32_t> out(want.size());
  kl::compile<philox_kernel>().launch(kl::Grid(static_cast<int>(seeds.size())), bcounters, bseeds, out);
  expect_equal(out.to_host(), want, "philox known answers");
}

constexpr int kBlock = 128;
constexpr int kSamples = 100003;  // 782 programs, the last masked after 35

struct Draws {
  std::vector<std::uint32_t> ints, streams;
  std::vector<float> uniforms, normals;
};

Draws draw(std::int64_t seed, std::int32_t base, int n = kSamples) {
  kl::Buffer<std::uint32_t> ints(n), streams(4 * static_cast<std::size_t>(n));
  kl::Buffer<float> uniforms(n), normals(n);
  kl::compile<random_kernel<kBlock>>().launch(kl::Grid(kl::cdiv(n, kBlock)), ints, streams, uniforms, normals, seed,
                                              base, n);
  return {ints.to_host(), streams.to_host(), uniforms.to_host(), normals.to_host()};
}

// A seed with both 32-bit halves nonzero, so that both key words matter.
constexpr std::int64_t kSeed = 0x1234'5678'9ABC'DEF1;

TEST(Random, BitExactAgainstHostPhilox) {
  const std::int32_t base = 1000;
  const Draws d = draw(kSeed, base);
  std::vector<std::uint32_t> want_ints(kSamples), want_streams(4 * static_cast<std::size_t>(kSamples));
  std::vector<float> want_uniforms(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    const auto r = randint4x_host(static_cast<std::uint64_t>(kSeed), static_cast<std::uint32_t>(base + i));
    want_ints[i] = r[0];
    for (int s = 0; s < 4; ++s) want_streams[4 * static_cast<std::size_t>(i) + s] = r[s];
    want_uniforms[i] = uniform_host(r[0]);
  }
  expect_equal(d.ints, want_ints, "randint");
  expect_equal(d.streams, want_streams, "randint4x");
  expect_equal(d.uniforms, want_uniforms, "rand");
}

TEST(Random, NormalsFollowBoxMullerOnTheFirstTwoStreams) {
  const Draws d = draw(kSeed, 0);
  // The host recomputes Box-Muller in double from the same f32 inputs (u1
  // clamped to 1e-7, the f32 angle u2 * 2pi): the kernel's f32 log, sqrt, cos
  // and products, each within 2 ulp (2^-23 relative, or 2^-23 absolute for
  // cos), leave r = sqrt(-2 log u1) within 2^-23 relative (sqrt halves the
  // log's error and adds its own 2^-24), cos within 2^-23, and their product
  // within r * (2^-23 + 2^-23 + 2^-24) < r * 2^-21; 2^-20 r allows libm a
  // further factor 2.
  std::vector<double> want(kSamples), bound(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    const auto r = randint4x_host(static_cast<std::uint64_t>(kSeed), static_cast<std::uint32_t>(i));
    const float u1 = std::max(uniform_host(r[0]), 1.0e-7f);
    const float angle = uniform_host(r[1]) * 6.283185307179586f;
    const double radius = std::sqrt(-2.0 * std::log(static_cast<double>(u1)));
    want[i] = radius * std::cos(static_cast<double>(angle));
    bound[i] = 0x1p-20 * radius + 0x1p-126;
  }
  expect_within(d.normals, want, bound, "randn");
}

TEST(Random, DeterministicPerSeedAndOffset) {
  const Draws first = draw(kSeed, 0), again = draw(kSeed, 0);
  expect_equal(again.ints, first.ints, "randint, same seed and offsets");
  expect_equal(again.normals, first.normals, "randn, same seed and offsets");
  // Shifting the offsets by 1000 shifts the sequence.
  const Draws shifted = draw(kSeed, 1000, kSamples - 1000);
  expect_equal(shifted.ints, std::vector<std::uint32_t>(first.ints.begin() + 1000, first.ints.end()),
               "randint, shifted offsets");
  expect_equal(shifted.uniforms, std::vector<float>(first.uniforms.begin() + 1000, first.uniforms.end()),
               "rand, shifted offsets");
  // Another seed (differing only in the high key word) gives other numbers:
  // equal u32 draws have probability 2^-32 each.
  const Draws other = draw(kSeed + (std::int64_t{1} << 32), 0);
  int equal = 0;
  for (int i = 0; i < kSamples; ++i) equal += other.ints[i] == first.ints[i];
  EXPECT_LE(equal, 2);
}

TEST(Random, SampleStatistics) {
  const Draws d = draw(kSeed, 7);
  const double n = kSamples;
  double mean_u = 0, mean_n = 0;
  for (int i = 0; i < kSamples; ++i) {
    ASSERT_GE(d.uniforms[i], 0.0f) << i;
    ASSERT_LT(d.uniforms[i], 1.0f) << i;
    ASSERT_TRUE(std::isfinite(d.normals[i])) << i;
    mean_u += d.uniforms[i];
    mean_n += d.normals[i];
  }
  mean_u /= n;
  mean_n /= n;
  double var_u = 0, var_n = 0;
  for (int i = 0; i < kSamples; ++i) {
    var_u += (d.uniforms[i] - mean_u) * (d.uniforms[i] - mean_u);
    var_n += (d.normals[i] - mean_n) * (d.normals[i] - mean_n);
  }
  var_u /= n - 1;
  var_n /= n - 1;
  // Five standard errors of each statistic over n samples (a correct generator
  // strays further with probability < 1e-6): mean of U(0,1): sqrt(1/12 / n);
  // its variance 1/12: sqrt((1/80 - 1/144) / n) (fourth central moment 1/80);
  // mean of N(0,1): sqrt(1 / n); its variance 1: sqrt(2 / n).
  EXPECT_NEAR(mean_u, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(var_u, 1.0 / 12, 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / n));
  EXPECT_NEAR(mean_n, 0.0, 5 * std::sqrt(1.0 / n));
  EXPECT_NEAR(var_n, 1.0, 5 * std::sqrt(2.0 / n));
}

}  // namespace
