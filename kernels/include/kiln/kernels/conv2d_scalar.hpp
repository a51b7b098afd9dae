// conv2d + batchnorm + SiLU, scalar style: each program computes a strip of
// BLOCK output positions (flattened over n p q) of ONE output channel,
// looping over that channel's (c / groups) r s reduction one term at a time.
// Any kernel size, stride, padding, dilation and groups (depthwise included).
#pragma once

#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

/// Grid: (cdiv(n p q, BLOCK), k). With FUSE_BN_SILU the output is
/// silu(scale[k] conv + shift[k]); without it the raw convolution (the first
/// kernel of the unfused sequence; scale and shift are then not read).
/// x is [n, c, h, w], w is [k, c / groups, r, s], y is [n, k, p, q].
template <class T, int BLOCK, bool FUSE_BN_SILU = true>
void conv2d_bn_silu(kl::Ptr<T> x, kl::Ptr<T> w, kl::Ptr<kl::f32> scale, kl::Ptr<kl::f32> shift, kl::Ptr<T> y,
                    kl::i32 batch, kl::i32 channels, kl::i32 height, kl::i32 width, kl::i32 out_channels,
                    kl::i32 out_height, kl::i32 out_width, kl::i32 kernel_h, kl::i32 kernel_w, kl::i32 stride,
                    kl::i32 pad, kl::i32 dilation, kl::i32 groups) {
  auto channel = kl::program_id(1);
  auto out_plane = out_height * out_width;
  auto m = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto in_range = m < batch * out_plane;
  auto image = m / out_plane;
  auto pq = m % out_plane;
  auto top = (pq / out_width) * stride - pad;
  auto left = (pq % out_width) * stride - pad;
  auto group_channels = channels / groups;
  auto first_channel = (channel / (out_channels / groups)) * group_channels;
  auto taps = kernel_h * kernel_w;
  auto x_image = x + (image * channels + first_channel) * (height * width);
  auto w_channel = w + channel * (group_channels * taps);
  kl::Var acc = kl::zeros<kl::f32, BLOCK>();
  for (auto term : kl::range(0, group_channels * taps)) {
    auto c = term / taps;
    auto tap = term % taps;
    auto ih = top + (tap / kernel_w) * dilation;
    auto iw = left + (tap % kernel_w) * dilation;
    // Padding: taps outside the input read as zero.
    auto valid = in_range & (ih >= 0) & (ih < height) & (iw >= 0) & (iw < width);
    auto xv = kl::load(x_image + (c * height + ih) * width + iw, valid);
    acc = acc + kl::cast<kl::f32>(xv) * kl::cast<kl::f32>(kl::load(w_channel + term));
  }
  auto out = y + (image * out_channels + channel) * out_plane + pq;
  if constexpr (FUSE_BN_SILU)
    kl::store(out, kl::silu(acc * kl::load(scale + channel) + kl::load(shift + channel)), in_range);
  else kl::store(out, acc, in_range);
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::conv2d_bn_silu, "x", "w", "scale", "shift", "y", "batch", "channels", "height", "width",
                "out_channels", "out_height", "out_width", "kernel_h", "kernel_w", "stride", "pad", "dilation",
                "groups");
