// The program model (program_id, num_programs, cdiv) and creating values:
// arange, zeros, full, casts and bitcasts.
#pragma once

#include <cstdint>
#include <source_location>
#include <type_traits>

#include "kiln/dsl/arith.hpp"

namespace kiln {

/// This program's index along `axis` (0, 1 or 2) of the launch grid.
inline i32 program_id(int axis, std::source_location loc = std::source_location::current()) {
  if (axis < 0 || axis > 2)
    detail::TraceContext::current("program_id")
        .fail("program_id: axis must be 0, 1 or 2, got " + std::to_string(axis), loc);
  return i32(
      detail::emit(ir::OpCode::program_id, {}, ir::Type::scalar(ir::DType::i32), {{"axis", std::int64_t{axis}}}, loc));
}

/// The launch grid's size along `axis`.
inline i32 num_programs(int axis, std::source_location loc = std::source_location::current()) {
  if (axis < 0 || axis > 2)
    detail::TraceContext::current("num_programs")
        .fail("num_programs: axis must be 0, 1 or 2, got " + std::to_string(axis), loc);
  return i32(detail::emit(ir::OpCode::num_programs, {}, ir::Type::scalar(ir::DType::i32),
                          {{"axis", std::int64_t{axis}}}, loc));
}

/// [start, start + N) as a Tile<i32, N>.
template <std::size_t N>
Tile<i32, N> arange(int start = 0, std::source_location loc = std::source_location::current()) {
  return Tile<i32, N>(
      detail::emit(ir::OpCode::arange, {}, ir_type<Tile<i32, N>>(), {{"start", std::int64_t{start}}}, loc));
}

/// A value of element E and shape D… filled with `v`: full<f32, 64, 64>(0.5f).
/// An integer v is exact in every integer E (INT64_MAX in i64 too); a
/// floating v must lie in an integer E's range.
template <class E, std::size_t... D, class V>
  requires std::is_arithmetic_v<V>
value_t<E, shape<D...>> full(V v, std::source_location loc = std::source_location::current()) {
  using R = value_t<E, shape<D...>>;
  if constexpr (std::is_integral_v<V>)
    return R(detail::emit_int_constant(ir_type<R>(), static_cast<std::int64_t>(v), loc));
  else return R(detail::emit_constant(ir_type<R>(), static_cast<double>(v), loc));
}

/// full<E, D…>(0).
template <class E, std::size_t... D>
value_t<E, shape<D...>> zeros(std::source_location loc = std::source_location::current()) {
  return full<E, D...>(0.0, loc);
}

/// Converts each element to element type To (rounding to nearest even into
/// narrower floats; float to int truncates and saturates).
template <class To, Value X>
value_t<To, shape_t<X>> cast(const X& x, std::source_location loc = std::source_location::current()) {
  using R = value_t<To, shape_t<X>>;
  if constexpr (std::is_same_v<To, element_t<X>>) return R(x.value());
  else return R(detail::emit(ir::OpCode::cast, {x.value()}, ir_type<R>(), {}, loc));
}

/// Reinterprets the bits of each element as To (same bit width).
template <class To, Numeric X>
value_t<To, shape_t<X>> bitcast(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(ir::dtype_bits(dtype_of<To>) == ir::dtype_bits(dtype_of<X>),
                "kiln: bitcast needs element types of the same bit width");
  using R = value_t<To, shape_t<X>>;
  return R(detail::emit(ir::OpCode::bitcast, {x.value()}, ir_type<R>(), {}, loc));
}

/// Ceiling division for sizes: (a + b - 1) / b.
template <class A, class B>
auto cdiv(const A& a, const B& b, std::source_location loc = std::source_location::current()) {
  if constexpr (Literal<A> && Literal<B>) return (a + b - 1) / b;
  else
    return detail::apply_binary<detail::Binary::div>(
        detail::apply_binary<detail::Binary::sub>(detail::apply_binary<detail::Binary::add>(a, b, loc), 1, loc), b,
        loc);
}

}  // namespace kiln
