// Rounding rules the constant folder, the interpreter and the emu share, so
// that each device rounds alike: round to odd into f32 (the step before a
// second rounding into a narrower float that then rounds as one rounding
// would), from doubles, from 64-bit integers, and from the fused
// multiply-add of narrow floats.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace kiln {

/// `d` rounded to f32 toward zero with the last bit set when inexact (round
/// to odd): rounding that to a float of at most 22 significant bits (f16,
/// bf16, fp8) gives the correctly rounded result, which a round-to-nearest
/// f32 step would not. NaN stays NaN.
inline float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

/// The same for an integer of up to 64 bits, exactly.
template <class I>
  requires std::is_integral_v<I>
float round_to_odd_float(I value) {
  bool negative = false;
  if constexpr (std::is_signed_v<I>) negative = value < 0;
  const std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  if (magnitude < (1ull << 24)) return negative ? -static_cast<float>(magnitude) : static_cast<float>(magnitude);
  const int drop = 64 - std::countl_zero(magnitude) - 24;
  const bool sticky = (magnitude & ((1ull << drop) - 1)) != 0;
  const float kept = std::ldexp(static_cast<float>((magnitude >> drop) | (sticky ? 1u : 0u)), drop);
  return negative ? -kept : kept;
}

/// a * b + c for narrow-float values a, b, c (at most 12 significant bits
/// each, as f16 and bf16 values are), rounded to odd into f32: rounding that
/// to the narrow format is the single rounding of PTX's fma.rn.f16 and
/// fma.rn.bf16, where an f32 fma followed by a second rounding is not. The
/// product is exact in double; the sum's rounding error, found exactly by
/// two-sum, decides the round-to-odd double, which round_to_odd_float
/// carries on to f32 (round to odd composes).
inline float fused_multiply_add_to_odd(float a, float b, float c) {
  const double product = static_cast<double>(a) * static_cast<double>(b);
  const double sum = product + static_cast<double>(c);
  if (!std::isfinite(sum)) return static_cast<float>(sum);
  const double product_part = sum - static_cast<double>(c);
  const double error = (product - product_part) + (static_cast<double>(c) - (sum - product_part));
  double odd = sum;
  if (error != 0 && (std::bit_cast<std::uint64_t>(sum) & 1u) == 0)
    odd = std::nextafter(sum, error > 0 ? INFINITY : -INFINITY);
  return round_to_odd_float(odd);
}

}  // namespace kiln
