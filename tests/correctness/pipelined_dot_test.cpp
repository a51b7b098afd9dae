// Software pipelining (num_stages) on every device: a tiled matmul whose K
// loop the pipeliner rewrites into copies issued num_stages - 1 iterations
// ahead gives, at 1 to 4 stages and for every dtype tensor cores take (f16,
// bf16, i8, f32 at tf32), results within the inner-product bound of the
// double reference (i8 exactly) and bit for bit the result of the
// unpipelined program (the products are summed in the same order), with
// tails in M, N and K and with K shorter than the stages' tiles, and with
// the K loop unrolled; its optimized IR holds the ring ops the stages ask for.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/ir/op_schema.hpp"
#include "op_counts.hpp"
#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::count_ops;
using kiln::test::dot_accumulator_t;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::inner_products;
using kiln::test::InnerProducts;
using kiln::test::random_values;
template <class T>
using P = kl::Ptr<kl::Scalar<T>>;

// C = A @ B for row-major A (M x K), B (K x N) and C (M x N), accumulated in
// Acc (i32 for i8 inputs, else f32) at precision PR, the K loop unrolled
// UNROLL times.
template <class C, class Acc, int BM, int BN, int BK, kl::Precision PR, int UNROLL = 1>
void matmul(P<C> a, P<C> b, P<Acc> c, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BN + kl::arange<BN>());
  auto k_across = kl::expand_dims<0>(kl::arange<BK>());
  auto k_down = kl::expand_dims<1>(kl::arange<BK>());
  kl::Var acc = kl::zeros<kl::Scalar<Acc>, BM, BN>();
  for (auto k0 : kl::range(0, k, BK, {.unroll = UNROLL})) {
    auto ta = kl::load(a + rows * k + (k0 + k_across), (rows < m) & (k0 + k_across < k));
    auto tb = kl::load(b + (k0 + k_down) * n + cols, (k0 + k_down < k) & (cols < n));
    acc = kl::dot(ta, tb, acc, {.precision = PR});
  }
  kl::store(c + rows * n + cols, acc, (rows < m) & (cols < n));
}

/// The precision each input dtype is pipelined at: f32 rounded to tf32 (an
/// f32 dot at ieee precision is not pipelined).
template <class C>
constexpr kl::Precision kPrecision = std::is_same_v<C, float> ? kl::Precision::tf32 : kl::Precision::ieee;

kl::CompileOptions stages(int num_stages) {
  kl::CompileOptions options;
  options.num_stages = num_stages;
  return options;
}

template <class C>
class PipelinedDot : public ::testing::Test {};
using PipelinedTypes = ::testing::Types<float, kl::half, kl::bfloat16, std::int8_t>;
TYPED_TEST_SUITE(PipelinedDot, PipelinedTypes, kiln::test::DTypeNames);

template <class C, int BM, int BN, int BK>
void expect_every_depth_agrees(int m, int n, int k) {
  const auto a = random_values<C>(static_cast<std::size_t>(m) * k, 71 + m + k);
  const auto b = random_values<C>(static_cast<std::size_t>(k) * n, 72 + n + k);
  auto ba = kl::Buffer<C>::from(a), bb = kl::Buffer<C>::from(b);
  // Inner products of k terms within gamma_k of the exact value (plus the
  // double reference's own), relative to sum |a b|; tf32 rounds each input
  // to 11 significant bits first, so each product is off by up to 2^-10 more.
  // i8 into i32 is exact.
  const double per_product = kPrecision<C> == kl::Precision::tf32 ? 0x1p-10 : 0.0;
  const InnerProducts want = inner_products(a, b, m, n, k, static_cast<std::size_t>(n), 1);
  std::vector<double> bound;
  for (double magnitude : want.magnitudes)
    bound.push_back(
        std::is_integral_v<C> ? 0.0 : (gamma_bound(k, 0x1p-24) + gamma_bound(k, 0x1p-53) + per_product) * magnitude);
  std::vector<dot_accumulator_t<C>> unpipelined;
  for (int depth = 1; depth <= 4; ++depth) {
    const std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " at " +
                             std::to_string(depth) + " stages";
    auto out = kl::Buffer<dot_accumulator_t<C>>::from(
        random_values<dot_accumulator_t<C>>(static_cast<std::size_t>(m) * n, 73));
    kl::compile<matmul<C, dot_accumulator_t<C>, BM, BN, BK, kPrecision<C>>>(stages(depth))
        .launch(kl::Grid(kl::cdiv(m, BM), kl::cdiv(n, BN)), ba, bb, out, m, n, k);
    const std::vector<dot_accumulator_t<C>> got = out.to_host();
    expect_within(got, want.sums, bound, what.c_str());
    if (depth == 1) unpipelined = got;
    else EXPECT_EQ(got, unpipelined) << what << " differs from the unpipelined program";
  }
}

