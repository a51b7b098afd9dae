// Math on values: exp, log, pow, sqrt, trigonometry, erf…, lgamma, hypot,
// copysign, abs, rounding to integers, isnan/isinf, minimum/maximum/clamp,
// div_rn, fma, umulhi, popc and clz.
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

/// A float op of two operands, promoted and broadcast to their common type.
template <ir::OpCode Op, class A, class B>
auto float_binary(const A& a, const B& b, const std::source_location& loc) {
  auto [x, y] = promote_pair(a, b, loc);
  using R = decltype(x);
  static_assert(ir::is_float(dtype_of<R>), "kiln: this math function needs float values; cast integers first");
  return R(emit(Op, {x.value(), y.value()}, ir_type<R>(), {}, loc));
}

/// isnan, isinf: an i1 value of the operand's shape.
template <ir::OpCode Op, Numeric X>
auto float_class(const X& x, const std::source_location& loc) {
  static_assert(ir::is_float(dtype_of<X>), "kiln: isnan and isinf need a float value");
  using R = value_t<i1, shape_t<X>>;
  return R(emit(Op, {x.value()}, ir_type<R>(), {}, loc));
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
/// e^x with subnormal results flushed to +0 (libdevice's fast_expf): on a
/// GPU one ex2.approx.ftz, without exp's rescaling of subnormal results
KILN_FLOAT_UNARY(fast_exp)
/// 2^x with subnormal results flushed to +0 (Triton's exp2): on a GPU one
/// ex2.approx.ftz, without exp2's rescaling of subnormal results
KILN_FLOAT_UNARY(fast_exp2)
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
/// e^x - 1, accurate for x near 0
KILN_FLOAT_UNARY(expm1)
/// tangent
KILN_FLOAT_UNARY(tan)
/// arc tangent, in [-pi/2, pi/2]
KILN_FLOAT_UNARY(atan)
/// arc sine, in [-pi/2, pi/2]; NaN outside [-1, 1]
KILN_FLOAT_UNARY(asin)
/// arc cosine, in [0, pi]; NaN outside [-1, 1]
KILN_FLOAT_UNARY(acos)
/// hyperbolic sine
KILN_FLOAT_UNARY(sinh)
/// hyperbolic cosine
KILN_FLOAT_UNARY(cosh)
/// round toward zero to an integer value
KILN_FLOAT_UNARY(trunc)
/// round to the nearest integer value, halfway cases away from zero (C's round)
KILN_FLOAT_UNARY(round)
/// round to the nearest integer value, halfway cases to even
KILN_FLOAT_UNARY(rint)
/// inverse hyperbolic sine
KILN_FLOAT_UNARY(asinh)
/// inverse hyperbolic cosine; NaN below 1
KILN_FLOAT_UNARY(acosh)
/// inverse hyperbolic tangent; +-inf at +-1, NaN outside [-1, 1]
KILN_FLOAT_UNARY(atanh)
/// base-10 logarithm
KILN_FLOAT_UNARY(log10)
/// 10^x
KILN_FLOAT_UNARY(exp10)
/// cube root (negative for negative x)
KILN_FLOAT_UNARY(cbrt)
/// complementary error function 1 - erf(x), accurate where erf(x) is near 1
KILN_FLOAT_UNARY(erfc)
/// inverse error function: erf(erfinv(y)) = y on [-1, 1]; +-inf at +-1, NaN
/// outside
KILN_FLOAT_UNARY(erfinv)
/// log |Gamma(x)|; +inf at 0 and the negative integers
KILN_FLOAT_UNARY(lgamma)
#undef KILN_FLOAT_UNARY

/// x^y with C's pow rules: a negative base needs an integer exponent (else
/// NaN), pow(x, 0) = pow(1, y) = 1 even for NaN.
template <class A, class B>
  requires(Numeric<A> || Numeric<B>)
auto pow(const A& x, const B& y, std::source_location loc = std::source_location::current()) {
  return detail::float_binary<ir::OpCode::pow>(x, y, loc);
}

/// The angle of the point (x, y) in [-pi, pi]: atan(y / x) in the right
/// quadrant, the sign of a zero y choosing between -pi and pi; note the order
/// of the arguments, y first, as C's atan2.
template <class A, class B>
  requires(Numeric<A> || Numeric<B>)
auto atan2(const A& y, const B& x, std::source_location loc = std::source_location::current()) {
  return detail::float_binary<ir::OpCode::atan2>(y, x, loc);
}

/// sqrt(x^2 + y^2) without overflow or underflow in the squares.
template <class A, class B>
  requires(Numeric<A> || Numeric<B>)
auto hypot(const A& x, const B& y, std::source_location loc = std::source_location::current()) {
  return detail::float_binary<ir::OpCode::hypot>(x, y, loc);
}

/// The magnitude of x with the sign of y (also of zeros, infinities and NaN).
template <class A, class B>
  requires(Numeric<A> || Numeric<B>)
auto copysign(const A& x, const B& y, std::source_location loc = std::source_location::current()) {
  return detail::float_binary<ir::OpCode::copysign>(x, y, loc);
}

/// x / y rounded to nearest even (IEEE division). The `/` operator on floats
/// is already this division on every device (ir/OPS.md, `div`), so div_rn
/// emits the same `div` op; it exists for kernels ported from Triton, whose
/// `/` may be approximate.
template <class A, class B>
  requires(Numeric<A> || Numeric<B>)
auto div_rn(const A& x, const B& y, std::source_location loc = std::source_location::current()) {
  return detail::float_binary<ir::OpCode::div>(x, y, loc);
}

/// Whether x is NaN: an i1 value of x's shape.
template <Numeric X>
auto isnan(const X& x, std::source_location loc = std::source_location::current()) {
  return detail::float_class<ir::OpCode::isnan>(x, loc);
}

/// Whether x is +inf or -inf: an i1 value of x's shape.
template <Numeric X>
auto isinf(const X& x, std::source_location loc = std::source_location::current()) {
  return detail::float_class<ir::OpCode::isinf>(x, loc);
}

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

namespace detail {
template <ir::OpCode Op, Numeric X>
plain_t<X> bit_count(const X& x, const std::source_location& loc) {
  static_assert(ir::is_integer(dtype_of<X>) && dtype_of<X> != ir::DType::i1,
                "kiln: popc and clz need an integer value (not a bool)");
  return plain_t<X>(emit(Op, {x.value()}, ir_type<X>(), {}, loc));
}
}  // namespace detail

/// The number of one bits of each integer, in its own type (libdevice's popc,
/// popcll).
template <Numeric X>
plain_t<X> popc(const X& x, std::source_location loc = std::source_location::current()) {
  return detail::bit_count<ir::OpCode::popc>(x, loc);
}

/// The number of zero bits above the highest one bit of each integer, in its
/// own type; the width for 0 (libdevice's clz, clzll).
template <Numeric X>
plain_t<X> clz(const X& x, std::source_location loc = std::source_location::current()) {
  return detail::bit_count<ir::OpCode::clz>(x, loc);
}

}  // namespace kiln
