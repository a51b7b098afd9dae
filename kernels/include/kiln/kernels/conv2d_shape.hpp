// The shape of a 2-D convolution layer (NCHW input, [K, C/groups, R, S]
// weights), folding an inference batchnorm into per-channel scale/shift, the
// double-precision reference of conv2d + batchnorm + SiLU and the per-element
// error bound every conv2d kernel is checked against.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kernels/accuracy.hpp"

namespace kiln::kernels {

/// One convolution layer: input [n, c, h, w], weights [k, c/groups, r, s],
/// output [n, k, p, q]. Stride, padding and dilation apply to both spatial axes.
struct Conv2dShape {
  std::int64_t n = 1, c = 1, h = 1, w = 1;  // batch, input channels, input height and width
  std::int64_t k = 1, r = 1, s = 1;         // output channels, kernel height and width
  std::int64_t stride = 1, pad = 0, dilation = 1, groups = 1;

  /// Output height: (h + 2 pad - dilation (r - 1) - 1) / stride + 1.
  std::int64_t p() const { return (h + 2 * pad - dilation * (r - 1) - 1) / stride + 1; }
  /// Output width.
  std::int64_t q() const { return (w + 2 * pad - dilation * (s - 1) - 1) / stride + 1; }
  std::int64_t channels_per_group() const { return c / groups; }
  std::int64_t out_channels_per_group() const { return k / groups; }
  /// Terms summed into each output: (c / groups) r s.
  std::int64_t reduction() const { return channels_per_group() * r * s; }
  std::int64_t input_size() const { return n * c * h * w; }
  std::int64_t weight_size() const { return k * reduction(); }
  std::int64_t output_size() const { return n * k * p() * q(); }
  /// Output positions over the batch: n p q (the GEMM's M).
  std::int64_t positions() const { return n * p() * q(); }