TYPED_TEST(PipelinedDot, EveryDepthAgreesWithTailsInEveryDimension) {
  expect_every_depth_agrees<TypeParam, 32, 32, 32>(37, 29, 45);
  expect_every_depth_agrees<TypeParam, 64, 32, 32>(70, 40, 100);
}

TYPED_TEST(PipelinedDot, KShorterThanTheStagesTiles) {
  expect_every_depth_agrees<TypeParam, 32, 32, 32>(33, 17, 10);
  expect_every_depth_agrees<TypeParam, 32, 32, 32>(20, 20, 32);
}

// An unrolled K loop at 64 x 64 tiles, where a dot on tensor cores splits
// its 4 warps 2 x 2: the dots of the unrolled loop and of the loop for the
// remaining iterations hold the accumulator in one layout, and each element
// sums its products in the same order as without unrolling, so the results
// are bit for bit the rolled loop's (K = 5 tiles and a tail: 2 and 1 whole
// groups, then the rest).
TYPED_TEST(PipelinedDot, UnrolledKLoopsGiveTheRolledLoopsResults) {
  using C = TypeParam;
  using Acc = dot_accumulator_t<C>;
  constexpr int BM = 64, BN = 64, BK = 32;
  const int m = 70, n = 72, k = 5 * BK + 7;
  auto ba = kl::Buffer<C>::from(random_values<C>(static_cast<std::size_t>(m) * k, 74));
  auto bb = kl::Buffer<C>::from(random_values<C>(static_cast<std::size_t>(k) * n, 75));
  auto product = [&]<int UNROLL>() {
    auto out = kl::Buffer<Acc>::from(random_values<Acc>(static_cast<std::size_t>(m) * n, 76));
    kl::compile<matmul<C, Acc, BM, BN, BK, kPrecision<C>, UNROLL>>(stages(3)).launch(
        kl::Grid(kl::cdiv(m, BM), kl::cdiv(n, BN)), ba, bb, out, m, n, k);
    return out.to_host();
  };
  const std::vector<Acc> rolled = product.template operator()<1>();
  EXPECT_EQ(product.template operator()<2>(), rolled) << "unrolled twice";
  EXPECT_EQ(product.template operator()<3>(), rolled) << "unrolled three times";
}

TEST(PipelinedDot, TheOptimizedProgramHoldsARingPerOperand) {
  using kiln::ir::OpCode;
  for (int depth = 1; depth <= 4; ++depth) {
    auto compiled = kl::compile<matmul<kl::half, float, 64, 64, 32, kl::Precision::ieee>>(stages(depth));
    const kiln::ir::Function& fn = compiled.program().optimized();
    const bool pipelined = depth > 1;
    EXPECT_EQ(count_ops(fn, OpCode::local_alloc), pipelined ? 2 : 0) << depth;
    EXPECT_EQ(count_ops(fn, OpCode::load), pipelined ? 0 : 2) << depth;
    EXPECT_EQ(count_ops(fn, OpCode::local_load), pipelined ? 2 : 0) << depth;
    // depth - 1 iterations before the loop and one in each, two copies each.
    EXPECT_EQ(count_ops(fn, OpCode::async_copy), pipelined ? 2 * depth : 0) << depth;
    EXPECT_EQ(count_ops(fn, OpCode::async_commit), pipelined ? depth : 0) << depth;
    EXPECT_EQ(count_ops(fn, OpCode::async_wait), pipelined ? 2 : 0) << depth;
    // One in the loop, one after it.
    EXPECT_EQ(count_ops(fn, OpCode::barrier), pipelined ? 2 : 0) << depth;
  }
}

TEST(PipelinedDot, AnF32DotAtIeeePrecisionKeepsItsLoads) {
  auto compiled = kl::compile<matmul<float, float, 64, 64, 32, kl::Precision::ieee>>(stages(3));
  EXPECT_EQ(count_ops(compiled.program().optimized(), kiln::ir::OpCode::local_alloc), 0);
  EXPECT_EQ(count_ops(compiled.program().optimized(), kiln::ir::OpCode::load), 2);
}

}  // namespace
