// kl::range's options on every device. `unroll`: loops carrying a float tile
// and an i32 tile over runtime bounds (zero trips, hi below lo, 1, U-1, U,
// U+1 and many trips, negative bounds, steps above 1, nested unrolled loops)
// give bit for bit what the loop without unrolling gives, and that matches a
// C++ reference. `num_stages`: of two dot loops in one kernel, the one asking
// for 1 stage keeps its loads while the other is pipelined (and the reverse,
// when the kernel's num_stages is 1), with the same results as the program
// with no pipelining; an unrolled dot loop is pipelined in its main part.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "op_counts.hpp"
#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::count_ops;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::inner_products;
using kiln::test::random_values;

constexpr int kRows = 8, kLanes = 16;

// Per lane: sum = sum * 0.75 + x[row(k)], hash = hash * 31 + k + lane, for
// k = lo, lo + step, … below hi; row(k) = k mod 8, also for negative k.
template <int UNROLL>
void carried(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> sums, kl::Ptr<kl::i32> hashes, kl::i32 lo, kl::i32 hi, kl::i32 step) {
  auto lanes = kl::arange<kLanes>();
  kl::Var sum = kl::zeros<kl::f32, kLanes>();
  kl::Var hash = kl::zeros<kl::i32, kLanes>();
  for (auto k : kl::range(lo, hi, step, {.unroll = UNROLL})) {
    auto row = (k % kRows + kRows) % kRows;
    sum = sum * 0.75f + kl::load(x + row * kLanes + lanes);
    hash = hash * 31 + (k + lanes);
  }
  kl::store(sums + lanes, sum);
  kl::store(hashes + lanes, hash);
}

// The same over a triangle: for o below n (by 1), for k from o below n + 5 (by 2).
template <int OUTER, int INNER>
void nested(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> sums, kl::Ptr<kl::i32> hashes, kl::i32 n) {
  auto lanes = kl::arange<kLanes>();
  kl::Var sum = kl::zeros<kl::f32, kLanes>();
  kl::Var hash = kl::zeros<kl::i32, kLanes>();
  for (auto o : kl::range(0, n, 1, {.unroll = OUTER}))
    for (auto k : kl::range(o, n + 5, 2, {.unroll = INNER})) {
      sum = sum * 0.75f + kl::load(x + (k % kRows) * kLanes + lanes);
      hash = hash * 31 + (k + lanes);
    }
  kl::store(sums + lanes, sum);
  kl::store(hashes + lanes, hash);
}

struct Carried {
  std::vector<float> sums;
  std::vector<std::int32_t> hashes;
};

template <auto Kernel, class... Bounds>
Carried run(const kl::Buffer<float>& x, Bounds... bounds) {
  auto sums = kl::Buffer<float>::from(random_values<float>(kLanes, 5));
  auto hashes = kl::Buffer<std::int32_t>::from(random_values<std::int32_t>(kLanes, 6));
  kl::compile<Kernel>().launch(kl::Grid(1), x, sums, hashes, bounds...);
  return {sums.to_host(), hashes.to_host()};
}

/// The reference of `carried` over the iterations `ks`, checked against `got`.
void expect_reference(const Carried& got, const std::vector<float>& x, const std::vector<std::int64_t>& ks,
                      const std::string& what) {
  std::vector<double> sums, bounds;
  std::vector<std::int32_t> hashes;
  for (int lane = 0; lane < kLanes; ++lane) {
    double sum = 0, magnitude = 0;
    std::uint64_t hash = 0;
    for (std::int64_t k : ks) {
      const double term = x[static_cast<std::size_t>(((k % kRows + kRows) % kRows) * kLanes + lane)];
      sum = sum * 0.75 + term;
      magnitude = magnitude * 0.75 + std::abs(term);
      hash = hash * 31 + static_cast<std::uint64_t>(k + lane);
    }
    sums.push_back(sum);
    // Two roundings (product, sum) per iteration, each relative to what the
    // magnitudes add up to.
    bounds.push_back(gamma_bound(2.0 * static_cast<double>(ks.size()), 0x1p-24) * magnitude);
    hashes.push_back(kiln::test::wrap<std::int32_t>(hash));
  }
  expect_within(got.sums, sums, bounds, what.c_str());
  EXPECT_EQ(got.hashes, hashes) << what;
}

