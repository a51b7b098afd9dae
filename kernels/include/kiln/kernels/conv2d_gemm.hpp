// conv2d + batchnorm + SiLU as an implicit GEMM: M = n p q output positions,
// N = k output channels, reduction = c r s. The im2col matrix is never
// materialised: each [BLOCK_M x BLOCK_R] tile of it is gathered from the
// NCHW input by address arithmetic, with masks for padding and tails, and
// multiplied by a [BLOCK_R x BLOCK_N] tile of the weights with kl::dot into
// an f32 accumulator; batchnorm and SiLU are applied to the accumulator tile
// before the one store. groups = 1; any kernel size, stride, padding, dilation.
//
// Two orders of the reduction. Flat: the terms c r s in order, BLOCK_R at a
// time, so a layer with few channels (an RGB stem) pads only the last step;
// each term's channel and tap advance from the previous step's by carries
// (no division in the loop), and each element's window position and padding
// mask are computed afresh in every step. TAPS_OUTER: one loop over the taps
// r s, and inside it the channels BLOCK_R at a time: the window's offsets
// and padding masks of the rows are computed once per tap and each step only
// adds the channels' offsets, at the cost of padding every tap's last step
// where c is not a multiple of BLOCK_R. Both gather the im2col tile transposed,
// [BLOCK_R, BLOCK_M], so that the lanes of a warp read neighbouring pixels
// of one channel and tap, then pass it to the dot through kl::trans.
#pragma once

#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

