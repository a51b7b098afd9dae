// Helpers for the references of the memory, reduction, dot, random and
// control-flow tests: accumulation dtypes, unit roundoffs, wrapping integer
// arithmetic and comparisons against per-element absolute error bounds.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace kiln::test {

/// The host type kl::sum/cumsum/cumprod produce for inputs stored as C: narrow
/// floats accumulate in f32, ints narrower than 32 bits in i32 (u32 if unsigned).
template <class C>
struct sum_storage {
  using type = C;
};
template <>
struct sum_storage<half> {
  using type = float;
};
template <>
struct sum_storage<bfloat16> {
  using type = float;
};
template <>
struct sum_storage<std::int8_t> {
  using type = std::int32_t;
};
template <>
struct sum_storage<std::int16_t> {
  using type = std::int32_t;
};
template <>
struct sum_storage<std::uint8_t> {
  using type = std::uint32_t;
};
template <>
struct sum_storage<std::uint16_t> {
  using type = std::uint32_t;
};
template <class C>
using sum_storage_t = typename sum_storage<C>::type;

/// The host type of kl::dot's accumulator for inputs stored as C: i32 for i8,
/// f32 otherwise.
template <class C>
using dot_accumulator_t = std::conditional_t<std::is_integral_v<C>, std::int32_t, float>;

/// Unit roundoff u of a float type: one rounding to T has relative error <= u
/// (2^-(mantissa bits + 1)).
template <class T>
constexpr double unit_roundoff() {
  if constexpr (std::is_same_v<T, half>) return 0x1p-11;
  else if constexpr (std::is_same_v<T, bfloat16>) return 0x1p-8;
  else if constexpr (std::is_same_v<T, float8_e4m3>) return 0x1p-4;
  else if constexpr (std::is_same_v<T, float8_e5m2>) return 0x1p-3;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-24;
  else return 0x1p-53;
}

/// gamma_n = n u / (1 - n u): the classic bound on the relative error of n
/// successive roundings (Higham, Accuracy and Stability, lemma 3.1). A
/// recursive sum of n terms is within gamma_{n-1} * sum|x_i| of the exact sum,
/// in any order; a product of n factors is within gamma_{n-1} relative.
inline double gamma_bound(double n, double u) { return n * u / (1 - n * u); }

/// The exact inner products (in double) of each row i of a (m x k,
/// row-major) with each column j of b, whose element (t, j) is
/// b[t * b_step_k + j * b_step_n], row-major over (i, j), and beside each
/// the sum of its terms' magnitudes, sum |a b|, that error bounds scale.
struct InnerProducts {
  std::vector<double> sums, magnitudes;
};
template <class T>
InnerProducts inner_products(const std::vector<T>& a, const std::vector<T>& b, int m, int n, int k,
                             std::size_t b_step_k, std::size_t b_step_n) {
  InnerProducts out;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int t = 0; t < k; ++t) {
        const double p = as_double(a[static_cast<std::size_t>(i) * k + t]) *
                         as_double(b[static_cast<std::size_t>(t) * b_step_k + static_cast<std::size_t>(j) * b_step_n]);
        sum += p;
        magnitude += std::abs(p);
      }
      out.sums.push_back(sum);
      out.magnitudes.push_back(magnitude);
    }
  return out;
}

/// The low bits of `bits` as T: integer arithmetic done in uint64_t (where it
/// wraps without undefined behaviour) brought to T's width, two's complement.
template <class T>
T wrap(std::uint64_t bits) {
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(bits));
}

/// Checks |got[i] - want[i]| <= bound[i] for all i (and equality where the
/// bound is 0); reports the first failure with the values and the bound.
template <class T>
void expect_within(const std::vector<T>& got, const std::vector<double>& want, const std::vector<double>& bound,
                   const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  ASSERT_EQ(bound.size(), want.size()) << what;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = as_double(got[i]);
    if (!(std::abs(g - want[i]) <= bound[i]) && bad++ == 0) first = i;
  }
  if (bad != 0) {
    std::ostringstream s;
    s.precision(17);
    s << what << ": " << bad << " of " << got.size() << " elements outside their bound; first at index " << first
      << ": got " << as_double(got[first]) << ", want " << want[first] << ", |difference| "
      << std::abs(as_double(got[first]) - want[first]) << " > bound " << bound[first];
    ADD_FAILURE() << s.str();
  }
}

}  // namespace kiln::test