template <int UNROLL>
void expect_unrolled_matches(const kl::Buffer<float>& x, const std::vector<float>& host,
                             const std::vector<std::tuple<int, int, int>>& cases) {
  for (const auto& [lo, hi, step] : cases) {
    const std::string what = "unroll " + std::to_string(UNROLL) + ", range(" + std::to_string(lo) + ", " +
                             std::to_string(hi) + ", " + std::to_string(step) + ")";
    const Carried got = run<carried<UNROLL>>(x, lo, hi, step);
    const Carried plain = run<carried<1>>(x, lo, hi, step);
    EXPECT_EQ(got.sums, plain.sums) << what;
    EXPECT_EQ(got.hashes, plain.hashes) << what;
    std::vector<std::int64_t> ks;
    for (std::int64_t k = lo; k < hi; k += step) ks.push_back(k);
    expect_reference(got, host, ks, what);
  }
}

/// Zero trips (empty and reversed), 1, U-1, U, U+1 and many trips, from
/// negative starts and with steps above 1, then random bounds.
template <int U>
std::vector<std::tuple<int, int, int>> trip_cases(std::uint32_t seed) {
  std::vector<std::tuple<int, int, int>> cases = {{5, 5, 1},           {9, -4, 2},         {-3, -2, 1},
                                                  {-3, -3 + U - 1, 1}, {0, 3 * U, 3},      {-7, -7 + U + 1, 1},
                                                  {-1000, 997, 7},     {-20, 1 + 2 * U, 4}};
  std::mt19937 rng(seed);
  for (int i = 0; i < 3; ++i)
    cases.emplace_back(std::uniform_int_distribution(-60, 60)(rng), std::uniform_int_distribution(-20, 140)(rng),
                       std::uniform_int_distribution(1, 9)(rng));
  return cases;
}

TEST(UnrolledRange, CarriedValuesMatchTheLoopWithoutUnrolling) {
  const std::vector<float> host = random_values<float>(kRows * kLanes, 91);
  const auto x = kl::Buffer<float>::from(host);
  expect_unrolled_matches<2>(x, host, trip_cases<2>(92));
  expect_unrolled_matches<3>(x, host, trip_cases<3>(93));
  expect_unrolled_matches<8>(x, host, trip_cases<8>(94));
}

TEST(UnrolledRange, NestedUnrolledLoopsMatchTheLoopsWithoutUnrolling) {
  const std::vector<float> host = random_values<float>(kRows * kLanes, 95);
  const auto x = kl::Buffer<float>::from(host);
  for (int n : {0, 1, 4, 7}) {
    const Carried got = run<nested<2, 3>>(x, n);
    const Carried plain = run<nested<1, 1>>(x, n);
    EXPECT_EQ(got.sums, plain.sums) << n;
    EXPECT_EQ(got.hashes, plain.hashes) << n;
    std::vector<std::int64_t> ks;
    for (std::int64_t o = 0; o < n; ++o)
      for (std::int64_t k = o; k < n + 5; k += 2) ks.push_back(k);
    expect_reference(got, host, ks, "nested, n = " + std::to_string(n));
  }
}

// ---- num_stages per loop ----------------------------------------------------

constexpr int kBlock = 32;
using P16 = kl::Ptr<kl::Scalar<kl::half>>;
using P32 = kl::Ptr<kl::f32>;

/// A loop's options: `stages` (0: the kernel's) and `unroll`.
constexpr kl::LoopOptions loop(int stages, int unroll = 1) {
  kl::LoopOptions options{.unroll = unroll};
  if (stages > 0) options.num_stages = stages;
  return options;
}

// C = A @ B twice, into `first` and `second`, by one K loop each.
template <int FIRST_STAGES, int SECOND_STAGES, int SECOND_UNROLL>
void two_products(P16 a, P16 b, P32 first, P32 second, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * kBlock + kl::arange<kBlock>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * kBlock + kl::arange<kBlock>());
  auto k_across = kl::expand_dims<0>(kl::arange<kBlock>());
  auto k_down = kl::expand_dims<1>(kl::arange<kBlock>());
  auto product = [&](kl::LoopOptions options) {
    kl::Var acc = kl::zeros<kl::f32, kBlock, kBlock>();
    for (auto k0 : kl::range(0, k, kBlock, options)) {
      auto ta = kl::load(a + rows * k + (k0 + k_across), (rows < m) & (k0 + k_across < k));
      auto tb = kl::load(b + (k0 + k_down) * n + cols, (k0 + k_down < k) & (cols < n));
      acc = kl::dot(ta, tb, acc);
    }
    return kl::Tile<kl::f32, kBlock, kBlock>(acc);
  };
  kl::store(first + rows * n + cols, product(loop(FIRST_STAGES)), (rows < m) & (cols < n));
  kl::store(second + rows * n + cols, product(loop(SECOND_STAGES, SECOND_UNROLL)), (rows < m) & (cols < n));
}

