// Launching a conv2d + batchnorm + SiLU plan: maps the plan's variant and tile
// sizes to the compiled kernel and its grid. Used by the registry entries and
// the kernel tests alike.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kiln/kernels/conv2d_gemm.hpp"
#include "kiln/kernels/conv2d_scalar.hpp"
#include "kiln/kernels/conv2d_select.hpp"
#include "kiln/kernels/conv2d_tiled.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

/// fn(kernel) with the kernel compiled for `plan` on elements stored as T
/// (float, half or bfloat16): fused with batchnorm + SiLU, or the raw
/// convolution of the unfused sequence. Throws std::logic_error for tile sizes
/// plan_conv2d never chooses.
template <class T, bool FUSE_BN_SILU, class F>
decltype(auto) with_conv2d_kernel(const Conv2dPlan& plan, F&& fn) {
  using E = kl::Scalar<T>;
  const int positions = plan.block_positions, channels = plan.block_channels;
  const kl::CompileOptions options{.num_warps = plan.num_warps};
  switch (plan.variant) {
    case Conv2dVariant::scalar:
      if (positions == 128) return fn(kl::compile<conv2d_bn_silu<E, 128, FUSE_BN_SILU>>(options));
      if (positions == 32) return fn(kl::compile<conv2d_bn_silu<E, 32, FUSE_BN_SILU>>(options));
      break;
    case Conv2dVariant::tiled:
      if (channels == 16 && positions == 64)
        return fn(kl::compile<conv2d_bn_silu_tiled<E, 16, 64, FUSE_BN_SILU>>(options));
      if (channels == 16 && positions == 16)
        return fn(kl::compile<conv2d_bn_silu_tiled<E, 16, 16, FUSE_BN_SILU>>(options));
      if (channels == 4 && positions == 64)
        return fn(kl::compile<conv2d_bn_silu_tiled<E, 4, 64, FUSE_BN_SILU>>(options));
      if (channels == 4 && positions == 16)
        return fn(kl::compile<conv2d_bn_silu_tiled<E, 4, 16, FUSE_BN_SILU>>(options));
      break;
    case Conv2dVariant::gemm: {
      auto gemm = [&]<int BLOCK_M, int BLOCK_N>() -> decltype(auto) {
        if (plan.taps_outer)
          return fn(kl::compile<conv2d_bn_silu_gemm<E, BLOCK_M, BLOCK_N, 32, FUSE_BN_SILU, true>>(options));
        return fn(kl::compile<conv2d_bn_silu_gemm<E, BLOCK_M, BLOCK_N, 32, FUSE_BN_SILU, false>>(options));
      };
      if (plan.block_reduction != 32) break;
      if (positions == 128 && channels == 64) return gemm.template operator()<128, 64>();
      if (positions == 64 && channels == 64) return gemm.template operator()<64, 64>();
      if (positions == 64 && channels == 32) return gemm.template operator()<64, 32>();
      if (positions == 64 && channels == 16) return gemm.template operator()<64, 16>();
      if (positions == 16 && channels == 64) return gemm.template operator()<16, 64>();
      if (positions == 16 && channels == 32) return gemm.template operator()<16, 32>();
      if (positions == 16 && channels == 16) return gemm.template operator()<16, 16>();
      break;
    }
  }
  throw std::logic_error(std::string("conv2d: no ") + conv2d_variant_name(plan.variant) +
                         " kernel compiled for tiles " + std::to_string(positions) + " x " + std::to_string(channels) +
                         " x " + std::to_string(plan.block_reduction));
}

/// Runs `kernel` (one of with_conv2d_kernel's) over the plan's grid:
/// y = silu(scale conv(x, w) + shift), or the raw convolution.
template <class Kernel, class T>
runtime::LaunchStats launch_conv2d_kernel(const Kernel& kernel, const Conv2dPlan& plan, const Conv2dShape& shape,
                                          const Buffer<T>& x, const Buffer<T>& w, const Buffer<float>& scale,
                                          const Buffer<float>& shift, const Buffer<T>& y) {
  const kl::Grid grid(static_cast<int>(plan.grid_positions(shape)), static_cast<int>(plan.grid_channels(shape)));
  return kernel.launch(grid, x, w, scale, shift, y, shape.n, shape.c, shape.h, shape.w, shape.k, shape.p(), shape.q(),
                       shape.r, shape.s, shape.stride, shape.pad, shape.dilation, shape.groups);
}

/// Compiles (cached) and launches the plan's kernel once.
template <class T, bool FUSE_BN_SILU = true>
runtime::LaunchStats launch_conv2d(const Conv2dPlan& plan, const Conv2dShape& shape, const Buffer<T>& x,
                                   const Buffer<T>& w, const Buffer<float>& scale, const Buffer<float>& shift,
                                   const Buffer<T>& y) {
  return with_conv2d_kernel<T, FUSE_BN_SILU>(
      plan, [&](auto kernel) { return launch_conv2d_kernel(kernel, plan, shape, x, w, scale, shift, y); });
}

}  // namespace kiln::kernels
