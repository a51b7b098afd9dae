// Correctness of conv2d + batchnorm + SiLU through launch_conv2d, the plan
// dispatch the registry uses: the fused kernel with the tiles plan_conv2d
// picks (automatic and each requested variant), and the unfused sequence
// (raw convolution, batchnorm kernel, SiLU kernel) against the double
// reference in f32, f16 and bf16, and its traffic against the fused kernel's.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/conv2d_problem.hpp"
#include "kiln/kernels/conv2d_unfused.hpp"

namespace {

namespace kl = kiln;
namespace kk = kiln::kernels;
using kiln::test::expect_within;
using kk::Conv2dVariant;

/// {n, c, h, w, k, r, s, stride, pad, dilation, groups}
const std::vector<kk::Conv2dShape> layers = {
    {2, 3, 9, 7, 20, 3, 3, 1, 1, 1, 1},   // auto: gemm, terms in order (c = 3)
    {1, 34, 5, 6, 17, 3, 3, 1, 1, 1, 1},  // auto: gemm, taps outer (c = 34)
    {1, 33, 9, 9, 70, 3, 3, 1, 1, 1, 1},  // auto: gemm, taps outer, 64-channel tiles (k = 70)
    {1, 5, 9, 9, 66, 3, 3, 1, 1, 1, 1},   // auto: gemm, terms in order, 64-channel tiles (k = 66)
    {2, 5, 7, 9, 6, 3, 3, 2, 1, 2, 1},    // auto: tiled (k = 6), stride 2, dilation 2
    {3, 4, 6, 5, 2, 1, 1, 1, 0, 1, 1},    // auto: scalar (k = 2), 1x1
    {2, 6, 8, 7, 12, 3, 3, 1, 1, 1, 3},   // auto: scalar (3 groups)
};

/// Requests for each layer: automatic, then each variant that can run it.
std::vector<std::optional<Conv2dVariant>> requests_for(const kk::Conv2dShape& shape) {
  std::vector<std::optional<Conv2dVariant>> out{std::nullopt};
  for (Conv2dVariant v : {Conv2dVariant::scalar, Conv2dVariant::tiled, Conv2dVariant::gemm})
    if (kk::conv2d_unsupported_reason(v, shape).empty()) out.push_back(v);
  return out;
}

template <class T>
class Conv2dPlanned : public ::testing::Test {};
using Dtypes = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(Conv2dPlanned, Dtypes, kiln::test::DTypeNames);

TYPED_TEST(Conv2dPlanned, FusedAndUnfusedMatchTheReferenceForEveryPlan) {
  using T = TypeParam;
  std::uint64_t seed = 300;
  for (const kk::Conv2dShape& shape : layers) {
    const auto problem = kk::conv2d_random_problem<T>(shape, ++seed);
    const auto ref = kk::conv2d_bn_silu_reference(problem.x, problem.w, problem.bn.scale, problem.bn.shift, shape);
    // Fused: the bound of conv2d_error_bound; unfused: plus the roundings of
    // the conv and batchnorm outputs to T.
    const auto fused_bound = kk::conv2d_error_bound(ref, shape.reduction(), kl::dtype_v<T>);
    const auto unfused_bound = kk::conv2d_error_bound(ref, shape.reduction(), kl::dtype_v<T>, true);
    auto x = kl::Buffer<T>::from(problem.x), w = kl::Buffer<T>::from(problem.w);
    auto scale = kl::Buffer<float>::from(problem.bn.scale), shift = kl::Buffer<float>::from(problem.bn.shift);
    const auto size = static_cast<std::size_t>(shape.output_size());
    // Several compute-unit counts, so that every tile size of each variant
    // runs (the k = 66 and 70 layers: 128, 64 and 16 positions beside 64
    // channels).
    for (int units : {1, 3, 64})
      for (const auto& request : requests_for(shape)) {
        const kk::Conv2dPlan plan = kk::plan_conv2d(shape, units, request);
        SCOPED_TRACE(shape.to_string() + " units=" + std::to_string(units) + " " + kk::conv2d_plan_summary(plan));
        kl::Buffer<T> y(size), conv_out(size), bn_out(size), y_unfused(size);
        const auto fused_stats = kk::launch_conv2d(plan, shape, x, w, scale, shift, y);
        const auto unfused_stats =
            kk::launch_conv2d_unfused(plan, shape, x, w, scale, shift, conv_out, bn_out, y_unfused);
        expect_within(y.to_host(), ref.y, fused_bound, "fused vs reference");
        expect_within(y_unfused.to_host(), ref.y, unfused_bound, "unfused vs reference");
        // The unfused sequence writes the output three times (conv, batchnorm,
        // SiLU) and reads the two intermediates back. A GPU does not count
        // the bytes its launches move.
        if (y.device().kind() == kl::Device::Kind::cuda) continue;
        const std::uint64_t out_bytes = size * sizeof(T);
        EXPECT_EQ(fused_stats.bytes_written, out_bytes);
        EXPECT_EQ(unfused_stats.bytes_written, 3 * out_bytes);
        // The emu counts every thread's loads, copies of replicated elements
        // (a scalar, a tile over more threads than elements) included, so
        // only the cpu device's count of elements compares the two reads.
        if (y.device().kind() == kl::Device::Kind::cpu) {
          EXPECT_GT(unfused_stats.bytes_read, fused_stats.bytes_read + out_bytes);
        }
      }
  }
}

}  // namespace
