// Calls a generic lambda with the C++ storage type a dtype name stands for.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "kiln/kiln.hpp"

namespace kiln::kernels {

/// fn(std::type_identity<C>{}) for the storage type C among Types whose dtype
/// is named `dtype` ("f32", "bf16"…); any other name throws
/// std::invalid_argument (make_options rejects it before a run already).
template <class First, class... Rest, class F>
decltype(auto) with_dtype(const std::string& dtype, F&& fn) {
  if (dtype == ir::dtype_name(dtype_v<First>)) return fn(std::type_identity<First>{});
  if constexpr (sizeof...(Rest) > 0) return with_dtype<Rest...>(dtype, std::forward<F>(fn));
  else throw std::invalid_argument("unsupported dtype '" + dtype + "'");
}

/// with_dtype over the float dtypes: f32, f16, bf16, f64.
template <class F>
decltype(auto) with_float_dtype(const std::string& dtype, F&& fn) {
  return with_dtype<float, half, bfloat16, double>(dtype, std::forward<F>(fn));
}

/// with_dtype over the dtypes dot takes as inputs with an f32 accumulator:
/// f32, f16, bf16.
template <class F>
decltype(auto) with_dot_dtype(const std::string& dtype, F&& fn) {
  return with_dtype<float, half, bfloat16>(dtype, std::forward<F>(fn));
}

}  // namespace kiln::kernels
