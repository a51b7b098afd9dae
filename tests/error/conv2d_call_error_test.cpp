// kiln::kernels::conv2d_bn_silu, the library's one-call convolution on the
// caller's buffers: a bad shape, a buffer of the wrong size and buffers on
// two devices are one line naming the layer and the values, before anything
// runs; a good call runs the plan the shape rule picks and matches the
// reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "correctness/test_support.hpp"
#include "error/kernel_error.hpp"
#include "kiln/kernels/conv2d_bn_silu.hpp"

namespace {

namespace kl = kiln;
namespace kk = kiln::kernels;
using kiln::test::invalid_argument_error;
using kiln::test::random_values;

const kk::Conv2dShape kLayer{.n = 2, .c = 4, .h = 7, .w = 6, .k = 20, .r = 3, .s = 3, .pad = 1};

struct Buffers {
  explicit Buffers(const kk::Conv2dShape& shape, kl::Device device = kl::Device::cpu())
      : x(kl::Buffer<float>::from(random_values<float>(shape.input_size(), 1, -1, 1), device)),
        w(kl::Buffer<float>::from(random_values<float>(shape.weight_size(), 2, -1, 1), device)),
        scale(kl::Buffer<float>::from(random_values<float>(shape.k, 3, -1, 1), device)),
        shift(kl::Buffer<float>::from(random_values<float>(shape.k, 4, -1, 1), device)),
        y(shape.output_size(), device) {}
  kl::Buffer<float> x, w, scale, shift, y;
};

TEST(Conv2dCall, RunsTheShapesPlanAndMatchesTheReference) {
  Buffers b(kLayer);
  const kk::Conv2dPlan plan = kk::conv2d_bn_silu(kLayer, b.x, b.w, b.scale, b.shift, b.y);
  EXPECT_EQ(plan.variant, kk::Conv2dVariant::gemm) << kk::conv2d_plan_summary(plan);
  const auto ref =
      kk::conv2d_bn_silu_reference(b.x.to_host(), b.w.to_host(), b.scale.to_host(), b.shift.to_host(), kLayer);
  const std::vector<double> bound = kk::conv2d_error_bound(ref, kLayer.reduction(), kl::ir::DType::f32);
  const std::vector<float> got = b.y.to_host();
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_LE(std::abs(got[i] - ref.y[i]), bound[i]) << "element " << i;
}

TEST(Conv2dCall, BufferOfTheWrongSizeIsNamed) {
  Buffers b(kLayer);
  kl::Buffer<float> short_y(kLayer.output_size() - 1, kl::Device::cpu());
  EXPECT_EQ(invalid_argument_error([&] { kk::conv2d_bn_silu(kLayer, b.x, b.w, b.scale, b.shift, short_y); }),
            "conv2d_bn_silu n=2 c=4 h=7 w=6 k=20 r=3 s=3 stride=1 pad=1 dilation=1 groups=1: y has 1679 elements, "
            "the layer needs 1680");
}

TEST(Conv2dCall, BuffersOnTwoDevicesAreNamed) {
  Buffers b(kLayer);
  auto w_on_emu = kl::Buffer<float>::from(b.w.to_host(), kl::Device::emu());
  EXPECT_EQ(invalid_argument_error([&] { kk::conv2d_bn_silu(kLayer, b.x, w_on_emu, b.scale, b.shift, b.y); }),
            "conv2d_bn_silu n=2 c=4 h=7 w=6 k=20 r=3 s=3 stride=1 pad=1 dilation=1 groups=1: w is on emu, x on cpu");
}

TEST(Conv2dCall, InvalidLayerIsNamed) {
  kk::Conv2dShape grouped = kLayer;
  grouped.groups = 3;
  Buffers b(kLayer);
  EXPECT_EQ(
      invalid_argument_error([&] { kk::conv2d_bn_silu(grouped, b.x, b.w, b.scale, b.shift, b.y); }),
      "conv2d n=2 c=4 h=7 w=6 k=20 r=3 s=3 stride=1 pad=1 dilation=1 groups=3: groups (3) must divide c (4) and k "
      "(20)");
}

}  // namespace
