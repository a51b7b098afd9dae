// Math on values: exp, log, sqrt, trigonometry, erf…, abs, floor/ceil,
// minimum/maximum/clamp, fma and umulhi.
#pragma once

#include <source_location>
#include <utility>

#include "kiln/dsl/arith.hpp"

namespace kiln {

namespace detail {
template <ir::OpCode Op, Numeric X>
plain_t<X> float_unary(const X& x, const std::source_location& loc) {
  static_assert(ir::is_float(dtype_of<X>), "kiln: this math function needs a float value; cast integers first");
  return plain_t<X>(emit(Op, {x.value()}, ir_type<X>(), {}, loc));
}

/// Both operands promoted and broadcast to their common type.
template <class A, class B>
auto promote_pair(const A& a, const B& b, const std::source_location& loc) {
  using SA = typename operand<A>::shape_type;
  using SB = typename operand<B>::shape_type;
  static_assert(broadcast_check<SA, SB>::value);
  using S = broadcast_shape_t<SA, SB>;
  constexpr ir::DType d = common_dtype<A, B>();
  using R = value_t<Scalar<storage_t<d>>, S>;
  return std::pair<R, R>(R(materialize(a, d, S::vector(), loc)), R(materialize(b, d, S::vector(), loc)));
}
}  // namespace detail

#define KILN_FLOAT_UNARY(NAME)                                                              \
  template <Numeric X>                                                                      \
  plain_t<X> NAME(const X& x, std::source_location loc = std::source_location::current()) { \
    return detail::float_unary<ir::OpCode::NAME>(x, loc);                                   \
  }
/// e^x
KILN_FLOAT_UNARY(exp)
/// 2^x
KILN_FLOAT_UNARY(exp2)
/// natural logarithm
KILN_FLOAT_UNARY(log)
/// base-2 logarithm
KILN_FLOAT_UNARY(log2)
/// log(1 + x), accurate for x near 0
KILN_FLOAT_UNARY(log1p)
/// square root
KILN_FLOAT_UNARY(sqrt)
/// 1 / sqrt(x)
KILN_FLOAT_UNARY(rsqrt)
/// sine
KILN_FLOAT_UNARY(sin)
/// cosine
KILN_FLOAT_UNARY(cos)
/// hyperbolic tangent
KILN_FLOAT_UNARY(tanh)
/// error function
KILN_FLOAT_UNARY(erf)
/// round down to an integer value
KILN_FLOAT_UNARY(floor)
/// round up to an integer value
KILN_FLOAT_UNARY(ceil)
#undef KILN_FLOAT_UNARY

/// |x| for ints and floats.
template <Numeric X>
plain_t<X> abs(const X& x, std::source_location loc = std::source_location::current()) {
  return plain_t<X>(detail::emit(ir::OpCode::abs, {x.value()}, ir_type<X>(), {}, loc));
}

/// Elementwise minimum (NaN if either is NaN).
template <class A, class B>
  requires(Numeric<A> || Numeric<B>)
auto minimum(const A& a, const B& b, std::source_location loc = std::source_location::current()) {
  auto [x, y] = detail::promote_pair(a, b, loc);
  return decltype(x)(detail::emit(ir::OpCode::minimum, {x.value(), y.value()}, ir_type<decltype(x)>(), {}, loc));
}

/// Elementwise maximum (NaN if either is NaN).
template <class A, class B>
  requires(Numeric<A> || Numeric<B>)
auto maximum(const A& a, const B& b, std::source_location loc = std::source_location::current()) {
  auto [x, y] = detail::promote_pair(a, b, loc);
  return decltype(x)(detail::emit(ir::OpCode::maximum, {x.value(), y.value()}, ir_type<decltype(x)>(), {}, loc));
}

/// minimum(maximum(x, lo), hi).
template <Numeric X, class Lo, class Hi>
auto clamp(const X& x, const Lo& lo, const Hi& hi, std::source_location loc = std::source_location::current()) {
  return minimum(maximum(x, lo, loc), hi, loc);
}

/// a * b + c with one rounding (floats).
template <class A, class B, class C>
  requires(Numeric<A> || Numeric<B> || Numeric<C>)
auto fma(const A& a, const B& b, const C& c, std::source_location loc = std::source_location::current()) {
  using AB = typename decltype(detail::promote_pair(a, b, loc))::first_type;
  using R = typename decltype(detail::promote_pair(std::declval<AB>(), c, loc))::first_type;
  static_assert(ir::is_float(dtype_of<R>), "kiln: fma needs float operands");
  constexpr ir::DType d = dtype_of<R>;
  const ir::Shape s = shape_t<R>::vector();
  return R(detail::emit(
      ir::OpCode::fma,
      {detail::materialize(a, d, s, loc), detail::materialize(b, d, s, loc), detail::materialize(c, d, s, loc)},
      ir_type<R>(), {}, loc));
}

/// The high half of the full product of two integers (as unsigned).
template <class A, class B>
  requires(Numeric<A> || Numeric<B>)
auto umulhi(const A& a, const B& b, std::source_location loc = std::source_location::current()) {
  auto [x, y] = detail::promote_pair(a, b, loc);
  static_assert(ir::is_integer(dtype_of<decltype(x)>), "kiln: umulhi needs integer operands");
  return decltype(x)(detail::emit(ir::OpCode::umulhi, {x.value(), y.value()}, ir_type<decltype(x)>(), {}, loc));
}

}  // namespace kiln
