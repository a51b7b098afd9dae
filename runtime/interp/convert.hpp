// Value conversion between element types, as the `cast` op defines it:
// round-to-nearest-even into floats, saturating truncation into integers
// (NaN to 0), wrap-around between integers, `!= 0` into i1.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "element.hpp"
#include "kiln/ir/rounding.hpp"

namespace kiln::runtime::interp {

/// Truncates a float toward zero into integer `T`, saturating; NaN gives 0.
template <class T>
T saturate_to_int(double v) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  constexpr double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
  // 2^bits (or 2^(bits-1)) is exact in double; the maximum itself may not be.
  constexpr double limit =
      std::is_signed_v<T> ? -lowest : 2.0 * (static_cast<double>(std::numeric_limits<T>::max() / 2) + 1.0);
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
      return S(round_to_odd_float(From::load(x)));
    }
  } else if constexpr (From::is_float) {
    return saturate_to_int<S>(static_cast<double>(From::load(x)));
  } else {
    return static_cast<S>(x);
  }
}

}  // namespace kiln::runtime::interp
