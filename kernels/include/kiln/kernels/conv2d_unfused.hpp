// The unfused conv2d -> batchnorm -> SiLU sequence, three launches through
// global memory: the raw convolution (any variant, without its epilogue), a
// per-channel scale/shift kernel and an elementwise SiLU kernel. It computes
// what the fused kernels do, for the traffic and time comparison.
#pragma once

#include "kiln/kernels/conv2d_launch.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

/// Grid: (n k, cdiv(plane, BLOCK)) (n k on x, whose limit is 2^31 - 1 on
/// GPUs, not 65535). out = scale[ch] in + shift[ch] over the `plane` elements
/// of one (image, channel) of an [n, channels, plane] tensor; each program
/// stays in one channel, so scale and shift are loaded once per program.
template <class T, int BLOCK>
void conv2d_batchnorm(kl::Ptr<T> in, kl::Ptr<kl::f32> scale, kl::Ptr<kl::f32> shift, kl::Ptr<T> out, kl::i32 channels,
                      kl::i32 plane) {
  auto image_channel = kl::program_id(0);
  auto channel = image_channel % channels;
  auto offs = kl::program_id(1) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < plane;
  auto base = image_channel * plane + offs;
  auto v = kl::cast<kl::f32>(kl::load(in + base, mask));
  kl::store(out + base, v * kl::load(scale + channel) + kl::load(shift + channel), mask);
}

/// Grid: cdiv(size, BLOCK). out = silu(in), computed in f32.
template <class T, int BLOCK>
void silu_elementwise(kl::Ptr<T> in, kl::Ptr<T> out, kl::i32 size) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < size;
  kl::store(out + offs, kl::silu(kl::cast<kl::f32>(kl::load(in + offs, mask))), mask);
}

/// Strip length of the batchnorm and SiLU kernels.
inline constexpr int kConv2dElementwiseBlock = 1024;

/// The three launches: conv_out = conv(x, w) (the plan's variant, stored as
/// T), bn_out = scale conv_out + shift, y = silu(bn_out). Returns the summed
/// traffic.
template <class T>
runtime::LaunchStats launch_conv2d_unfused(const Conv2dPlan& plan, const Conv2dShape& shape, const Buffer<T>& x,
                                           const Buffer<T>& w, const Buffer<float>& scale, const Buffer<float>& shift,
                                           const Buffer<T>& conv_out, const Buffer<T>& bn_out, const Buffer<T>& y) {
  constexpr int B = kConv2dElementwiseBlock;
  runtime::LaunchStats total = launch_conv2d<T, false>(plan, shape, x, w, scale, shift, conv_out);
  const std::int64_t plane = shape.p() * shape.q();
  const kl::Grid bn_grid(static_cast<int>(shape.n * shape.k), static_cast<int>((plane + B - 1) / B));
  runtime::LaunchStats bn =
      kl::compile<conv2d_batchnorm<kl::Scalar<T>, B>>().launch(bn_grid, conv_out, scale, shift, bn_out, shape.k, plane);
  const kl::Grid silu_grid(static_cast<int>((shape.output_size() + B - 1) / B));
  runtime::LaunchStats act =
      kl::compile<silu_elementwise<kl::Scalar<T>, B>>().launch(silu_grid, bn_out, y, shape.output_size());
  total += bn;
  total += act;
  return total;
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::conv2d_batchnorm, "in", "scale", "shift", "out", "channels", "plane");
KILN_PARAMETERS(kiln::kernels::silu_elementwise, "in", "out", "size");