/// Grid: (cdiv(n p q, BLOCK_M), cdiv(k, BLOCK_N)). Arguments as for
/// conv2d_bn_silu (scalar); `groups` must be 1 (the host checks).
template <class T, int BLOCK_M, int BLOCK_N, int BLOCK_R, bool FUSE_BN_SILU = true, bool TAPS_OUTER = false>
void conv2d_bn_silu_gemm(kl::Ptr<T> x, kl::Ptr<T> w, kl::Ptr<kl::f32> scale, kl::Ptr<kl::f32> shift, kl::Ptr<T> y,
                         kl::i32 batch, kl::i32 channels, kl::i32 height, kl::i32 width, kl::i32 out_channels,
                         kl::i32 out_height, kl::i32 out_width, kl::i32 kernel_h, kl::i32 kernel_w, kl::i32 stride,
                         kl::i32 pad, kl::i32 dilation, kl::i32 /*groups*/) {
  auto out_plane = out_height * out_width;
  auto m = kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>();
  auto image = m / out_plane;
  auto pq = m % out_plane;
  // Per GEMM row (output position): where its image starts and its window's
  // top-left corner.
  auto plane = height * width;
  auto position_valid = m < batch * out_plane;
  auto image_base = image * (channels * plane);
  auto window_top = (pq / out_width) * stride - pad;
  auto window_left = (pq % out_width) * stride - pad;
  auto ks = kl::program_id(1) * BLOCK_N + kl::arange<BLOCK_N>();
  auto k_valid = ks < out_channels;
  auto taps = kernel_h * kernel_w;
  auto reduction = channels * taps;
  auto w_columns = w + kl::expand_dims<0>(ks * reduction);
  kl::Var acc = kl::zeros<kl::f32, BLOCK_M, BLOCK_N>();
  // Both orders gather the im2col tile transposed, [BLOCK_R, BLOCK_M]: its
  // rows, the output positions, then run along the lanes of a warp, so that
  // neighbouring lanes read neighbouring input pixels of one channel. Per
  // output position, a column of that tile:
  auto columns_valid = kl::expand_dims<0>(position_valid);
  auto columns_top = kl::expand_dims<0>(window_top);
  auto columns_left = kl::expand_dims<0>(window_left);
  if constexpr (TAPS_OUTER) {
    auto columns_base = kl::expand_dims<0>(image_base);
    for (auto tap : kl::range(0, taps)) {
      // This tap's input pixel for every output position, and whether it
      // lies inside the image: [1, BLOCK_M], for all of the tap's channels.
      auto ih = columns_top + (tap / kernel_w) * dilation;
      auto iw = columns_left + (tap % kernel_w) * dilation;
      auto in_image = columns_valid & (ih >= 0) & (ih < height) & (iw >= 0) & (iw < width);
      auto pixels = x + columns_base + ih * width + iw;
      auto w_tap = w_columns + tap;
      // Not pipelined: this loop starts again at every tap and runs c /
      // BLOCK_R steps (2 at c = 64), so a pipeline would be filled and
      // drained nearly as often as it ran, and only the weights could ride
      // it (the im2col tile reaches the dot through trans). Measured on
      // 64 x 32 f16 tiles, c = 64, 3 x 3: 208 SASS instructions per 32 terms
      // on sm_80 and 115 registers, against 262 and 128 with two stages and
      // 305 and 157 with three; on sm_90a 224 against 280 and 320.
      for (auto start : kl::range(0, channels, BLOCK_R, {.num_stages = 1})) {
        auto cs = start + kl::arange<BLOCK_R>();
        auto c_valid = cs < channels;
        auto a_t = kl::load(pixels + kl::expand_dims<1>(cs * plane), kl::expand_dims<1>(c_valid) & in_image);
        auto b =
            kl::load(w_tap + kl::expand_dims<1>(cs * taps), kl::expand_dims<1>(c_valid) & kl::expand_dims<0>(k_valid));
        acc = kl::dot(kl::trans(a_t), b, acc);
      }
    }
  } else {
    // The offset of each output position's window corner in the input
    // (negative in the padding).
    auto columns_corner = kl::expand_dims<0>(image_base + window_top * width + window_left);
    // Per reduction term c r s: its channel, kernel row and kernel column,
    // found by division for the first step only; each step then adds
    // BLOCK_R's digits in the same mixed radix with carries (a digit plus a
    // smaller one stays below twice the radix, so one subtraction wraps it).
    auto first = kl::arange<BLOCK_R>();
    kl::Var channel = first / taps;
    kl::Var kernel_row = (first / kernel_w) % kernel_h;
    kl::Var kernel_col = first % kernel_w;
    auto step_channel = BLOCK_R / taps;
    auto step_row = (BLOCK_R / kernel_w) % kernel_h;
    auto step_col = BLOCK_R % kernel_w;
    auto unsigned_height = kl::cast<kl::u32>(height);
    auto unsigned_width = kl::cast<kl::u32>(width);
    // Not pipelined, as the taps-outer loop: measured on an RGB stem (c 3,
    // 7 x 7, stride 2, f16, 64 x 32 tiles) 393 SASS instructions per step
    // on sm_80 against 443 with three stages.
    for (auto start : kl::range(0, reduction, BLOCK_R, {.num_stages = 1})) {
      auto terms = start + first;
      auto term_valid = terms < reduction;
      auto dr = kernel_row * dilation;
      auto ds = kernel_col * dilation;
      // Padding and both tails read as zero, which adds nothing to the sum;
      // one unsigned comparison per axis tests 0 <= i < size.
      auto ih = columns_top + kl::expand_dims<1>(dr);
      auto iw = columns_left + kl::expand_dims<1>(ds);
      auto a_mask = columns_valid & kl::expand_dims<1>(term_valid) & (kl::cast<kl::u32>(ih) < unsigned_height) &
                    (kl::cast<kl::u32>(iw) < unsigned_width);
      auto a_t = kl::load(x + (columns_corner + kl::expand_dims<1>(channel * plane + dr * width + ds)), a_mask);
      auto b =
          kl::load(w_columns + kl::expand_dims<1>(terms), kl::expand_dims<1>(term_valid) & kl::expand_dims<0>(k_valid));
      acc = kl::dot(kl::trans(a_t), b, acc);
      auto col = kernel_col + step_col;
      auto col_carry = col >= kernel_w;
      kernel_col = kl::where(col_carry, col - kernel_w, col);
      auto row = kernel_row + step_row + kl::where(col_carry, 1, 0);
      auto row_carry = row >= kernel_h;
      kernel_row = kl::where(row_carry, row - kernel_h, row);
      channel = channel + step_channel + kl::where(row_carry, 1, 0);
    }
  }
  auto out = y + kl::expand_dims<1>(image * (out_channels * out_plane) + pq) + kl::expand_dims<0>(ks * out_plane);
  auto mask = kl::expand_dims<1>(position_valid) & kl::expand_dims<0>(k_valid);
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
