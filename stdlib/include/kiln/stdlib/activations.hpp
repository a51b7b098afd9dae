// Activation functions written in the language: sigmoid, silu, gelu, relu.
#pragma once

#include <limits>

#include "kiln/dsl/math.hpp"
#include "kiln/dsl/shape_ops.hpp"

namespace kiln {

/// 1 / (1 + e^-x).
template <Numeric X>
plain_t<X> sigmoid(const X& x, std::source_location loc = std::source_location::current()) {
  return plain_t<X>(detail::apply_binary<detail::Binary::div>(
      1.0, detail::apply_binary<detail::Binary::add>(1.0, exp(-Located<const X>(x, loc), loc), loc), loc));
}

/// x * sigmoid(x) (SiLU, "swish").
template <Numeric X>
plain_t<X> silu(const X& x, std::source_location loc = std::source_location::current()) {
  return plain_t<X>(detail::apply_binary<detail::Binary::mul>(x, sigmoid(x, loc), loc));
}

/// max(x, 0).
template <Numeric X>
plain_t<X> relu(const X& x, std::source_location loc = std::source_location::current()) {
  return plain_t<X>(maximum(x, 0, loc));
}

namespace detail {

/// x/2 * (1 + t) for GELU's t in [-1, 1], with GELU's limit at x = -inf: there
/// t = -1 and the product would be -inf * 0, NaN, where GELU tends to -0 (as
/// the product is for every large finite negative x, whose 1 + t is 0).
template <Numeric X, Numeric T>
plain_t<X> gelu_from(const X& x, const T& t, std::source_location loc) {
  auto y =
      apply_binary<Binary::mul>(apply_binary<Binary::mul>(x, 0.5, loc), apply_binary<Binary::add>(t, 1.0, loc), loc);
  auto at_negative_infinity = apply_binary<Binary::eq>(x, -std::numeric_limits<double>::infinity(), loc);
  return plain_t<X>(where(at_negative_infinity, -0.0, y, loc));
}

}  // namespace detail

/// GELU, exact form: x/2 * (1 + erf(x / sqrt(2))); -0 at -inf, +inf at +inf,
/// NaN only for NaN.
template <Numeric X>
plain_t<X> gelu(const X& x, std::source_location loc = std::source_location::current()) {
  return detail::gelu_from(x, erf(detail::apply_binary<detail::Binary::mul>(x, 0.7071067811865476, loc), loc), loc);
}

/// GELU, tanh approximation: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)));
/// -0 at -inf, +inf at +inf, NaN only for NaN.
template <Numeric X>
plain_t<X> gelu_tanh(const X& x, std::source_location loc = std::source_location::current()) {
  using detail::apply_binary;
  using detail::Binary;
  auto cube = apply_binary<Binary::mul>(apply_binary<Binary::mul>(x, x, loc), x, loc);
  auto arg = apply_binary<Binary::mul>(
      apply_binary<Binary::add>(x, apply_binary<Binary::mul>(cube, 0.044715, loc), loc), 0.7978845608028654, loc);
  return detail::gelu_from(x, tanh(arg, loc), loc);
}

}  // namespace kiln