  /// "n=2 c=3 h=7 w=9 k=5 r=3 s=3 stride=2 pad=1 dilation=1 groups=1".
  std::string to_string() const {
    auto f = [](const char* name, std::int64_t v) { return std::string(name) + "=" + std::to_string(v); };
    return f("n", n) + " " + f("c", c) + " " + f("h", h) + " " + f("w", w) + " " + f("k", k) + " " + f("r", r) + " " +
           f("s", s) + " " + f("stride", stride) + " " + f("pad", pad) + " " + f("dilation", dilation) + " " +
           f("groups", groups);
  }
};

/// Throws std::invalid_argument naming the layer and the offending values when
/// the shape is not a valid convolution or its tensors do not fit the kernels'
/// 32-bit offsets.
inline void validate(const Conv2dShape& shape) {
  auto fail = [&](const std::string& why) { throw std::invalid_argument("conv2d " + shape.to_string() + ": " + why); };
  if (shape.n < 1 || shape.c < 1 || shape.h < 1 || shape.w < 1 || shape.k < 1 || shape.r < 1 || shape.s < 1 ||
      shape.stride < 1 || shape.dilation < 1 || shape.groups < 1 || shape.pad < 0)
    fail("sizes, stride, dilation and groups must be at least 1 and pad at least 0");
  if (shape.c % shape.groups != 0 || shape.k % shape.groups != 0)
    fail("groups (" + std::to_string(shape.groups) + ") must divide c (" + std::to_string(shape.c) + ") and k (" +
         std::to_string(shape.k) + ")");
  if (shape.h + 2 * shape.pad < shape.dilation * (shape.r - 1) + 1 ||
      shape.w + 2 * shape.pad < shape.dilation * (shape.s - 1) + 1)
    fail("the dilated kernel (" + std::to_string(shape.dilation * (shape.r - 1) + 1) + "x" +
         std::to_string(shape.dilation * (shape.s - 1) + 1) + ") is larger than the padded input");
  const std::int64_t limit = (std::int64_t{1} << 31) - 1;
  if (shape.input_size() > limit || shape.output_size() > limit || shape.weight_size() > limit)
    fail("input, weights and output must each have fewer than 2^31 elements");
}

/// Batchnorm folded, with an optional conv bias, into y = scale * conv + shift:
/// scale = gamma / sqrt(var + eps), shift = beta + (bias - mean) * scale.
struct FoldedBatchnorm {
  std::vector<float> scale;
  std::vector<float> shift;
};

/// Folds inference batchnorm (running statistics) and the conv bias (empty:
/// none) into per-channel scale and shift, computed in double and rounded once
/// to f32. Throws std::invalid_argument when the vectors' sizes differ or a
/// variance plus eps is not positive.
inline FoldedBatchnorm fold_batchnorm(const std::vector<float>& gamma, const std::vector<float>& beta,
                                      const std::vector<float>& running_mean, const std::vector<float>& running_var,
                                      double eps, const std::vector<float>& conv_bias = {}) {
  const std::size_t k = gamma.size();
  if (beta.size() != k || running_mean.size() != k || running_var.size() != k ||
      (!conv_bias.empty() && conv_bias.size() != k))
    throw std::invalid_argument("fold_batchnorm: gamma has " + std::to_string(k) +
                                " channels but beta, mean, var, bias have " + std::to_string(beta.size()) + ", " +
                                std::to_string(running_mean.size()) + ", " + std::to_string(running_var.size()) + ", " +
                                std::to_string(conv_bias.size()));
  FoldedBatchnorm out{std::vector<float>(k), std::vector<float>(k)};
  for (std::size_t i = 0; i < k; ++i) {
    const double var = static_cast<double>(running_var[i]) + eps;
    if (!(var > 0))
      throw std::invalid_argument("fold_batchnorm: channel " + std::to_string(i) +
                                  " has var + eps = " + std::to_string(var) + ", not positive");
    const double scale = static_cast<double>(gamma[i]) / std::sqrt(var);
    const double bias = conv_bias.empty() ? 0.0 : static_cast<double>(conv_bias[i]);
    out.scale[i] = static_cast<float>(scale);
    out.shift[i] =
        static_cast<float>(static_cast<double>(beta[i]) + (bias - static_cast<double>(running_mean[i])) * scale);
  }
  return out;
}

/// silu(v) = v / (1 + e^-v) in double.
inline double silu_reference(double v) { return v / (1.0 + std::exp(-v)); }

/// The reference output in double and, per element, what its error bounds
/// need: the magnitude |shift| + |scale| sum |x w| that bounds the rounding
/// error of any summation order, and the sizes |scale conv| + |scale conv +
/// shift| of the two intermediates the unfused sequence stores (see
/// conv2d_error_bound).
struct Conv2dReference {
  std::vector<double> y;
  std::vector<double> magnitude;
  std::vector<double> intermediates;
};

/// y[n,k,p,q] = silu(scale[k] conv(x, w)[n,k,p,q] + shift[k]) in double, from
/// inputs stored as T (T converts to float exactly).
template <class T>
Conv2dReference conv2d_bn_silu_reference(const std::vector<T>& x, const std::vector<T>& w,
                                         const std::vector<float>& scale, const std::vector<float>& shift,
                                         const Conv2dShape& shape) {
  const std::int64_t P = shape.p(), Q = shape.q(), cg = shape.channels_per_group(), kg = shape.out_channels_per_group();
  const auto size = static_cast<std::size_t>(shape.output_size());
  Conv2dReference out{std::vector<double>(size), std::vector<double>(size), std::vector<double>(size)};
  for (std::int64_t n = 0; n < shape.n; ++n)
    for (std::int64_t k = 0; k < shape.k; ++k) {
      const std::int64_t group = k / kg;
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t q = 0; q < Q; ++q) {
          double sum = 0, abs_sum = 0;
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t r = 0; r < shape.r; ++r)
              for (std::int64_t s = 0; s < shape.s; ++s) {
                const std::int64_t ih = p * shape.stride - shape.pad + r * shape.dilation;
                const std::int64_t iw = q * shape.stride - shape.pad + s * shape.dilation;
                if (ih < 0 || ih >= shape.h || iw < 0 || iw >= shape.w) continue;
                const double xv = static_cast<double>(static_cast<float>(
                    x[static_cast<std::size_t>(((n * shape.c + group * cg + c) * shape.h + ih) * shape.w + iw)]));
                const double wv = static_cast<double>(
                    static_cast<float>(w[static_cast<std::size_t>(((k * cg + c) * shape.r + r) * shape.s + s)]));
                sum += xv * wv;
                abs_sum += std::abs(xv * wv);
              }
          const auto i = static_cast<std::size_t>(((n * shape.k + k) * P + p) * Q + q);
          const double sc = scale[static_cast<std::size_t>(k)], sh = shift[static_cast<std::size_t>(k)];
          out.y[i] = silu_reference(sc * sum + sh);
          out.magnitude[i] = std::abs(sh) + std::abs(sc) * abs_sum;
          out.intermediates[i] = std::abs(sc * sum) + std::abs(sc * sum + sh);
        }
    }
  return out;
}

