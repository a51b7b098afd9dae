// conv2d + batchnorm + SiLU, tiled: each program computes a tile of BLOCK_K
// output channels x BLOCK_P output positions (flattened over n p q),
// accumulating one outer product per reduction term (c, r, s): a column of
// weights times a row of inputs, so each input load serves BLOCK_K channels
// and each weight load BLOCK_P positions. groups = 1.
#pragma once

#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

/// Grid: (cdiv(n p q, BLOCK_P), cdiv(k, BLOCK_K)). Arguments as for
/// conv2d_bn_silu (scalar); `groups` must be 1 (the host checks).
template <class T, int BLOCK_K, int BLOCK_P, bool FUSE_BN_SILU = true>
void conv2d_bn_silu_tiled(kl::Ptr<T> x, kl::Ptr<T> w, kl::Ptr<kl::f32> scale, kl::Ptr<kl::f32> shift, kl::Ptr<T> y,
                          kl::i32 batch, kl::i32 channels, kl::i32 height, kl::i32 width, kl::i32 out_channels,
                          kl::i32 out_height, kl::i32 out_width, kl::i32 kernel_h, kl::i32 kernel_w, kl::i32 stride,
                          kl::i32 pad, kl::i32 dilation, kl::i32 /*groups*/) {
  auto out_plane = out_height * out_width;
  auto m = kl::program_id(0) * BLOCK_P + kl::arange<BLOCK_P>();
  auto in_range = m < batch * out_plane;
  auto image = m / out_plane;
  auto pq = m % out_plane;
  auto top = (pq / out_width) * stride - pad;
  auto left = (pq % out_width) * stride - pad;
  auto ks = kl::program_id(1) * BLOCK_K + kl::arange<BLOCK_K>();
  auto k_valid = ks < out_channels;
  auto taps = kernel_h * kernel_w;
  auto reduction = channels * taps;
  auto x_image = x + image * (channels * height * width);
  auto w_rows = w + ks * reduction;
  kl::Var acc = kl::zeros<kl::f32, BLOCK_K, BLOCK_P>();
  for (auto term : kl::range(0, reduction)) {
    auto c = term / taps;
    auto tap = term % taps;
    auto ih = top + (tap / kernel_w) * dilation;
    auto iw = left + (tap % kernel_w) * dilation;
    auto valid = in_range & (ih >= 0) & (ih < height) & (iw >= 0) & (iw < width);
    auto inputs = kl::cast<kl::f32>(kl::load(x_image + (c * height + ih) * width + iw, valid));
    auto weights = kl::cast<kl::f32>(kl::load(w_rows + term, k_valid));
    acc = acc + kl::expand_dims<1>(weights) * kl::expand_dims<0>(inputs);
  }
  auto out = y + kl::expand_dims<1>(ks * out_plane) + kl::expand_dims<0>(image * (out_channels * out_plane) + pq);
  auto mask = kl::expand_dims<1>(k_valid) & kl::expand_dims<0>(in_range);
  if constexpr (FUSE_BN_SILU) {
    auto channel_scale = kl::expand_dims<1>(kl::load(scale + ks, k_valid));
    auto channel_shift = kl::expand_dims<1>(kl::load(shift + ks, k_valid));
    kl::store(out, kl::silu(acc * channel_scale + channel_shift), mask);
  } else {
    kl::store(out, acc, mask);
  }
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::conv2d_bn_silu_tiled, "x", "w", "scale", "shift", "y", "batch", "channels", "height",
                "width", "out_channels", "out_height", "out_width", "kernel_h", "kernel_w", "stride", "pad", "dilation",
                "groups");
