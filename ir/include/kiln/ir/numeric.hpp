// Host storage types for the narrow floats (f16, bf16, fp8 e4m3/e5m2) with
// round-to-nearest-even conversion from float and exact conversion to float.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace kiln {

namespace detail {

// Rounds an f32 to a narrower IEEE-like format with `exp_bits` exponent bits
// and `man_bits` mantissa bits, round-to-nearest-even, returning its bits.
// A `saturating` conversion (the fp8 formats, like the GPU's
// `cvt.rn.satfinite`) gives the largest finite value of the input's sign for
// an infinity and for a value that rounds past that largest value; NaN stays
// NaN. Otherwise overflow gives infinity, or NaN in a `finite_only` format.
constexpr std::uint32_t round_float(float f, int exp_bits, int man_bits, bool finite_only, bool saturating) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 31) << (exp_bits + man_bits);
  const std::uint32_t abs = x & 0x7fffffffu;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const std::uint32_t exp_all_ones = (1u << exp_bits) - 1;
  const std::uint32_t nan_bits = finite_only ? ((exp_all_ones << man_bits) | ((1u << man_bits) - 1))
                                             : ((exp_all_ones << man_bits) | (1u << (man_bits - 1)));
  if (abs > 0x7f800000u) return sign | nan_bits;
  // Largest finite value of the target, as an f32 bit pattern plus half an ulp.
  const int max_exp = finite_only ? static_cast<int>(exp_all_ones) - bias : static_cast<int>(exp_all_ones) - 1 - bias;
  const std::uint32_t max_man = finite_only ? ((1u << man_bits) - 2) : ((1u << man_bits) - 1);
  const std::uint32_t max_bits = (static_cast<std::uint32_t>(max_exp + bias) << man_bits) | max_man;
  const std::uint32_t overflow_bits = saturating ? max_bits : finite_only ? nan_bits : exp_all_ones << man_bits;
  if (abs == 0x7f800000u) return sign | overflow_bits;
  const int e = static_cast<int>(abs >> 23) - 127;
  std::uint32_t out;
  if (e < 1 - bias || (abs >> 23) == 0) {
    // Subnormal in the target (or zero): align to the fixed subnormal step.
    const int effective_exp = (abs >> 23) == 0 ? -126 : e;  // f32 subnormals have no implicit bit
    const int shift = (1 - bias) - effective_exp;           // right shift beyond the mantissa cut
    if (shift > man_bits + 1 + 1) return sign;
    const std::uint32_t mant = (abs & 0x7fffffu) | (e >= -126 ? 0x800000u : 0u);
    const int total = 23 - man_bits + shift;
    if (total >= 32) return sign;
    const std::uint32_t kept = mant >> total;
    const std::uint32_t rest = mant & ((1u << total) - 1);
    const std::uint32_t half = 1u << (total - 1);
    out = kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
  } else {
    const int cut = 23 - man_bits;
    const std::uint32_t kept = abs >> cut;  // exponent and mantissa, f32 bias
    const std::uint32_t rest = abs & ((1u << cut) - 1);
    const std::uint32_t half = 1u << (cut - 1);
    std::uint32_t rounded = kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
    // Rebias the exponent field.
    const std::int64_t rebased =
        static_cast<std::int64_t>(rounded) - (static_cast<std::int64_t>(127 - bias) << man_bits);
    out = static_cast<std::uint32_t>(rebased);
    if (out > max_bits) return sign | overflow_bits;
  }
  return sign | out;
}

constexpr float widen_float(std::uint32_t bits, int exp_bits, int man_bits, bool finite_only) {
  const std::uint32_t sign = (bits >> (exp_bits + man_bits)) & 1u;
  const std::uint32_t exp = (bits >> man_bits) & ((1u << exp_bits) - 1);
  const std::uint32_t man = bits & ((1u << man_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  const std::uint32_t exp_all_ones = (1u << exp_bits) - 1;
  std::uint32_t out;
  if (exp == exp_all_ones && (!finite_only || man == (1u << man_bits) - 1)) {
    out = (man != 0 || finite_only) ? 0x7fc00000u : 0x7f800000u;
  } else if (exp == 0) {
    if (man == 0) {
      out = 0;
    } else if (exp_bits == 8) {
      // Same exponent range as f32: the subnormal is an f32 subnormal too.
      out = man << (23 - man_bits);
    } else {
      // Normalise the subnormal.
      int e = 1 - bias;
      std::uint32_t m = man;
      while ((m & (1u << man_bits)) == 0) {
        m <<= 1;
        --e;
      }
      m &= (1u << man_bits) - 1;
      out = (static_cast<std::uint32_t>(e + 127) << 23) | (m << (23 - man_bits));
    }
  } else {
    out = (static_cast<std::uint32_t>(static_cast<int>(exp) - bias + 127) << 23) | (man << (23 - man_bits));
  }
  return std::bit_cast<float>((sign << 31) | out);
}

/// The storage and conversions of a narrow float type `Derived` (CRTP), so
/// that each type is a class of its own name: compile errors say
/// `kiln::half`, not the parameters of this template.
template <int ExpBits, int ManBits, bool FiniteOnly, bool Saturating, class Storage, class Derived>
struct NarrowFloat {
  Storage bits = 0;
  constexpr NarrowFloat() = default;
  constexpr explicit NarrowFloat(float f)
      : bits(static_cast<Storage>(round_float(f, ExpBits, ManBits, FiniteOnly, Saturating))) {}
  constexpr explicit NarrowFloat(double d) : NarrowFloat(static_cast<float>(d)) {}
  static constexpr Derived from_bits(Storage b) {
    Derived h;
    h.bits = b;
    return h;
  }
  constexpr operator float() const { return widen_float(bits, ExpBits, ManBits, FiniteOnly); }
  friend constexpr bool operator==(Derived a, Derived b) { return float(a) == float(b); }
};

}  // namespace detail

/// IEEE binary16.
struct half : detail::NarrowFloat<5, 10, false, false, std::uint16_t, half> {
  using NarrowFloat::NarrowFloat;
};
/// bfloat16: the top half of an f32.
struct bfloat16 : detail::NarrowFloat<8, 7, false, false, std::uint16_t, bfloat16> {
  using NarrowFloat::NarrowFloat;
};
/// OCP fp8 e4m3 ("fn": no infinities, one NaN pattern, max 448); conversion
/// to it saturates at ±448.
struct float8_e4m3 : detail::NarrowFloat<4, 3, true, true, std::uint8_t, float8_e4m3> {
  using NarrowFloat::NarrowFloat;
};
/// OCP fp8 e5m2 (IEEE-like, with infinities); conversion to it saturates at
/// ±57344 (an infinity converts to ±57344 too; widening keeps infinities).
struct float8_e5m2 : detail::NarrowFloat<5, 2, false, true, std::uint8_t, float8_e5m2> {
  using NarrowFloat::NarrowFloat;
};

}  // namespace kiln
