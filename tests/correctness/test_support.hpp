// Shared helpers for the correctness tests: seeded random inputs per dtype,
// per-dtype tolerances and comparisons with a readable failure message.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::test {

/// True for the narrow host float types (f16, bf16, fp8).
template <class T>
inline constexpr bool is_narrow_float_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16> ||
                                          std::is_same_v<T, float8_e4m3> || std::is_same_v<T, float8_e5m2>;

/// True for every floating storage type.
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_narrow_float_v<T>;

/// The value of an element as a double (exact for every dtype except 64-bit
/// integers beyond 2^53).
template <class T>
double as_double(T v) {
  if constexpr (is_narrow_float_v<T>) return static_cast<double>(static_cast<float>(v));
  else return static_cast<double>(v);
}

/// A double rounded to T (ints truncate). Narrow floats go through f32, two
/// roundings to nearest even: equal to one rounding when the double is a sum,
/// difference, product or quotient of two T values (f32 has at least 2p + 2
/// bits for T's p), and otherwise off only for doubles within 2^-24 of a tie.
template <class T>
T from_double(double v) {
  if constexpr (is_narrow_float_v<T>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

/// The largest finite value of T.
template <class T>
double max_finite() {
  if constexpr (std::is_same_v<T, half>) return 65504.0;
  else if constexpr (std::is_same_v<T, bfloat16>) return 3.3895313892515355e38;
  else if constexpr (std::is_same_v<T, float8_e4m3>) return 448.0;
  else if constexpr (std::is_same_v<T, float8_e5m2>) return 57344.0;
  else return static_cast<double>(std::numeric_limits<T>::max());
}

/// The smallest positive normal value of T (the absolute floor of expect_close).
template <class T>
double min_normal() {
  if constexpr (std::is_same_v<T, half>) return 0x1p-14;
  else if constexpr (std::is_same_v<T, bfloat16>) return 0x1p-126;
  else if constexpr (std::is_same_v<T, float8_e4m3>) return 0x1p-6;
  else if constexpr (std::is_same_v<T, float8_e5m2>) return 0x1p-14;
  else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(std::numeric_limits<T>::min());
  else return 1.0;
}

/// `n` seeded random values of T, uniform in [lo, hi]. Integers: the range is
/// clipped to what T holds and rounded inward to integers. Floats: drawn in
/// double and rounded to T. Never all zeros: if every draw is zero, element 0 is
/// replaced by the nonzero bound nearest to zero.
template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed, double lo = -4, double hi = 4) {
  std::mt19937_64 rng(seed);
  std::vector<T> out(n);
  if constexpr (std::is_integral_v<T>) {
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    const double tmin = static_cast<double>(std::numeric_limits<T>::min());
    const double tmax = static_cast<double>(std::numeric_limits<T>::max());
    // 2^63 and 2^64 are not representable in the wide type: stay just below.
    const double cap = std::is_signed_v<T> ? 0x1p63 : 0x1p64;
    const double clo = std::ceil(std::max(lo, tmin));
    const double chi = std::floor(std::min(hi, tmax));
    const Wide wlo = static_cast<Wide>(clo);
    const Wide whi = chi >= cap ? std::numeric_limits<Wide>::max() : static_cast<Wide>(chi);
    std::uniform_int_distribution<Wide> dist(wlo, whi);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(dist(rng));
    if (n > 0 && std::all_of(out.begin(), out.end(), [](T v) { return v == T{}; }))
      out[0] = whi != 0 ? static_cast<T>(whi) : static_cast<T>(wlo);
  } else {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (std::size_t i = 0; i < n; ++i) out[i] = from_double<T>(dist(rng));
    if (n > 0 && std::all_of(out.begin(), out.end(), [](T v) { return as_double(v) == 0.0; }))
      out[0] = from_double<T>(hi != 0 ? hi : lo);
  }
  return out;
}

/// A buffer on the default device holding `host` (also for std::vector<bool>,
/// which Buffer::from cannot view as a span).
template <class T>
Buffer<T> to_buffer(const std::vector<T>& host) {
  const std::unique_ptr<T[]> elements(new T[host.size()]);
  std::copy(host.begin(), host.end(), elements.get());
  return Buffer<T>::from(std::span<const T>(elements.get(), host.size()));
}

/// Relative tolerance of one correctly rounded result in T, with a margin of a
/// few roundings: the unit roundoff of T is 2^-(mantissa bits + 1), so one
/// rounding of a wider exact result is within 2^-(m+1) relative; 2^-m allows
/// two such roundings (an input rounding plus the result rounding). f32 and f64
/// allow more (2^-20 ~ 1e-6 and 2^-44 ~ 6e-14) because their math functions come
/// from libm, which is accurate to a few ulps, not correctly rounded. Ints: 0.
template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, half>) return 0x1p-10;
  else if constexpr (std::is_same_v<T, bfloat16>) return 0x1p-7;
  else if constexpr (std::is_same_v<T, float8_e4m3>) return 0x1p-3;
  else if constexpr (std::is_same_v<T, float8_e5m2>) return 0x1p-2;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-20;
  else if constexpr (std::is_same_v<T, double>) return 0x1p-44;
  else return 0.0;
}

