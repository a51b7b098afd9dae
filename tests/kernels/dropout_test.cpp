// The standalone low-memory dropout kernel: its host Philox against
// Random123's known answers, the kernel against the double reference for
// f32, f16 and bf16 and sizes below and across blocks, the kept fraction
// within a binomial bound, reproducibility from (seed, offset), a different
// mask for another seed, and p = 0 keeping every element unchanged.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/dropout.hpp"

namespace {

namespace kl = kiln;
using kiln::kernels::dropout_keep_host;
using kiln::kernels::philox_host;
using kiln::test::expect_equal;
using kiln::test::expect_within;
using kiln::test::random_values;

constexpr int kBlock = 256;
constexpr std::int64_t kSeed = 0x1234'5678'9ABC'DEF1;

TEST(DropoutHostPhilox, MatchesRandom123KnownAnswers) {
  // Random123's published vectors for Philox4x32-10 (its tests/kat_vectors).
  struct KnownAnswer {
    std::array<std::uint32_t, 4> counter;
    std::array<std::uint32_t, 2> key;
    std::array<std::uint32_t, 4> output;
  };
  const KnownAnswer answers[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const auto& kat : answers) EXPECT_EQ(philox_host(kat.key[0], kat.key[1], kat.counter), kat.output);
}

template <class C>
std::vector<C> run_dropout(const std::vector<C>& x, float p, std::int64_t seed, std::int32_t offset) {
  auto bx = kl::Buffer<C>::from(x);
  kl::Buffer<C> out(x.size());
  const int n = static_cast<int>(x.size());
  kl::compile<kiln::kernels::dropout<kl::Scalar<C>, kBlock>>().launch(kl::Grid(kl::cdiv(n, kBlock)), bx, out, n, p,
                                                                      seed, offset);
  return out.to_host();
}

template <class C>
class Dropout : public ::testing::Test {};
using Types = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(Dropout, Types, kiln::test::DTypeNames);

TYPED_TEST(Dropout, MatchesReference) {
  for (const int n : {1, 100, kBlock, 5 * kBlock + 3}) {
    for (const float p : {0.1f, 0.5f, 0.875f}) {
      const auto x = random_values<TypeParam>(static_cast<std::size_t>(n), 31 + n);
      const auto ref = kiln::kernels::dropout_reference(x, p, static_cast<std::uint64_t>(kSeed), 777);
      expect_within(run_dropout(x, p, kSeed, 777), ref.values, ref.bounds,
                    ("dropout n=" + std::to_string(n) + " p=" + std::to_string(p)).c_str());
    }
  }
}

TYPED_TEST(Dropout, ZeroProbabilityKeepsEverything) {
  // 1 / (1 - 0) = 1 exactly, so every element comes back bit for bit.
  const auto x = random_values<TypeParam>(3 * kBlock + 11, 41);
  expect_equal(run_dropout(x, 0.0f, kSeed, 0), x, "dropout p=0");
}

/// 1 where the output is +0 (dropped; the inputs are never exactly 0).
template <class C>
std::vector<std::uint8_t> dropped(const std::vector<C>& out) {
  std::vector<std::uint8_t> mask;
  for (C v : out) mask.push_back(kiln::test::as_double(v) == 0.0);
  return mask;
}

TEST(DropoutStatistics, KeptFractionWithinSixSigma) {
  // The number kept of n is Binomial(n, 1 - p): within 6 standard deviations
  // sqrt(n p (1 - p)) of n (1 - p) except with probability < 2e-9.
  const int n = 100003;
  const auto x = random_values<float>(n, 51, 1.0, 2.0);
  for (const float p : {0.05f, 0.3f, 0.5f, 0.9f}) {
    const auto mask = dropped(run_dropout(x, p, kSeed, 12345));
    double kept = 0;
    for (auto d : mask) kept += !d;
    EXPECT_NEAR(kept, n * (1.0 - p), 6 * std::sqrt(n * p * (1.0 - p))) << "p=" << p;
  }
}

TEST(DropoutStatistics, ReproducibleFromSeedAndOffset) {
  const int n = 20011;
  const float p = 0.4f;
  const auto x = random_values<float>(n, 61, 1.0, 2.0);
  const auto first = run_dropout(x, p, kSeed, 500);
  expect_equal(run_dropout(x, p, kSeed, 500), first, "same seed and offset");
  // Element i at offset 500 + i: starting 1000 elements later with offset
  // 1500 gives the same tail.
  const std::vector<float> tail(x.begin() + 1000, x.end());
  expect_equal(run_dropout(tail, p, kSeed, 1500), std::vector<float>(first.begin() + 1000, first.end()),
               "shifted offset");
  // The host mask is the kernel's, bit for bit.
  std::vector<std::uint8_t> host(n);
  for (int i = 0; i < n; ++i) host[i] = !dropout_keep_host(static_cast<std::uint64_t>(kSeed), 500u + i, p);
  expect_equal(dropped(first), host, "kernel mask vs host Philox");
}

TEST(DropoutStatistics, AnotherSeedGivesAnotherMask) {
  // Two independent masks disagree on each element with probability
  // q = 2 p (1 - p); the count of disagreements is Binomial(n, q), at least
  // n q - 6 sqrt(n q (1 - q)) except with probability < 1e-9. The seeds differ
  // only in the high key word.
  const int n = 20011;
  const float p = 0.3f;
  const auto x = random_values<float>(n, 71, 1.0, 2.0);
  const auto a = dropped(run_dropout(x, p, kSeed, 0));
  const auto b = dropped(run_dropout(x, p, kSeed + (std::int64_t{1} << 32), 0));
  double differ = 0;
  for (int i = 0; i < n; ++i) differ += a[i] != b[i];
  const double q = 2.0 * p * (1 - p);
  EXPECT_GE(differ, n * q - 6 * std::sqrt(n * q * (1 - q)));
}

}  // namespace
