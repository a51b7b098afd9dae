// How far a kernel's output may be from its reference: the unit roundoff of a
// dtype and the normwise relative error. Shared by the registry entries and
// the kernel tests, which derive every tolerance from these.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "kiln/ir/dtype.hpp"

namespace kiln::kernels {

/// Unit roundoff of a float dtype: 2^-(mantissa bits + 1); f32's for the rest.
inline double unit_roundoff(ir::DType t) {
  switch (t) {
    case ir::DType::f16: return std::ldexp(1.0, -11);
    case ir::DType::bf16: return std::ldexp(1.0, -8);
    case ir::DType::f64: return std::ldexp(1.0, -53);
    case ir::DType::f8e4m3: return std::ldexp(1.0, -4);
    case ir::DType::f8e5m2: return std::ldexp(1.0, -3);
    default: return std::ldexp(1.0, -24);
  }
}

/// ||got - want|| / ||want|| in double (the normwise relative error);
/// ||got - want|| when want is all zeros.
template <class T, class U>
double relative_error(const std::vector<T>& got, const std::vector<U>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    diff += (g - w) * (g - w);
    norm += w * w;
  }
  return norm == 0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

/// ||bounds|| / ||want||: the largest normwise relative error that per-element
/// error bounds allow (|got_i - want_i| <= bounds_i for every i implies
/// ||got - want|| <= ||bounds||); ||bounds|| when want is all zeros, matching
/// relative_error.
inline double normwise_tolerance(const std::vector<double>& want, const std::vector<double>& bounds) {
  double bound = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    bound += bounds[i] * bounds[i];
    norm += want[i] * want[i];
  }
  return norm == 0 ? std::sqrt(bound) : std::sqrt(bound / norm);
}

}  // namespace kiln::kernels
