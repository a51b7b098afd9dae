// Choosing the conv2d + batchnorm + SiLU variant (scalar, tiled, implicit
// GEMM) and its tile sizes from the layer shape and the device's compute
// units. Header-only so that the kernel tests use the same choice as the
// registry entry.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>

#include "kiln/kernels/conv2d_shape.hpp"

namespace kiln::kernels {

enum class Conv2dVariant { scalar, tiled, gemm };

/// "scalar", "tiled" or "gemm".
inline const char* conv2d_variant_name(Conv2dVariant variant) {
  switch (variant) {
    case Conv2dVariant::scalar: return "scalar";
    case Conv2dVariant::tiled: return "tiled";
    default: return "gemm";
  }
}

// The thresholds of the automatic choice. Each is tested just below, at and
// just above (tests/kernels/conv2d_select_test.cpp).

/// Fewer output channels than this: the scalar variant. A tiled program's
/// channel tile is at least 4 wide, so below 4 channels most of its rows would
/// be masked, while one scalar strip per channel wastes nothing.
inline constexpr std::int64_t kConv2dTiledMinOutChannels = 4;
/// At least this many output channels (the GEMM's N) and reduction terms
/// (c r s) for the implicit GEMM: a dot tile narrower than 16 in N or in the
/// reduction leaves most of an MMA instruction (16x8x16 on sm_80 and later)
/// multiplying padding; below it the outer products of the tiled variant do
/// the same reuse without the padding.
inline constexpr std::int64_t kConv2dGemmMinOutChannels = 16;
inline constexpr std::int64_t kConv2dGemmMinReduction = 16;

/// A variant with its tile sizes and why it was chosen.
struct Conv2dPlan {
  Conv2dVariant variant = Conv2dVariant::scalar;
  /// Output positions per program: scalar BLOCK, tiled BLOCK_P, gemm BLOCK_M.
  int block_positions = 128;
  /// Output channels per program: 1 (scalar), tiled BLOCK_K, gemm BLOCK_N.
  int block_channels = 1;
  /// Reduction terms per step: 1 (scalar, tiled), gemm BLOCK_R.
  int block_reduction = 1;
  /// gemm: the reduction walks the taps in an outer loop and the channels
  /// BLOCK_R at a time inside it (conv2d_gemm.hpp, TAPS_OUTER).
  bool taps_outer = false;
  /// Warps per program: 8 for the gemm's 128-row tiles, else 4.
  int num_warps = 4;
  /// One line: the variant's reason, then the tile sizes' reason.
  std::string reason;

