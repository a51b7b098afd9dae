// Correctness of the fused conv2d + batchnorm + SiLU kernels on the cpu
// device: the scalar, tiled and implicit-GEMM variants (the latter in both
// orders of its reduction) against the double reference, in f32, f16 and
// bf16, over layers with batch > 1, channel counts that are not multiples of
// the tiles, odd sizes, stride 2, padding, dilation 2, 1x1 and rectangular
// kernels, and (scalar only) grouped and depthwise layers; the variants also
// agree with each other on every layer each supports. Small tiles, so that
// every tail is exercised.
#include <cstdint>
#include <string>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/conv2d_launch.hpp"
#include "kiln/kernels/conv2d_problem.hpp"

namespace {

namespace kl = kiln;
namespace kk = kiln::kernels;
using kiln::test::as_double;
using kiln::test::expect_within;

/// Runs `kernel` for `plan` (whose tile sizes must be the kernel's) on the
/// problem and returns y.
template <class T, class Kernel>
std::vector<T> run_plan(const Kernel& kernel, const kk::Conv2dPlan& plan, const kk::Conv2dProblem<T>& p) {
  auto x = kl::Buffer<T>::from(p.x), w = kl::Buffer<T>::from(p.w);
  auto scale = kl::Buffer<float>::from(p.bn.scale), shift = kl::Buffer<float>::from(p.bn.shift);
  kl::Buffer<T> y(static_cast<std::size_t>(p.shape.output_size()));
  kk::launch_conv2d_kernel(kernel, plan, p.shape, x, w, scale, shift, y);
  return y.to_host();
}

kk::Conv2dPlan plan_of(kk::Conv2dVariant variant, int positions, int channels, int reduction) {
  kk::Conv2dPlan plan;
  plan.variant = variant;
  plan.block_positions = positions;
  plan.block_channels = channels;
  plan.block_reduction = reduction;
  return plan;
}

/// The layers: {n, c, h, w, k, r, s, stride, pad, dilation, groups}.
const std::vector<kk::Conv2dShape> dense_layers = {
    {2, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1},     // c = 3, k = 5, odd h and w, same padding
    {2, 4, 9, 8, 33, 3, 3, 2, 1, 1, 1},    // k = 33 (a channel tail of 1), stride 2
    {3, 5, 6, 7, 17, 1, 1, 1, 0, 1, 1},    // 1x1, batch 3
    {2, 6, 11, 10, 16, 3, 3, 1, 2, 2, 1},  // dilation 2 with padding 2
    {1, 17, 5, 6, 20, 2, 3, 1, 0, 1, 1},   // rectangular 2x3 kernel, reduction 102 (a tail of 6 in 32)
    {2, 3, 13, 12, 8, 5, 5, 2, 2, 1, 1},   // 5x5, stride 2, padding 2
    {1, 40, 6, 5, 18, 3, 3, 1, 1, 1, 1},   // c = 40: a whole and a partial channel step per tap
    {1, 3, 12, 11, 16, 7, 7, 2, 3, 1, 1},  // an RGB stem: 49 taps, more than a step's 32 terms
};
const std::vector<kk::Conv2dShape> grouped_layers = {
    {2, 6, 7, 7, 10, 3, 3, 1, 1, 1, 2},  // 2 groups
    {2, 8, 9, 9, 8, 3, 3, 2, 1, 1, 8},   // depthwise, stride 2
    {3, 4, 5, 8, 8, 3, 3, 1, 1, 2, 4},   // depthwise with multiplier 2, dilation 2
};

template <class T>
class Conv2dBnSilu : public ::testing::Test {};
using Dtypes = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(Conv2dBnSilu, Dtypes, kiln::test::DTypeNames);

/// The per-element bound of kk::conv2d_error_bound for outputs stored as T.
template <class T>
std::vector<double> bound_for(const kk::Conv2dReference& ref, const kk::Conv2dShape& shape) {
  return kk::conv2d_error_bound(ref, shape.reduction(), kl::dtype_v<T>);
}

/// got within bound_a + bound_b of other: both are within their bound of the
/// reference, so by the triangle inequality they are within the sum of the
/// bounds of each other.
template <class T>
void expect_agree(const std::vector<T>& got, const std::vector<T>& other, const std::vector<double>& bound,
                  const char* what) {
  std::vector<double> want(other.size()), twice(bound.size());
  for (std::size_t i = 0; i < other.size(); ++i) {
    want[i] = as_double(other[i]);
    twice[i] = 2 * bound[i];
  }
  expect_within(got, want, twice, what);
}

TYPED_TEST(Conv2dBnSilu, AllVariantsMatchTheReferenceAndEachOtherOnDenseLayers) {
  using T = TypeParam;
  using E = kl::Scalar<T>;
  auto scalar = kl::compile<kk::conv2d_bn_silu<E, 32>>();
  auto tiled = kl::compile<kk::conv2d_bn_silu_tiled<E, 4, 16>>();
  auto gemm = kl::compile<kk::conv2d_bn_silu_gemm<E, 16, 16, 32>>();
  auto gemm_taps_outer = kl::compile<kk::conv2d_bn_silu_gemm<E, 16, 16, 32, true, true>>();
  // The library's widest tile, in both orders: 128 positions x 64 channels
  // at 8 warps (two warpgroups under wgmma).
  auto gemm_wide = kl::compile<kk::conv2d_bn_silu_gemm<E, 128, 64, 32>>({.num_warps = 8});
  auto gemm_wide_taps_outer = kl::compile<kk::conv2d_bn_silu_gemm<E, 128, 64, 32, true, true>>({.num_warps = 8});
  std::uint64_t seed = 100;
  for (const kk::Conv2dShape& shape : dense_layers) {
    SCOPED_TRACE(shape.to_string());
    const auto problem = kk::conv2d_random_problem<T>(shape, ++seed);
    const auto ref = kk::conv2d_bn_silu_reference(problem.x, problem.w, problem.bn.scale, problem.bn.shift, shape);
    const auto bound = bound_for<T>(ref, shape);
    const auto y_scalar = run_plan(scalar, plan_of(kk::Conv2dVariant::scalar, 32, 1, 1), problem);
    const auto y_tiled = run_plan(tiled, plan_of(kk::Conv2dVariant::tiled, 16, 4, 1), problem);
    const auto y_gemm = run_plan(gemm, plan_of(kk::Conv2dVariant::gemm, 16, 16, 32), problem);
    const auto y_gemm_taps_outer = run_plan(gemm_taps_outer, plan_of(kk::Conv2dVariant::gemm, 16, 16, 32), problem);
    const auto y_gemm_wide = run_plan(gemm_wide, plan_of(kk::Conv2dVariant::gemm, 128, 64, 32), problem);
    const auto y_gemm_wide_taps_outer =
        run_plan(gemm_wide_taps_outer, plan_of(kk::Conv2dVariant::gemm, 128, 64, 32), problem);
    expect_within(y_scalar, ref.y, bound, "scalar vs reference");
    expect_within(y_tiled, ref.y, bound, "tiled vs reference");
    expect_within(y_gemm, ref.y, bound, "gemm vs reference");
    expect_within(y_gemm_taps_outer, ref.y, bound, "gemm (taps outer) vs reference");
    expect_within(y_gemm_wide, ref.y, bound, "gemm (128 x 64) vs reference");
    expect_within(y_gemm_wide_taps_outer, ref.y, bound, "gemm (taps outer, 128 x 64) vs reference");
    expect_agree(y_tiled, y_scalar, bound, "tiled vs scalar");
    expect_agree(y_gemm, y_scalar, bound, "gemm vs scalar");
    expect_agree(y_gemm, y_tiled, bound, "gemm vs tiled");
    expect_agree(y_gemm_taps_outer, y_gemm, bound, "gemm (taps outer) vs gemm");
    expect_agree(y_gemm_wide, y_gemm, bound, "gemm (128 x 64) vs 16 x 16");
    expect_agree(y_gemm_wide_taps_outer, y_gemm_taps_outer, bound, "gemm (taps outer, 128 x 64) vs 16 x 16");
  }
}

TYPED_TEST(Conv2dBnSilu, ScalarMatchesTheReferenceOnGroupedAndDepthwiseLayers) {
  using T = TypeParam;
  auto scalar = kl::compile<kk::conv2d_bn_silu<kl::Scalar<T>, 32>>();
  std::uint64_t seed = 200;
  for (const kk::Conv2dShape& shape : grouped_layers) {
    SCOPED_TRACE(shape.to_string());
    const auto problem = kk::conv2d_random_problem<T>(shape, ++seed);
    const auto ref = kk::conv2d_bn_silu_reference(problem.x, problem.w, problem.bn.scale, problem.bn.shift, shape);
    expect_within(run_plan(scalar, plan_of(kk::Conv2dVariant::scalar, 32, 1, 1), problem), ref.y,
                  bound_for<T>(ref, shape), "scalar vs reference");
  }
}

}  // namespace
