// Software pipelining of loads whose pointers a loop carries: Triton's
// tutorial matmul (tests/carried_pointer_kernels.hpp), whose K loop advances
// its pointer tiles by BLOCK_K * stride, at 1 to 4 stages for f16 inputs and
// f32 inputs rounded to tf32, with tails in M, N and K, K shorter than the
// stages' tiles, and B stored row- or column-major: within the inner-product
// bound of the double reference, and bit for bit the unpipelined program's
// result (the products are summed in the same order). The correctness
// binary runs again on the emu device (emu.*), through the GPU code
// generator and its cp.async.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "carried_pointer_kernels.hpp"
#include "kiln/ir/op_schema.hpp"
#include "op_counts.hpp"
#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::count_ops;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::inner_products;
using kiln::test::InnerProducts;
using kiln::test::random_values;
using kiln::test::carried::carried_offset_matmul;
using kiln::test::carried::tutorial_matmul;

kl::CompileOptions stages(int num_stages) {
  kl::CompileOptions options;
  options.num_stages = num_stages;
  return options;
}

/// The host element type of kernel dtype In.
template <class In>
using Host = typename In::storage_type;

/// B's storage: row-major (k x n) or column-major (its transpose, n x k).
enum class BOrder { row_major, column_major };

/// Per-element error bounds of an f32-accumulated inner product of k terms:
/// gamma_k of sum |a b| for the f32 sums (and the double reference's own),
/// plus 2^-10 per product when the inputs are rounded to tf32 first.
std::vector<double> bounds(const InnerProducts& want, int k, kl::Precision precision) {
  const double per_product = precision == kl::Precision::tf32 ? 0x1p-10 : 0.0;
  std::vector<double> bound;
  for (double magnitude : want.magnitudes)
    bound.push_back((gamma_bound(k, 0x1p-24) + gamma_bound(k, 0x1p-53) + per_product) * magnitude);
  return bound;
}

template <class In, int BM, int BN, int BK, kl::Precision PR>
void expect_every_depth_agrees(int m, int n, int k, BOrder order) {
  using C = Host<In>;
  const auto a = random_values<C>(static_cast<std::size_t>(m) * k, 91 + m + k);
  const auto b = random_values<C>(static_cast<std::size_t>(k) * n, 92 + n + k);
  auto ba = kl::Buffer<C>::from(a), bb = kl::Buffer<C>::from(b);
  const bool rows = order == BOrder::row_major;
  const int stride_bk = rows ? n : 1, stride_bn = rows ? 1 : k;
  const InnerProducts want =
      inner_products(a, b, m, n, k, static_cast<std::size_t>(stride_bk), static_cast<std::size_t>(stride_bn));
  const std::vector<double> bound = bounds(want, k, PR);
  std::vector<float> unpipelined;
  for (int depth = 1; depth <= 4; ++depth) {
    const std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                             (rows ? "" : " (B column-major)") + " at " + std::to_string(depth) + " stages";
    auto out = kl::Buffer<float>::from(random_values<float>(static_cast<std::size_t>(m) * n, 93));
    auto compiled = kl::compile<tutorial_matmul<In, BM, BN, BK, PR>>(stages(depth));
    EXPECT_EQ(count_ops(compiled.program().optimized(), kiln::ir::OpCode::async_copy), depth > 1 ? 2 * depth : 0)
        << what;
    compiled.launch(kl::Grid(kl::cdiv(m, BM), kl::cdiv(n, BN)), ba, bb, out, m, n, k, k, 1, stride_bk, stride_bn, n);
    const std::vector<float> got = out.to_host();
    expect_within(got, want.sums, bound, what.c_str());
    if (depth == 1) unpipelined = got;
    else EXPECT_EQ(got, unpipelined) << what << " differs from the unpipelined program";
  }
}

TEST(CarriedPipeline, F16WithTailsInEveryDimension) {
  expect_every_depth_agrees<kl::f16, 64, 32, 32, kl::Precision::ieee>(70, 40, 100, BOrder::row_major);
  expect_every_depth_agrees<kl::f16, 32, 32, 32, kl::Precision::ieee>(37, 29, 45, BOrder::column_major);
}

TEST(CarriedPipeline, F32AtTf32WithTailsInEveryDimension) {
  expect_every_depth_agrees<kl::f32, 32, 32, 32, kl::Precision::tf32>(37, 29, 45, BOrder::row_major);
  expect_every_depth_agrees<kl::f32, 64, 32, 16, kl::Precision::tf32>(65, 33, 80, BOrder::column_major);
}

TEST(CarriedPipeline, KShorterThanTheStagesTiles) {
  expect_every_depth_agrees<kl::f16, 32, 32, 32, kl::Precision::ieee>(33, 17, 10, BOrder::row_major);
  expect_every_depth_agrees<kl::f16, 32, 32, 32, kl::Precision::ieee>(20, 20, 32, BOrder::row_major);
  expect_every_depth_agrees<kl::f32, 32, 32, 32, kl::Precision::tf32>(20, 24, 50, BOrder::column_major);
}

TEST(CarriedPipeline, ACarriedKOffsetInTheMasksIsAdvancedToo) {
  const int m = 45, n = 38, k = 70;
  const auto a = random_values<kl::half>(static_cast<std::size_t>(m) * k, 94);
  const auto b = random_values<kl::half>(static_cast<std::size_t>(k) * n, 95);
  auto ba = kl::Buffer<kl::half>::from(a), bb = kl::Buffer<kl::half>::from(b);
  const InnerProducts want = inner_products(a, b, m, n, k, static_cast<std::size_t>(n), 1);
  const std::vector<double> bound = bounds(want, k, kl::Precision::ieee);
  std::vector<float> unpipelined;
  for (int depth = 1; depth <= 4; ++depth) {
    const std::string what = "carried K offset at " + std::to_string(depth) + " stages";
    auto out = kl::Buffer<float>::from(random_values<float>(static_cast<std::size_t>(m) * n, 96));
    auto compiled = kl::compile<carried_offset_matmul<kl::f16, 32, 32, 32>>(stages(depth));
    EXPECT_EQ(count_ops(compiled.program().optimized(), kiln::ir::OpCode::load), depth > 1 ? 0 : 2) << what;
    compiled.launch(kl::Grid(kl::cdiv(m, 32), kl::cdiv(n, 32)), ba, bb, out, m, n, k);
    const std::vector<float> got = out.to_host();
    expect_within(got, want.sums, bound, what.c_str());
    if (depth == 1) unpipelined = got;
    else EXPECT_EQ(got, unpipelined) << what << " differs from the unpipelined program";
  }
}

TEST(CarriedPipeline, AnF32DotAtIeeePrecisionKeepsItsLoads) {
  auto compiled = kl::compile<tutorial_matmul<kl::f32, 64, 64, 32, kl::Precision::ieee>>(stages(3));
  EXPECT_EQ(count_ops(compiled.program().optimized(), kiln::ir::OpCode::local_alloc), 0);
  EXPECT_EQ(count_ops(compiled.program().optimized(), kiln::ir::OpCode::load), 2);
}

}  // namespace