  /// Programs along x (positions) and y (channels).
  std::int64_t grid_positions(const Conv2dShape& shape) const {
    return (shape.positions() + block_positions - 1) / block_positions;
  }
  std::int64_t grid_channels(const Conv2dShape& shape) const { return (shape.k + block_channels - 1) / block_channels; }
  std::int64_t programs(const Conv2dShape& shape) const { return grid_positions(shape) * grid_channels(shape); }
};

/// Why `variant` cannot compute `shape` ("" when it can): the tiled and GEMM
/// programs span several output channels and read every input channel, so
/// they need groups = 1.
inline std::string conv2d_unsupported_reason(Conv2dVariant variant, const Conv2dShape& shape) {
  if (variant != Conv2dVariant::scalar && shape.groups != 1)
    return std::string("the ") + conv2d_variant_name(variant) +
           " variant needs groups=1, got groups=" + std::to_string(shape.groups) + " (use --variant scalar or auto)";
  return "";
}

namespace detail {
inline std::string conv2d_auto_variant(const Conv2dShape& shape, Conv2dVariant& variant) {
  const std::string k = std::to_string(shape.k), red = std::to_string(shape.reduction());
  const std::string tiled_min = std::to_string(kConv2dTiledMinOutChannels);
  const std::string gemm_k = std::to_string(kConv2dGemmMinOutChannels),
                    gemm_red = std::to_string(kConv2dGemmMinReduction);
  if (shape.groups > 1) {
    variant = Conv2dVariant::scalar;
    return "groups=" + std::to_string(shape.groups) +
           " > 1: only the scalar variant reads one group's channels per program";
  }
  if (shape.k < kConv2dTiledMinOutChannels) {
    variant = Conv2dVariant::scalar;
    return "k=" + k + " < " + tiled_min +
           ": a channel tile would be mostly masked; one strip per channel wastes nothing";
  }
  if (shape.k >= kConv2dGemmMinOutChannels && shape.reduction() >= kConv2dGemmMinReduction) {
    variant = Conv2dVariant::gemm;
    return "k=" + k + " >= " + gemm_k + " and c*r*s=" + red + " >= " + gemm_red +
           ": dot tiles of 16 or more fill the matrix units";
  }
  variant = Conv2dVariant::tiled;
  return "k=" + k + ", c*r*s=" + red +
         ": too narrow for 16-wide dot tiles; outer products reuse each load across channels";
}

// Steps down through the `smaller` blocks (largest first) while `grid(block)`
// programs would leave compute units idle, stopping at the first that fills
// them (few steps, so that each variant has few tile shapes to compile);
// says which blocks gave too few programs.
template <class Grid>
std::string shrink_to_fill(int& block, std::initializer_list<int> smaller, int units, const char* name, Grid grid) {
  std::string too_few;
  for (const int next : smaller) {
    if (grid(block) >= units) break;
    too_few += (too_few.empty() ? "" : ", ") + std::to_string(block) + " gives " + std::to_string(grid(block));
    block = next;
  }
  if (too_few.empty()) return "";
  return std::string(", ") + name + "=" + std::to_string(block) + " since " + too_few + " programs < " +
         std::to_string(units) + " compute units";
}
/// Walks the taps outside the channels when there are at least BLOCK_R
/// channels: each step then pads at most what one tap's channels leave of
/// BLOCK_R (c = 33: 31 of 64), while the flat order computes every
/// element's window position and padding mask afresh: at c = 64, 3 x 3, f16,
/// 128 x 64 tiles, its loop runs 371 SASS instructions per 32 terms on sm_80
/// (366 on sm_90a), the taps-outer one 184 (177) (conv2d_gemm.hpp).
inline std::string gemm_reduction_order(const Conv2dShape& shape, Conv2dPlan& plan) {
  const std::string c = std::to_string(shape.c), block = std::to_string(plan.block_reduction);
  plan.taps_outer = shape.c >= plan.block_reduction;
  if (plan.taps_outer) return "; taps outer (c=" + c + " >= " + block + "): each tap's window offsets computed once";
  return "; terms in order (c=" + c + " < " + block + "): one tap's channels would mostly pad a step";
}
}  // namespace detail

/// The plan for `shape` on a device running `compute_units` programs at once:
/// `requested` when given (throws std::invalid_argument naming the variant and
/// the reason when it cannot run the shape), else the automatic choice.
/// Tile sizes come from the shape: channel tiles fit k, and the position tile
/// shrinks when the grid would not fill the compute units. The tile sizes are
/// those launch_conv2d instantiates.
inline Conv2dPlan plan_conv2d(const Conv2dShape& shape, int compute_units,
                              std::optional<Conv2dVariant> requested = {}) {
  validate(shape);
  Conv2dPlan plan;
  if (requested) {
    if (std::string why = conv2d_unsupported_reason(*requested, shape); !why.empty())
      throw std::invalid_argument("conv2d_bn_silu --variant " + std::string(conv2d_variant_name(*requested)) + ": " +
                                  why);
    plan.variant = *requested;
    plan.reason = std::string(conv2d_variant_name(plan.variant)) + " as requested";
  } else {
    plan.reason = detail::conv2d_auto_variant(shape, plan.variant);
  }
  const std::int64_t positions = shape.positions(), k = shape.k;
  auto blocks = [](std::int64_t n, int block) { return (n + block - 1) / block; };
  switch (plan.variant) {
    case Conv2dVariant::scalar:
      // 128 positions per strip, 32 when that leaves compute units idle.
      plan.block_positions = 128;
      plan.block_channels = 1;
      plan.reason += detail::shrink_to_fill(plan.block_positions, {32}, compute_units, "BLOCK",
                                            [&](int b) { return blocks(positions, b) * k; });
      break;
    case Conv2dVariant::tiled:
      // A 4-channel tile for k <= 8 (k = 5 then wastes 3 of 8 rows, not 11 of 16).
      plan.block_channels = k <= 8 ? 4 : 16;
      plan.block_positions = 64;
      plan.reason += detail::shrink_to_fill(plan.block_positions, {16}, compute_units, "BLOCK_P", [&](int b) {
        return blocks(positions, b) * blocks(k, plan.block_channels);
      });
      break;
    case Conv2dVariant::gemm: {
      // 32 reduction terms per dot: two MMA steps.
      plan.block_reduction = 32;
      const std::string order = detail::gemm_reduction_order(shape, plan);
      // N tile 16 below k = 32: two 16-wide tiles pad k = 17..31 exactly as
      // one 32-wide tile would, with twice the programs. 64 from k = 64:
      // each gathered im2col element then serves twice the channels, which
      // halves the gathers per MMA (f16, c = 64, 3 x 3, sm_80: 18 SASS
      // instructions per mma.sync at 64 x 64, 26 at 64 x 32; 128 and 115
      // registers) and the reads of the input when k = 64.
      plan.block_channels = k >= 64 ? 64 : k >= 32 ? 32 : 16;
      // 128 rows at 8 warps beside 64 channels: each weight element then
      // serves twice the positions. Inner loop, f16, sm_80: c = 64, 3 x 3,
      // taps outer 184 SASS instructions per 16 mma.sync against 258 at
      // 64 x 64 (both 128 registers, so both keep 16 warps on an SM); an
      // RGB stem (c = 3, 7 x 7, stride 2, terms in order) 403 per 16
      // against 393 per 8 at 64 x 32 (128 and 111 registers). sm_90a: 177
      // and 394 per two wgmma of 64 x 64 against 241 at 64 x 64 and 418
      // for two of 64 x 32.
      const bool wide = plan.block_channels == 64;
      plan.block_positions = wide ? 128 : 64;
      plan.reason += detail::shrink_to_fill(
          plan.block_positions, wide ? std::initializer_list<int>{64, 16} : std::initializer_list<int>{16},
          compute_units, "BLOCK_M", [&](int b) { return blocks(positions, b) * blocks(k, plan.block_channels); });
      plan.num_warps = plan.block_positions == 128 ? 8 : 4;
      plan.reason += order;
      break;
    }
  }
  return plan;
}

/// "gemm, 64 positions x 32 channels x 32 terms, 4 warps (k=48 >= 16 and
/// ...)": the plan on one line, its tiles and its reason, for the registry's
/// report.
inline std::string conv2d_plan_summary(const Conv2dPlan& plan) {
  std::string tiles = std::to_string(plan.block_positions) + " positions x " + std::to_string(plan.block_channels) +
                      (plan.block_channels == 1 ? " channel" : " channels");
  if (plan.variant == Conv2dVariant::gemm) tiles += " x " + std::to_string(plan.block_reduction) + " terms";
  return std::string(conv2d_variant_name(plan.variant)) + ", " + tiles + ", " + std::to_string(plan.num_warps) +
         " warps (" + plan.reason + ")";
}

}  // namespace kiln::kernels