/// The largest |got - want| allowed at each output, for outputs stored as
/// `out` (f32, f16 or bf16), fused or (`unfused`) with the conv and batchnorm
/// outputs also rounded to `out`. Derivation, with u = 2^-24 (f32), u_out the
/// unit roundoff of `out` and L the reduction length:
/// - products of inputs stored as f16/bf16 are exact in f32 (11 + 11 and
///   8 + 8 significant bits fit in 24), of f32 inputs rounded once; summing L
///   of them in f32 in any order (a loop, or dot's tiles), then
///   scale * sum + shift (a multiply and an add), errs by at most
///   gamma_{L+3}(u) * magnitude, magnitude = |shift| + |scale| sum |x w|
///   (Higham, Accuracy and Stability, lemma 3.1 and section 3.1);
/// - unfused, rounding the conv output to `out` errs (in units of scale conv)
///   by at most u_out (|scale conv| + gamma magnitude), and rounding the
///   batchnorm output by at most u_out (|scale conv + shift| + (gamma +
///   u_out) magnitude): together u_out (intermediates + 2 (gamma + u_out)
///   magnitude);
/// - silu is 1.1-Lipschitz (its derivative peaks at 1.0998), so these reach
///   y multiplied by at most 1.1;
/// - silu itself in f32: exp within 4 ulps (libm), then an add, a divide and
///   a multiply: 8 u relative to |y|; the final rounding to `out` adds
///   u_out |y|, or, below the smallest normal of `out`, half a subnormal
///   spacing, at most u_out * smallest normal.
inline std::vector<double> conv2d_error_bound(const Conv2dReference& reference, std::int64_t reduction, ir::DType out,
                                              bool unfused = false) {
  const double u = unit_roundoff(ir::DType::f32), u_out = unit_roundoff(out);
  const double min_normal_out = out == ir::DType::f16 ? std::ldexp(1.0, -14) : std::ldexp(1.0, -126);
  const double n = static_cast<double>(reduction + 3);
  const double gamma = n * u / (1 - n * u);
  std::vector<double> bound(reference.y.size());
  for (std::size_t i = 0; i < bound.size(); ++i) {
    const double stored =
        unfused ? u_out * (reference.intermediates[i] + 2 * (gamma + u_out) * reference.magnitude[i]) : 0.0;
    bound[i] = 1.1 * (gamma * reference.magnitude[i] + stored) + (8 * u + u_out) * std::abs(reference.y[i]) +
               u_out * min_normal_out;
  }
  return bound;
}

/// The normwise form of conv2d_error_bound, for relative_error:
/// ||bound|| / ||y||, the largest ||got - y|| / ||y|| the per-element bounds allow.
inline double conv2d_relative_tolerance(const Conv2dReference& reference, const std::vector<double>& bound) {
  return normwise_tolerance(reference.y, bound);
}

}  // namespace kiln::kernels
