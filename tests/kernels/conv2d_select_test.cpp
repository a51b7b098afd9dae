// The host side of conv2d + batchnorm + SiLU: folding batchnorm and a conv
// bias into scale/shift, validating layer shapes, and the variant and tile
// choice of plan_conv2d at each threshold (just below, at, just above),
// including the errors for a variant that cannot run a shape.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kernels/conv2d_select.hpp"

namespace {

namespace kk = kiln::kernels;
using kk::Conv2dVariant;

/// A layer of batch 1 with c input and k output channels, an rs x rs kernel
/// with same padding on an hw x hw image.
kk::Conv2dShape layer(std::int64_t c, std::int64_t k, std::int64_t groups = 1, std::int64_t hw = 4,
                      std::int64_t rs = 1) {
  kk::Conv2dShape s;
  s.n = 1;
  s.c = c;
  s.h = s.w = hw;
  s.k = k;
  s.r = s.s = rs;
  s.pad = rs / 2;
  s.groups = groups;
  return s;
}

/// The message of the std::invalid_argument `fn` throws ("" if none).
template <class F>
std::string invalid_argument_of(F fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Conv2dFoldBatchnorm, FoldsStatisticsAndBiasExactly) {
  // eps = 1. Channel 0: scale = 2 / sqrt(3 + 1) = 1, shift = 0.5 + (3 - 1) 1 = 2.5.
  // Channel 1: scale = 6 / sqrt(3 + 1) = 3, shift = -1 + (0.5 - 2) 3 = -5.5.
  // All exact in f32.
  const auto bn = kk::fold_batchnorm({2, 6}, {0.5f, -1}, {1, 2}, {3, 3}, 1.0, {3, 0.5f});
  EXPECT_EQ(bn.scale, (std::vector<float>{1, 3}));
  EXPECT_EQ(bn.shift, (std::vector<float>{2.5f, -5.5f}));
  // Without a bias, shift = beta - mean scale.
  const auto no_bias = kk::fold_batchnorm({2, 6}, {0.5f, -1}, {1, 2}, {3, 3}, 1.0);
  EXPECT_EQ(no_bias.shift, (std::vector<float>{-0.5f, -7}));
}

TEST(Conv2dFoldBatchnorm, MatchesBatchnormOfTheBiasedConvOnRandomValues) {
  // gamma (v + bias - mean) / sqrt(var + eps) + beta against scale v + shift:
  // scale and shift are each one f32 rounding of the exact value (relative
  // error 2^-24), so the difference is at most 2^-24 (|scale v| + |shift|)
  // plus the double evaluation's negligible error; 2^-23 covers both.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> any(-2, 2), positive(0.1, 3);
  const int k = 64;
  std::vector<float> gamma(k), beta(k), mean(k), var(k), bias(k);
  for (int i = 0; i < k; ++i) {
    gamma[i] = static_cast<float>(any(rng));
    beta[i] = static_cast<float>(any(rng));
    mean[i] = static_cast<float>(any(rng));
    var[i] = static_cast<float>(positive(rng));
    bias[i] = static_cast<float>(any(rng));
  }
  const double eps = 1e-5;
  const auto bn = kk::fold_batchnorm(gamma, beta, mean, var, eps, bias);
  for (int i = 0; i < k; ++i) {
    const double v = any(rng);
    const double want = gamma[i] * (v + bias[i] - mean[i]) / std::sqrt(var[i] + eps) + beta[i];
    const double got = static_cast<double>(bn.scale[i]) * v + bn.shift[i];
    EXPECT_LE(std::abs(got - want), 0x1p-23 * (std::abs(bn.scale[i] * v) + std::abs(bn.shift[i]))) << "channel " << i;
  }
}

TEST(Conv2dFoldBatchnorm, RejectsMismatchedSizesAndNonPositiveVariance) {
  EXPECT_EQ(invalid_argument_of([] { kk::fold_batchnorm({1, 2}, {0}, {0, 0}, {1, 1}, 1e-5); }),
            "fold_batchnorm: gamma has 2 channels but beta, mean, var, bias have 1, 2, 2, 0");
  EXPECT_NE(
      invalid_argument_of([] { kk::fold_batchnorm({1}, {0}, {0}, {-1}, 0.5); }).find("channel 0 has var + eps = -0.5"),
      std::string::npos);
}

TEST(Conv2dShape, OutputSizeAndValidation) {
  kk::Conv2dShape s = layer(3, 5, 1, 9, 3);
  s.stride = 2;
  s.dilation = 2;
  s.pad = 1;
  // (9 + 2 - 2 * 2 - 1) / 2 + 1 = 4.
  EXPECT_EQ(s.p(), 4);
  EXPECT_EQ(s.q(), 4);
  EXPECT_EQ(s.reduction(), 27);
  EXPECT_NO_THROW(kk::validate(s));
  EXPECT_EQ(
      invalid_argument_of([] { kk::validate(layer(6, 8, 4)); }),
      "conv2d n=1 c=6 h=4 w=4 k=8 r=1 s=1 stride=1 pad=0 dilation=1 groups=4: groups (4) must divide c (6) and k (8)");
  kk::Conv2dShape too_small = layer(1, 1, 1, 4, 3);
  too_small.dilation = 2;
  too_small.pad = 0;
  EXPECT_NE(invalid_argument_of([&] {
              kk::validate(too_small);
            }).find("the dilated kernel (5x5) is larger than the padded input"),
            std::string::npos);
}

// Variant thresholds. Reduction = c for the 1x1 layers.

TEST(Conv2dSelect, GroupsAboveOnePickScalar) {
  EXPECT_EQ(kk::plan_conv2d(layer(32, 32, 1), 1).variant, Conv2dVariant::gemm);
  const auto grouped = kk::plan_conv2d(layer(32, 32, 2), 1);
  EXPECT_EQ(grouped.variant, Conv2dVariant::scalar);
  EXPECT_NE(grouped.reason.find("groups=2 > 1"), std::string::npos) << grouped.reason;
  EXPECT_EQ(kk::plan_conv2d(layer(32, 32, 32), 1).variant, Conv2dVariant::scalar);  // depthwise
}

TEST(Conv2dSelect, FewerThanFourOutputChannelsPickScalar) {
  EXPECT_EQ(kk::plan_conv2d(layer(64, 3), 1).variant, Conv2dVariant::scalar);
  EXPECT_NE(kk::plan_conv2d(layer(64, 3), 1).reason.find("k=3 < 4"), std::string::npos);
  EXPECT_EQ(kk::plan_conv2d(layer(64, 4), 1).variant, Conv2dVariant::tiled);
  EXPECT_EQ(kk::plan_conv2d(layer(64, 5), 1).variant, Conv2dVariant::tiled);
}

TEST(Conv2dSelect, SixteenOutputChannelsPickGemm) {
  EXPECT_EQ(kk::plan_conv2d(layer(64, 15), 1).variant, Conv2dVariant::tiled);
  const auto at = kk::plan_conv2d(layer(64, 16), 1);
  EXPECT_EQ(at.variant, Conv2dVariant::gemm);
  EXPECT_NE(at.reason.find("k=16 >= 16 and c*r*s=64 >= 16"), std::string::npos) << at.reason;
  EXPECT_EQ(kk::plan_conv2d(layer(64, 17), 1).variant, Conv2dVariant::gemm);
}

TEST(Conv2dSelect, SixteenReductionTermsPickGemm) {
  const auto below = kk::plan_conv2d(layer(15, 64), 1);
  EXPECT_EQ(below.variant, Conv2dVariant::tiled);
  EXPECT_NE(below.reason.find("c*r*s=15: too narrow"), std::string::npos) << below.reason;
  EXPECT_EQ(kk::plan_conv2d(layer(16, 64), 1).variant, Conv2dVariant::gemm);
  EXPECT_EQ(kk::plan_conv2d(layer(17, 64), 1).variant, Conv2dVariant::gemm);
  // The reduction counts the kernel taps: 2 channels x 3x3 = 18.
  EXPECT_EQ(kk::plan_conv2d(layer(2, 64, 1, 4, 3), 1).variant, Conv2dVariant::gemm);
}

// Tile thresholds.

TEST(Conv2dSelect, ScalarStripShrinksWhenTheGridWouldNotFillTheUnits) {
  // k = 2 (scalar), 16 x 16 = 256 positions: 2 strips of 128 per channel, 4 programs.
  const kk::Conv2dShape s = layer(8, 2, 1, 16);
  EXPECT_EQ(kk::plan_conv2d(s, 3).block_positions, 128);
  EXPECT_EQ(kk::plan_conv2d(s, 4).block_positions, 128);
  const auto shrunk = kk::plan_conv2d(s, 5);
  EXPECT_EQ(shrunk.block_positions, 32);
  EXPECT_NE(shrunk.reason.find("BLOCK=32 since 128 gives 4 programs < 5 compute units"), std::string::npos)
      << shrunk.reason;
}

TEST(Conv2dSelect, TiledChannelTileFollowsK) {
  EXPECT_EQ(kk::plan_conv2d(layer(8, 7), 1).block_channels, 4);
  EXPECT_EQ(kk::plan_conv2d(layer(8, 8), 1).block_channels, 4);
  EXPECT_EQ(kk::plan_conv2d(layer(8, 9), 1).block_channels, 16);
}

TEST(Conv2dSelect, TiledPositionTileShrinksWhenTheGridWouldNotFillTheUnits) {
  // k = 9 (one 16-channel tile), 16 x 16 = 256 positions: 4 tiles of 64.
  const kk::Conv2dShape s = layer(8, 9, 1, 16);
  EXPECT_EQ(kk::plan_conv2d(s, 3).block_positions, 64);
  EXPECT_EQ(kk::plan_conv2d(s, 4).block_positions, 64);
  EXPECT_EQ(kk::plan_conv2d(s, 5).block_positions, 16);
}

TEST(Conv2dSelect, GemmChannelTileFollowsK) {
  EXPECT_EQ(kk::plan_conv2d(layer(32, 31), 1).block_channels, 16);
  EXPECT_EQ(kk::plan_conv2d(layer(32, 32), 1).block_channels, 32);
  EXPECT_EQ(kk::plan_conv2d(layer(32, 33), 1).block_channels, 32);
  EXPECT_EQ(kk::plan_conv2d(layer(32, 63), 1).block_channels, 32);
  EXPECT_EQ(kk::plan_conv2d(layer(32, 64), 1).block_channels, 64);
  // In either order of the reduction.
  EXPECT_EQ(kk::plan_conv2d(layer(31, 64), 1).block_channels, 64);
  EXPECT_EQ(kk::plan_conv2d(layer(32, 33), 1).block_reduction, 32);
}

TEST(Conv2dSelect, GemmWalksTheTapsOutsideTheChannelsFromBlockRChannels) {
  // BLOCK_R = 32 reduction terms per step; 3 x 3 kernels.
  const auto below = kk::plan_conv2d(layer(31, 64, 1, 4, 3), 1);
  EXPECT_FALSE(below.taps_outer);
  EXPECT_NE(below.reason.find("; terms in order (c=31 < 32)"), std::string::npos) << below.reason;
  const auto at = kk::plan_conv2d(layer(32, 64, 1, 4, 3), 1);
  EXPECT_TRUE(at.taps_outer);
  EXPECT_NE(at.reason.find("; taps outer (c=32 >= 32)"), std::string::npos) << at.reason;
  EXPECT_TRUE(kk::plan_conv2d(layer(33, 64, 1, 4, 3), 1).taps_outer);
  // Only the gemm variant has a reduction order.
  EXPECT_FALSE(kk::plan_conv2d(layer(64, 64, 1, 4, 3), 1, Conv2dVariant::tiled).taps_outer);
}

TEST(Conv2dSelect, GemmRowTileShrinksWhenTheGridWouldNotFillTheUnits) {
  // k = 48 (two 32-channel tiles), 256 positions: 4 tiles of 64, 8 programs.
  const kk::Conv2dShape s = layer(32, 48, 1, 16);
  EXPECT_EQ(kk::plan_conv2d(s, 7).block_positions, 64);
  EXPECT_EQ(kk::plan_conv2d(s, 8).block_positions, 64);
  const auto shrunk = kk::plan_conv2d(s, 9);
  EXPECT_EQ(shrunk.block_positions, 16);
  EXPECT_NE(shrunk.reason.find("BLOCK_M=16 since 64 gives 8 programs < 9 compute units"), std::string::npos)
      << shrunk.reason;
}

TEST(Conv2dSelect, GemmTakes128RowsAt8WarpsBeside64Channels) {
  // c = 32 (taps outer), k = 64: 64-channel tiles; 32 x 32 = 1024 positions
  // give 8 tiles of 128, 16 of 64 and 64 of 16.
  const kk::Conv2dShape s = layer(32, 64, 1, 32, 3);
  const auto wide = kk::plan_conv2d(s, 8);
  EXPECT_EQ(wide.block_positions, 128);
  EXPECT_EQ(wide.num_warps, 8);
  EXPECT_EQ(wide.reason.find("BLOCK_M="), std::string::npos) << wide.reason;
  const auto half = kk::plan_conv2d(s, 9);
  EXPECT_EQ(half.block_positions, 64);
  EXPECT_EQ(half.num_warps, 4);
  EXPECT_NE(half.reason.find(", BLOCK_M=64 since 128 gives 8 programs < 9 compute units"), std::string::npos)
      << half.reason;
  EXPECT_EQ(kk::plan_conv2d(s, 16).block_positions, 64);
  const auto narrow = kk::plan_conv2d(s, 17);
  EXPECT_EQ(narrow.block_positions, 16);
  EXPECT_EQ(narrow.num_warps, 4);
  EXPECT_NE(narrow.reason.find(", BLOCK_M=16 since 128 gives 8, 64 gives 16 programs < 17 compute units"),
            std::string::npos)
      << narrow.reason;
  // The terms in order (c = 31) take the same tiles; narrower channel
  // tiles keep 64 rows at 4 warps (k = 63: 32 channels).
  const auto in_order = kk::plan_conv2d(layer(31, 64, 1, 32, 3), 8);
  EXPECT_FALSE(in_order.taps_outer);
  EXPECT_EQ(in_order.block_positions, 128);
  EXPECT_EQ(in_order.num_warps, 8);
  EXPECT_EQ(kk::plan_conv2d(layer(32, 63, 1, 32, 3), 1).block_positions, 64);
  EXPECT_EQ(kk::plan_conv2d(layer(32, 63, 1, 32, 3), 1).num_warps, 4);
  // The other variants run 4 warps.
  EXPECT_EQ(kk::plan_conv2d(s, 1, Conv2dVariant::tiled).num_warps, 4);
  EXPECT_EQ(kk::plan_conv2d(s, 1, Conv2dVariant::scalar).num_warps, 4);
}

TEST(Conv2dSelect, RequestedVariantsAreHonouredOrRejectedWithTheReason) {
  EXPECT_EQ(kk::plan_conv2d(layer(3, 2), 1, Conv2dVariant::gemm).variant, Conv2dVariant::gemm);
  EXPECT_EQ(kk::plan_conv2d(layer(64, 64), 1, Conv2dVariant::scalar).variant, Conv2dVariant::scalar);
  EXPECT_EQ(kk::plan_conv2d(layer(4, 4, 2), 1, Conv2dVariant::scalar).variant, Conv2dVariant::scalar);
  EXPECT_EQ(
      invalid_argument_of([] { kk::plan_conv2d(layer(4, 4, 2), 1, Conv2dVariant::gemm); }),
      "conv2d_bn_silu --variant gemm: the gemm variant needs groups=1, got groups=2 (use --variant scalar or auto)");
  EXPECT_EQ(
      invalid_argument_of([] { kk::plan_conv2d(layer(4, 4, 4), 1, Conv2dVariant::tiled); }),
      "conv2d_bn_silu --variant tiled: the tiled variant needs groups=1, got groups=4 (use --variant scalar or auto)");
  EXPECT_EQ(kk::conv2d_plan_summary(kk::plan_conv2d(layer(64, 64), 1, Conv2dVariant::tiled)),
            "tiled, 64 positions x 16 channels, 4 warps (tiled as requested)");
  EXPECT_EQ(kk::conv2d_plan_summary(kk::plan_conv2d(layer(64, 64), 1, Conv2dVariant::scalar)),
            "scalar, 128 positions x 1 channel, 4 warps (scalar as requested)");
  EXPECT_EQ(kk::conv2d_plan_summary(kk::plan_conv2d(layer(64, 64), 1, Conv2dVariant::gemm)),
            "gemm, 128 positions x 64 channels x 32 terms, 8 warps (gemm as requested; taps outer (c=64 >= 32): each "
            "tap's window offsets computed once)");
}

}  // namespace
