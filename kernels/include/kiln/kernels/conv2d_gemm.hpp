// conv2d + batchnorm + SiLU as an implicit GEMM: M = n p q output positions,
// N = k output channels, reduction = c r s. The im2col matrix is never
// materialised: each [BLOCK_M x BLOCK_R] tile of it is gathered from the
// NCHW input by address arithmetic, with masks for padding and tails, and
// multiplied by a [BLOCK_R x BLOCK_N] tile of the weights with kl::dot into
// an f32 accumulator; batchnorm and SiLU are applied to the accumulator tile
// before the one store. groups = 1; any kernel size, stride, padding, dilation.
#pragma once

#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

/// Grid: (cdiv(n p q, BLOCK_M), cdiv(k, BLOCK_N)). Arguments as for
/// conv2d_bn_silu (scalar); `groups` must be 1 (the host checks).
template <class T, int BLOCK_M, int BLOCK_N, int BLOCK_R, bool FUSE_BN_SILU = true>
void conv2d_bn_silu_gemm(kl::Ptr<T> x, kl::Ptr<T> w, kl::Ptr<kl::f32> scale, kl::Ptr<kl::f32> shift, kl::Ptr<T> y,
                         kl::i32 batch, kl::i32 channels, kl::i32 height, kl::i32 width, kl::i32 out_channels,
                         kl::i32 out_height, kl::i32 out_width, kl::i32 kernel_h, kl::i32 kernel_w, kl::i32 stride,
                         kl::i32 pad, kl::i32 dilation, kl::i32 /*groups*/) {
  auto out_plane = out_height * out_width;
  auto m = kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>();
  auto image = m / out_plane;
  auto pq = m % out_plane;
  // Per GEMM row (output position): where its image starts and its window's
  // top-left corner, as [BLOCK_M, 1] columns.
  auto row_valid = kl::expand_dims<1>(m < batch * out_plane);
  auto row_base = kl::expand_dims<1>(image * (channels * height * width));
  auto top = kl::expand_dims<1>((pq / out_width) * stride - pad);
  auto left = kl::expand_dims<1>((pq % out_width) * stride - pad);
  auto ks = kl::program_id(1) * BLOCK_N + kl::arange<BLOCK_N>();
  auto k_valid = ks < out_channels;
  auto taps = kernel_h * kernel_w;
  auto reduction = channels * taps;
  auto w_columns = w + kl::expand_dims<0>(ks * reduction);
  kl::Var acc = kl::zeros<kl::f32, BLOCK_M, BLOCK_N>();
  for (auto start : kl::range(0, reduction, BLOCK_R)) {
    // Per GEMM column of the im2col tile: its input channel and kernel tap.
    auto terms = start + kl::arange<BLOCK_R>();
    auto term_valid = terms < reduction;
    auto tap = terms % taps;
    auto ih = top + kl::expand_dims<0>((tap / kernel_w) * dilation);
    auto iw = left + kl::expand_dims<0>((tap % kernel_w) * dilation);
    // Padding and both tails read as zero, which adds nothing to the sum.
    auto a_mask = row_valid & kl::expand_dims<0>(term_valid) & (ih >= 0) & (ih < height) & (iw >= 0) & (iw < width);
    auto a = kl::load(x + row_base + kl::expand_dims<0>((terms / taps) * (height * width)) + ih * width + iw, a_mask);
    auto b =
        kl::load(w_columns + kl::expand_dims<1>(terms), kl::expand_dims<1>(term_valid) & kl::expand_dims<0>(k_valid));
    acc = kl::dot(a, b, acc);
  }
  auto out = y + kl::expand_dims<1>(image * (out_channels * out_plane) + pq) + kl::expand_dims<0>(ks * out_plane);
  auto mask = row_valid & kl::expand_dims<0>(k_valid);
  if constexpr (FUSE_BN_SILU) {
    auto channel_scale = kl::expand_dims<0>(kl::load(scale + ks, k_valid));
    auto channel_shift = kl::expand_dims<0>(kl::load(shift + ks, k_valid));
    kl::store(out, kl::silu(acc * channel_scale + channel_shift), mask);
  } else {
    kl::store(out, acc, mask);
  }
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::conv2d_bn_silu_gemm, "x", "w", "scale", "shift", "y", "batch", "channels", "height",
                "width", "out_channels", "out_height", "out_width", "kernel_h", "kernel_w", "stride", "pad", "dilation",
                "groups");