struct Rings {
  int allocs, loads, copies;
};

template <auto Kernel>
Rings rings_of(int kernel_stages) {
  using kiln::ir::OpCode;
  kl::CompileOptions options;
  options.num_stages = kernel_stages;
  const kiln::ir::Function& fn = kl::compile<Kernel>(options).program().optimized();
  return {count_ops(fn, OpCode::local_alloc), count_ops(fn, OpCode::load), count_ops(fn, OpCode::async_copy)};
}

TEST(LoopNumStages, OverridesTheKernelsDepthForItsLoopOnly) {
  // Kernel at 3 stages, first loop at 1: its 2 loads stay, the second loop's
  // 2 loads get rings (2 copies ahead of the loop and 1 in it, each).
  const Rings off_first = rings_of<two_products<1, 0, 1>>(3);
  EXPECT_EQ(off_first.allocs, 2);
  EXPECT_EQ(off_first.loads, 2);
  EXPECT_EQ(off_first.copies, 2 * 3);
  // Kernel at 1 stage, first loop at 2: only the first loop is pipelined.
  const Rings on_first = rings_of<two_products<2, 0, 1>>(1);
  EXPECT_EQ(on_first.allocs, 2);
  EXPECT_EQ(on_first.loads, 2);
  EXPECT_EQ(on_first.copies, 2 * 2);
  // The second loop unrolled by 2 at 3 stages: its main loop's 4 loads get
  // rings, the loop for the rest keeps its 2 loads; the first loop is off.
  const Rings unrolled = rings_of<two_products<1, 0, 2>>(3);
  EXPECT_EQ(unrolled.allocs, 4);
  EXPECT_EQ(unrolled.loads, 2 + 2);
  EXPECT_EQ(unrolled.copies, 4 * 3);
}

template <auto Kernel>
void expect_products(int kernel_stages, int m, int n, int k) {
  const auto a = random_values<kl::half>(static_cast<std::size_t>(m) * k, 96 + k);
  const auto b = random_values<kl::half>(static_cast<std::size_t>(k) * n, 97 + k);
  const auto ba = kl::Buffer<kl::half>::from(a), bb = kl::Buffer<kl::half>::from(b);
  const auto init = random_values<float>(static_cast<std::size_t>(m) * n, 98);
  auto first = kl::Buffer<float>::from(init), second = kl::Buffer<float>::from(init);
  auto plain_first = kl::Buffer<float>::from(init), plain_second = kl::Buffer<float>::from(init);
  kl::CompileOptions options, unpipelined;
  options.num_stages = kernel_stages;
  unpipelined.num_stages = 1;
  const kl::Grid grid(kl::cdiv(m, kBlock), kl::cdiv(n, kBlock));
  kl::compile<Kernel>(options).launch(grid, ba, bb, first, second, m, n, k);
  kl::compile<two_products<1, 1, 1>>(unpipelined).launch(grid, ba, bb, plain_first, plain_second, m, n, k);
  const std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  // The same products summed in the same order: the same bits.
  EXPECT_EQ(first.to_host(), plain_first.to_host()) << what;
  EXPECT_EQ(second.to_host(), plain_second.to_host()) << what;
  // Inner products of k f16 products within gamma_k of the exact value.
  const auto want = inner_products(a, b, m, n, k, static_cast<std::size_t>(n), 1);
  std::vector<double> bound;
  for (double magnitude : want.magnitudes) bound.push_back(gamma_bound(k, 0x1p-24) * magnitude);
  expect_within(second.to_host(), want.sums, bound, what.c_str());
}

TEST(LoopNumStages, PipelinedAndUnrolledLoopsGiveTheUnpipelinedResults) {
  expect_products<two_products<1, 0, 1>>(3, 40, 37, 150);
  expect_products<two_products<2, 0, 1>>(1, 40, 37, 150);
  expect_products<two_products<1, 4, 2>>(3, 40, 37, 150);
  expect_products<two_products<1, 0, 2>>(3, 33, 40, 64);
}

}  // namespace