namespace detail {

template <class T>
std::string show(T v) {
  std::ostringstream s;
  s.precision(17);
  if constexpr (std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, bool>)
    s << static_cast<int>(v);
  else if constexpr (is_narrow_float_v<T>)
    s << static_cast<float>(v) << " (bits 0x" << std::hex << static_cast<unsigned>(v.bits) << ")";
  else if constexpr (std::is_floating_point_v<T>)
    s << v << " (bits 0x" << std::hex
      << std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(v) << ")";
  else s << v;
  return s.str();
}

}  // namespace detail

/// Checks got[i] against want[i] for all i: equal, or both NaN, or
/// |got - want| <= rel_tol * max(|want|, smallest normal of T) + abs_tol[i]
/// (abs_tol may be empty: no absolute allowance). Reports the first
/// mismatching index with both values and the number of mismatches.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<double>& want, double rel_tol,
                  const std::vector<double>& abs_tol, const char* what) {
  if (got.size() != want.size() || (!abs_tol.empty() && abs_tol.size() != want.size())) {
    ADD_FAILURE() << what << ": got " << got.size() << " elements, want " << want.size();
    return;
  }
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = as_double(got[i]);
    const double w = want[i];
    const double allowance = rel_tol * std::max(std::abs(w), min_normal<T>()) + (abs_tol.empty() ? 0.0 : abs_tol[i]);
    bool ok;
    if (std::isnan(w) || std::isnan(g)) ok = std::isnan(w) && std::isnan(g);
    else if (g == w) ok = true;
    else ok = std::isfinite(w) && std::abs(g - w) <= allowance;
    if (!ok && bad++ == 0) first = i;
  }
  if (bad != 0) {
    std::ostringstream s;
    s.precision(17);
    s << want[first] << " (relative tolerance " << rel_tol;
    if (!abs_tol.empty()) s << ", absolute allowance " << abs_tol[first];
    s << ")";
    ADD_FAILURE() << what << ": " << bad << " of " << got.size() << " elements differ; first at index " << first
                  << ": got " << detail::show(got[first]) << ", want " << s.str();
  }
}

/// Checks got[i] against want[i] for all i: equal, or both NaN, or
/// |got - want| <= rel_tol * max(|want|, smallest normal of T). With rel_tol 0
/// the values must be equal. Reports the first mismatching index with both
/// values and the number of mismatches.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<double>& want, double rel_tol, const char* what) {
  expect_close(got, want, rel_tol, {}, what);
}

/// Checks got[i] == want[i] exactly for all i: integers by value, floats by bit
/// pattern (so -0 differs from +0) except that any NaN matches any NaN. Use it
/// where double cannot hold the values (64-bit ints) or bits matter.
template <class T>
void expect_equal(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  if (got.size() != want.size()) {
    ADD_FAILURE() << what << ": got " << got.size() << " elements, want " << want.size();
    return;
  }
  auto same = [](T a, T b) {
    if constexpr (is_narrow_float_v<T>) {
      const bool na = std::isnan(static_cast<float>(a)), nb = std::isnan(static_cast<float>(b));
      return (na && nb) || (!na && !nb && a.bits == b.bits);
    } else if constexpr (std::is_floating_point_v<T>) {
      using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      return (std::isnan(a) && std::isnan(b)) || std::bit_cast<Bits>(a) == std::bit_cast<Bits>(b);
    } else {
      return a == b;
    }
  };
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same(got[i], want[i]) && bad++ == 0) first = i;
  if (bad != 0)
    ADD_FAILURE() << what << ": " << bad << " of " << got.size() << " elements differ; first at index " << first
                  << ": got " << detail::show(got[first]) << ", want " << detail::show(want[first]);
}

/// Relative error allowed for a function within `ulps` of the correctly
/// rounded result (so within ulps + 1/2 of the exact one, and one ulp of a
/// normal w is at most 2^-23 |w| in f32, 2^-52 |w| in f64). f16 and bf16
/// compute in f32 and round once more: plus their unit roundoff (2^-11, 2^-8).
template <class T>
double function_tolerance(double ulps_f32, double ulps_f64) {
  if constexpr (std::is_same_v<T, double>) return (ulps_f64 + 1) * 0x1p-52;
  const double in_f32 = (ulps_f32 + 1) * 0x1p-23;
  if constexpr (std::is_same_v<T, float>) return in_f32;
  else if constexpr (std::is_same_v<T, half>) return 0x1p-11 + in_f32;
  else return 0x1p-8 + in_f32;
}

/// Dtype lists for TYPED_TEST suites.
using IntTypes = ::testing::Types<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                                  std::uint32_t, std::uint64_t>;
using FloatTypes = ::testing::Types<half, bfloat16, float, double>;
using NumericTypes = ::testing::Types<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t,
                                      std::uint16_t, std::uint32_t, std::uint64_t, half, bfloat16, float, double>;
/// Every storage type, i1 (bool) and fp8 included.
using AllTypes =
    ::testing::Types<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                     std::uint32_t, std::uint64_t, half, bfloat16, float, double, float8_e4m3, float8_e5m2>;

/// Readable names for typed tests (pass as the third argument of TYPED_TEST_SUITE).
struct DTypeNames {
  template <class T>
  static std::string GetName(int) {
    return std::string(ir::dtype_name(dtype_v<T>));
  }
};

}  // namespace kiln::test
