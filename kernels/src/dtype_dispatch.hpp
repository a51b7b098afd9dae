// Calls a generic lambda with the C++ storage type named by a dtype string.
#pragma once

#include <stdexcept>
#include <string>

#include "kiln/ir/numeric.hpp"

namespace kiln::kernels {

template <class T>
struct type_tag {
  using type = T;
};

/// fn(type_tag<float>{}) for "f32", and likewise for f16, bf16 and f64.
template <class F>
decltype(auto) with_float_dtype(const std::string& dtype, F&& fn) {
  if (dtype == "f32") return fn(type_tag<float>{});
  if (dtype == "f16") return fn(type_tag<half>{});
  if (dtype == "bf16") return fn(type_tag<bfloat16>{});
  if (dtype == "f64") return fn(type_tag<double>{});
  throw std::invalid_argument("unsupported dtype '" + dtype + "'");
}

}  // namespace kiln::kernels
