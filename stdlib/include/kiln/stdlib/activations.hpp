// Activation functions written in the language: sigmoid, silu, gelu, relu.
#pragma once

#include "kiln/dsl/math.hpp"

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

/// GELU, exact form: x/2 * (1 + erf(x / sqrt(2))).
template <Numeric X>
plain_t<X> gelu(const X& x, std::source_location loc = std::source_location::current()) {
  using detail::apply_binary;
  using detail::Binary;
  auto inner = erf(apply_binary<Binary::mul>(x, 0.7071067811865476, loc), loc);
  return plain_t<X>(apply_binary<Binary::mul>(apply_binary<Binary::mul>(x, 0.5, loc),
                                              apply_binary<Binary::add>(inner, 1.0, loc), loc));
}

/// GELU, tanh approximation: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
template <Numeric X>
plain_t<X> gelu_tanh(const X& x, std::source_location loc = std::source_location::current()) {
  using detail::apply_binary;
  using detail::Binary;
  auto cube = apply_binary<Binary::mul>(apply_binary<Binary::mul>(x, x, loc), x, loc);
  auto arg = apply_binary<Binary::mul>(
      apply_binary<Binary::add>(x, apply_binary<Binary::mul>(cube, 0.044715, loc), loc), 0.7978845608028654, loc);
  return plain_t<X>(apply_binary<Binary::mul>(apply_binary<Binary::mul>(x, 0.5, loc),
                                              apply_binary<Binary::add>(tanh(arg, loc), 1.0, loc), loc));
}

}  // namespace kiln
