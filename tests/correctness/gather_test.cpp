// Correctness of gather and histogram from the standard library: gather along
// each axis of 2-D tiles for every dtype (bit for bit, NaN payloads and signed
// zeros included; indices out of range give 0) and with several index dtypes,
// histogram for every integer dtype (values outside the bins not counted).
#include <cstdint>
#include <random>
#include <vector>

#include "prims_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;

constexpr int kPrograms = 2;
constexpr int R = 8, K = 16;  // the source tile
constexpr int M0 = 4;         // index rows for gather along axis 0
constexpr int M1 = 32;        // index columns for gather along axis 1

template <class C, class I>
void gather_kernel(P<C> src, P<I> index0, P<I> index1, P<C> out0, P<C> out1) {
  auto pid = kl::program_id(0);
  auto cols = kl::expand_dims<0>(kl::arange<K>());
  auto s = kl::load(src + pid * (R * K) + kl::expand_dims<1>(kl::arange<R>()) * K + cols);
  auto offsets0 = pid * (M0 * K) + kl::expand_dims<1>(kl::arange<M0>()) * K + cols;
  kl::store(out0 + offsets0, kl::gather(s, kl::load(index0 + offsets0), kl::axis<0>));
  auto offsets1 = pid * (R * M1) + kl::expand_dims<1>(kl::arange<R>()) * M1 + kl::expand_dims<0>(kl::arange<M1>());
  kl::store(out1 + offsets1, kl::gather(s, kl::load(index1 + offsets1), kl::axis<1>));
}

// Indices mostly in [0, n), one in eight outside it (-1 or n, or for unsigned
// types n and n + 5).
template <class I>
std::vector<I> indices(int count, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<I> out(count);
  for (auto& v : out) {
    const int r = static_cast<int>(rng() % (8 * n));
    if (r < 7 * n) v = static_cast<I>(r % n);
    else v = static_cast<I>(std::is_signed_v<I> && r % 2 ? -1 : n + (r % 2) * 5);
  }
  return out;
}

template <class T, class I>
void check_gather(std::uint64_t seed) {
  const double range = kiln::test::is_float_v<T> ? 100 : 1e9;
  const auto src = kiln::test::prims::values_with_specials<T>(kPrograms * R * K, seed, -range, range);
  const auto index0 = indices<I>(kPrograms * M0 * K, R, seed + 1);
  const auto index1 = indices<I>(kPrograms * R * M1, K, seed + 2);
  kl::Buffer<T> out0(index0.size()), out1(index1.size());
  using kiln::test::to_buffer;
  kl::compile<gather_kernel<T, I>>().launch(kl::Grid(kPrograms), to_buffer(src), to_buffer(index0), to_buffer(index1),
                                            out0, out1);
  const T zero = kiln::test::prims::from_bits<T>(0);
  std::vector<T> w0(index0.size()), w1(index1.size());
  for (int p = 0; p < kPrograms; ++p) {
    const int s = p * R * K;
    for (int i = 0; i < M0; ++i)
      for (int j = 0; j < K; ++j) {
        const int at = p * M0 * K + i * K + j;
        const auto row = static_cast<long long>(index0[at]);
        w0[at] = row >= 0 && row < R ? src[s + row * K + j] : zero;
      }
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < M1; ++j) {
        const int at = p * R * M1 + i * M1 + j;
        const auto col = static_cast<long long>(index1[at]);
        w1[at] = col >= 0 && col < K ? src[s + i * K + col] : zero;
      }
  }
  expect_equal(out0.to_host(), w0, "gather along axis 0");
  expect_equal(out1.to_host(), w1, "gather along axis 1");
}

template <class T>
class Gather : public ::testing::Test {};
TYPED_TEST_SUITE(Gather, kiln::test::AllTypes, kiln::test::DTypeNames);

TYPED_TEST(Gather, AlongEachAxisWithI32Indices) { check_gather<TypeParam, std::int32_t>(1101); }

TEST(GatherIndices, EveryIntegerIndexType) {
  check_gather<float, std::int8_t>(1102);
  check_gather<float, std::uint8_t>(1103);
  check_gather<double, std::int16_t>(1104);
  check_gather<double, std::uint32_t>(1105);
  check_gather<kl::half, std::int64_t>(1106);
  check_gather<std::int64_t, std::uint64_t>(1107);
}

constexpr int kValues = 256;

template <class C, int Bins>
void histogram_kernel(P<C> x, kl::Ptr<kl::i32> counts) {
  auto v = kl::load(x + kl::program_id(0) * kValues + kl::arange<kValues>());
  kl::store(counts + kl::program_id(0) * Bins + kl::arange<Bins>(), kl::histogram<Bins>(v));
}

template <class T, int Bins>
void check_histogram(double lo, double hi, std::uint64_t seed) {
  const auto x = kiln::test::random_values<T>(kPrograms * kValues, seed, lo, hi);
  kl::Buffer<std::int32_t> counts(kPrograms * Bins);
  kl::compile<histogram_kernel<T, Bins>>().launch(kl::Grid(kPrograms), kiln::test::to_buffer(x), counts);
  std::vector<std::int32_t> want(kPrograms * Bins, 0);
  for (int p = 0; p < kPrograms; ++p)
    for (int i = 0; i < kValues; ++i) {
      const double v = static_cast<double>(x[p * kValues + i]);
      if (v >= 0 && v < Bins) ++want[p * Bins + static_cast<int>(v)];
    }
  expect_equal(counts.to_host(), want, "histogram");
}

template <class T>
class Histogram : public ::testing::Test {};
TYPED_TEST_SUITE(Histogram, kiln::test::IntTypes, kiln::test::DTypeNames);

// Values in [-8, 24) with 16 bins: about half land outside and are not counted.
TYPED_TEST(Histogram, SixteenBinsSomeValuesOutside) { check_histogram<TypeParam, 16>(-8, 23, 1201); }
TYPED_TEST(Histogram, OneBin) { check_histogram<TypeParam, 1>(-2, 3, 1202); }
TYPED_TEST(Histogram, ValuesFarOutsideTheBins) { check_histogram<TypeParam, 64>(-300, 300, 1203); }

}  // namespace
