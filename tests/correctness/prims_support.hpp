// Helpers for the tests of the standard library's tile primitives (flip, cat,
// gather, sort, …): element bit patterns, inputs salted with special floats,
// and the offsets of a program's 2-D tile.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace kiln::test::prims {

/// The unsigned integer type of T's width.
template <class T>
using bits_t = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                                  std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                     std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

/// The bit pattern of v (bool: 0 or 1).
template <class T>
bits_t<T> bits_of(T v) {
  if constexpr (is_narrow_float_v<T>) return v.bits;
  else if constexpr (std::is_same_v<T, bool>) return v ? 1 : 0;
  else return std::bit_cast<bits_t<T>>(v);
}

/// The value whose bit pattern is b.
template <class T>
T from_bits(bits_t<T> b) {
  if constexpr (is_narrow_float_v<T>) return T::from_bits(b);
  else if constexpr (std::is_same_v<T, bool>) return b != 0;
  else return std::bit_cast<T>(b);
}

/// The bits of T's positive quiet NaN without payload.
template <class T>
bits_t<T> quiet_nan_bits() {
  if constexpr (std::is_same_v<T, half>) return 0x7E00;
  else if constexpr (std::is_same_v<T, bfloat16>) return 0x7FC0;
  else if constexpr (std::is_same_v<T, float8_e5m2>) return 0x7E;
  else if constexpr (std::is_same_v<T, float8_e4m3>) return 0x7F;
  else if constexpr (std::is_same_v<T, float>) return 0x7FC00000u;
  else return 0x7FF8000000000000ull;
}

/// Quiet NaN of T with the given sign and a payload in its low bits.
template <class T>
T nan_with_payload(bool negative, unsigned payload) {
  const bits_t<T> quiet = quiet_nan_bits<T>();
  bits_t<T> b = static_cast<bits_t<T>>(quiet | static_cast<bits_t<T>>(payload & 0x3));
  if (negative) b = static_cast<bits_t<T>>(b | (bits_t<T>{1} << (8 * sizeof(T) - 1)));
  return from_bits<T>(b);
}

/// `n` seeded random values of T in [lo, hi]; for floats about one in four is
/// replaced by a special value: ±0, ±inf, or a NaN of either sign with a payload.
template <class T>
std::vector<T> values_with_specials(std::size_t n, std::uint64_t seed, double lo, double hi) {
  auto out = random_values<T>(n, seed, lo, hi);
  if constexpr (is_float_v<T> && !std::is_same_v<T, float8_e4m3>) {
    std::mt19937_64 rng(seed ^ 0x5eed);
    for (auto& v : out) {
      switch (rng() % 16) {
        case 0: v = from_double<T>(0.0); break;
        case 1: v = from_double<T>(-0.0); break;
        case 2: v = from_double<T>(std::numeric_limits<double>::infinity()); break;
        case 3: v = from_double<T>(-std::numeric_limits<double>::infinity()); break;
        case 4: v = nan_with_payload<T>(false, static_cast<unsigned>(rng())); break;
        case 5: v = nan_with_payload<T>(true, static_cast<unsigned>(rng())); break;
        default: break;
      }
    }
  }
  return out;
}

}  // namespace kiln::test::prims
