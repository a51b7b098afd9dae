// Value conversion between element types, as the `cast` op defines it:
// round-to-nearest-even into floats, saturating truncation into integers
// (NaN to 0), wrap-around between integers, `!= 0` into i1.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "element.hpp"

namespace kiln::runtime::interp {

/// Rounds `d` to f32 toward zero and sets the last bit when inexact (round to
/// odd): rounding that to a narrower float then gives the correctly rounded
/// result, which going through a round-to-nearest f32 would not.
inline float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

/// The same for a 64-bit integer magnitude, exactly.
template <class I>
float round_to_odd_float_int(I value) {
  bool negative = false;
  if constexpr (std::is_signed_v<I>) negative = value < 0;
  const std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  if (magnitude < (1ull << 24)) return negative ? -static_cast<float>(magnitude) : static_cast<float>(magnitude);
  const int drop = 64 - std::countl_zero(magnitude) - 24;
  const bool sticky = (magnitude & ((1ull << drop) - 1)) != 0;
  const float kept = std::ldexp(static_cast<float>((magnitude >> drop) | (sticky ? 1u : 0u)), drop);
  return negative ? -kept : kept;
}

/// Truncates a float toward zero into integer `T`, saturating; NaN gives 0.
template <class T>
T saturate_to_int(double v) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  constexpr double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
  // 2^bits (or 2^(bits-1)) is exact in double; the maximum itself may not be.
  constexpr double limit = std::is_signed_v<T> ? -lowest : 2.0 * (static_cast<double>(std::numeric_limits<T>::max() / 2) + 1.0);
  if (v <= lowest) return std::numeric_limits<T>::lowest();
  if (v >= limit) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

/// One element of `From` converted to `To`'s storage.
template <class From, class To>
typename To::S convert(typename From::S x) {
  using S = typename To::S;
  if constexpr (To::is_bool) {
    return From::load(x) != 0 ? 1 : 0;
  } else if constexpr (To::is_pointer || From::is_pointer) {
    static_assert(!To::is_float && !From::is_float, "pointers convert only to and from integers");
    return static_cast<S>(x);
  } else if constexpr (To::is_float) {
    if constexpr (std::is_same_v<S, double> || std::is_same_v<S, float>) {
      return static_cast<S>(From::load(x));  // one round-to-nearest-even step
    } else if constexpr (From::is_float && !std::is_same_v<typename From::S, double>) {
      return S(static_cast<float>(From::load(x)));  // exact widening, then one rounding
    } else if constexpr (From::is_float) {
      return S(round_to_odd_float(x));
    } else {
      return S(round_to_odd_float_int(From::load(x)));
    }
  } else if constexpr (From::is_float) {
    return saturate_to_int<S>(static_cast<double>(From::load(x)));
  } else {
    return static_cast<S>(x);
  }
}

}  // namespace kiln::runtime::interp
