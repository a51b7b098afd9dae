// Layer norm forward against its double reference: y, the row means and the
// row rstds, for f32, f16 and bf16, over row lengths below, at, and past one
// column tile (and not multiples of it), odd row counts, and inputs far from
// zero mean, where computing the variance as E[x^2] - E[x]^2 would fail.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/layer_norm.hpp"

namespace {

namespace kl = kiln;
namespace kk = kiln::kernels;
using kiln::test::expect_within;
using kiln::test::random_values;

constexpr float kEps = 1e-5f;

// x uniform in [offset - spread, offset + spread], weight in [0.5, 1.5], bias
// in [-1, 1], all seeded.
template <class C>
struct Inputs {
  std::vector<C> x, weight, bias;
};

template <class C>
Inputs<C> make_inputs(std::int64_t rows, std::int64_t n, double offset, double spread, std::uint64_t seed) {
  return {random_values<C>(static_cast<std::size_t>(rows * n), seed, offset - spread, offset + spread),
          random_values<C>(static_cast<std::size_t>(n), seed + 1, 0.5, 1.5),
          random_values<C>(static_cast<std::size_t>(n), seed + 2, -1, 1)};
}

// Runs `launch` (which fills y, mean, rstd) and checks all three against the
// reference within layer_norm_error_bounds for column tile `block`.
template <class C, class Launch>
void check_forward(const Inputs<C>& in, std::int64_t rows, std::int64_t n, int block, Launch launch) {
  auto x = kl::Buffer<C>::from(in.x);
  auto weight = kl::Buffer<C>::from(in.weight);
  auto bias = kl::Buffer<C>::from(in.bias);
  kl::Buffer<C> y(in.x.size());
  kl::Buffer<float> mean(static_cast<std::size_t>(rows)), rstd(static_cast<std::size_t>(rows));
  launch(x, weight, bias, y, mean, rstd);
  const auto ref = kk::layer_norm_reference(in.x, in.weight, in.bias, rows, n, kEps);
  const auto bounds = kk::layer_norm_error_bounds(in.x, in.weight, in.bias, ref, rows, n, block, kl::dtype_v<C>);
  const std::string shape = "rows=" + std::to_string(rows) + " n=" + std::to_string(n);
  expect_within(y.to_host(), ref.y, bounds.y, ("y " + shape).c_str());
  expect_within(mean.to_host(), ref.mean, bounds.mean, ("mean " + shape).c_str());
  expect_within(rstd.to_host(), ref.rstd, bounds.rstd, ("rstd " + shape).c_str());
}

template <class C>
class LayerNormForward : public ::testing::Test {};
using NormTypes = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(LayerNormForward, NormTypes, kiln::test::DTypeNames);

// The host's tile choice: one tile for n up to 4096 (1, 5 and 1000 leave most
// of it masked, 256 fills it), two 4096-wide tiles for 5000.
TYPED_TEST(LayerNormForward, MatchesReferenceWithTheChosenTile) {
  using C = TypeParam;
  struct Shape {
    std::int64_t rows, n;
  };
  for (Shape s : {Shape{1, 1}, Shape{7, 5}, Shape{3, 256}, Shape{5, 1000}, Shape{3, 5000}}) {
    const auto in = make_inputs<C>(s.rows, s.n, 4, 2, 11 + s.n);
    check_forward(in, s.rows, s.n, kk::norm_block_size(s.n),
                  [&](auto&... buffers) { kk::layer_norm_forward_launch<C>(buffers..., s.rows, s.n, kEps); });
  }
}

// A 16-wide tile walks rows of 17, 37 and 100 in 2 to 7 tiles with a masked
// tail, exercising the merge of per-tile statistics.
TYPED_TEST(LayerNormForward, MergesStatisticsOverManyTiles) {
  using C = TypeParam;
  constexpr int kBlock = 16;
  auto kernel = kl::compile<kk::layer_norm_forward<kl::Scalar<C>, kBlock>>();
  for (std::int64_t n : {1, 16, 17, 37, 100}) {
    const std::int64_t rows = 9;
    const auto in = make_inputs<C>(rows, n, -3, 1, 5 + n);
    check_forward(in, rows, n, kBlock,
                  [&](auto&... buffers) { kernel.launch(kl::Grid(static_cast<int>(rows)), buffers..., n, kEps); });
  }
}

// Values 1000 +- 1: var = E[x^2] - E[x]^2 in f32 loses every digit of the
// variance (x^2 ~ 1e6 has an ulp of 0.0625 against a variance of 1/3), far
// beyond the bound, which allows a mean error of (n + 8) 2^-24 * 1001.
TEST(LayerNormForwardFarFromZero, VarianceIsComputedFromCentredValues) {
  for (std::int64_t n : {64, 300}) {
    const std::int64_t rows = 9;
    const auto in = make_inputs<float>(rows, n, 1000, 1, 3 + n);
    check_forward(in, rows, n, kk::norm_block_size(n),
                  [&](auto&... buffers) { kk::layer_norm_forward_launch<float>(buffers..., rows, n, kEps); });
  }
}

}  // namespace
