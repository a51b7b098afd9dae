// Changing shapes: broadcast_to, expand_dims, reshape, trans/permute,
// join/split, and where (elementwise select with broadcasting).
#pragma once

#include <source_location>
#include <utility>

#include "kiln/dsl/arith.hpp"

namespace kiln {

/// Broadcasts x to shape D… (numpy rules, x's dims right-aligned).
template <std::size_t... D, Value X>
value_t<element_t<X>, shape<D...>> broadcast_to(const X& x,
                                                std::source_location loc = std::source_location::current()) {
  static_assert(broadcast_to_check<shape_t<X>, shape<D...>>::value);
  using R = value_t<element_t<X>, shape<D...>>;
  return R(detail::emit_broadcast(x.value(), shape<D...>::vector(), loc));
}

/// Inserts a dimension of size 1 at Axis.
template <int Axis, Value X>
value_t<element_t<X>, expand_dims_t<shape_t<X>, Axis>> expand_dims(
    const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(expand_dims_check<shape_t<X>, Axis>::value);
  using R = value_t<element_t<X>, expand_dims_t<shape_t<X>, Axis>>;
  if constexpr (shape_t<X>::rank == 0) return R(detail::emit(ir::OpCode::splat, {x.value()}, ir_type<R>(), {}, loc));
  else return R(detail::emit(ir::OpCode::expand_dims, {x.value()}, ir_type<R>(), {{"axis", std::int64_t{Axis}}}, loc));
}

/// Reshapes to D… keeping the row-major order of elements.
template <std::size_t... D, Value X>
Tile<element_t<X>, D...> reshape(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(reshape_check<shape_t<X>, shape<D...>>::value);
  using R = Tile<element_t<X>, D...>;
  if constexpr (std::is_same_v<shape_t<X>, shape<D...>>) return R(x.value());
  else return R(detail::emit(ir::OpCode::reshape, {x.value()}, ir_type<R>(), {}, loc));
}

/// Permutes the axes: result dim i is x's dim Order[i].
template <int... Order, Value X>
value_t<element_t<X>, permute_t<shape_t<X>, Order...>> permute(
    const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(permute_check<shape_t<X>, Order...>::value);
  using R = value_t<element_t<X>, permute_t<shape_t<X>, Order...>>;
  return R(detail::emit(ir::OpCode::trans, {x.value()}, ir_type<R>(), {{"order", std::vector<std::int64_t>{Order...}}},
                        loc));
}

/// Transposes a 2-D tile.
template <Value X>
auto trans(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(shape_t<X>::rank == 2, "kiln: trans takes a 2-D tile; use permute<…> for other ranks");
  return permute<1, 0>(x, loc);
}

namespace detail {
template <class S>
struct append_two;
template <std::size_t... D>
struct append_two<shape<D...>> {
  using type = shape<D..., 2>;
};
}  // namespace detail

/// Stacks two values of one type along a new last dimension of size 2.
template <Value X>
auto join(const X& a, const plain_t<X>& b, std::source_location loc = std::source_location::current()) {
  using R = value_t<element_t<X>, typename detail::append_two<shape_t<X>>::type>;
  return R(detail::emit(ir::OpCode::join, {a.value(), b.value()}, ir_type<R>(), {}, loc));
}

/// Splits a value whose last dimension is 2 into its two halves (inverse of join).
template <Value X>
auto split(const X& x, std::source_location loc = std::source_location::current()) {
  using S = shape_t<X>;
  static_assert(S::rank >= 1 && decltype(hana::at_c<S::rank - 1>(S::dims) == size_c<2>)::value,
                "kiln: split needs a last dimension of size 2");
  using R = value_t<element_t<X>, remove_axis_t<S, static_cast<int>(S::rank) - 1>>;
  ir::Operation* op = detail::emit_op(ir::OpCode::split, {x.value()}, {ir_type<R>(), ir_type<R>()}, {}, 0, loc);
  return std::pair<R, R>(R(op->result(0)), R(op->result(1)));
}

/// Elementwise cond ? a : b, broadcasting all three and promoting a and b.
template <Numeric C, class A, class B>
  requires((Value<A> || Literal<A>) && (Value<B> || Literal<B>))
auto where(const C& cond, const A& a, const B& b, std::source_location loc = std::source_location::current()) {
  static_assert(dtype_of<C> == ir::DType::i1, "kiln: where needs an i1 condition (a comparison or a mask)");
  using SA = typename detail::operand<A>::shape_type;
  using SB = typename detail::operand<B>::shape_type;
  static_assert(broadcast_check<SA, SB>::value);
  using SAB = broadcast_shape_t<SA, SB>;
  static_assert(broadcast_check<shape_t<C>, SAB>::value);
  using S = broadcast_shape_t<shape_t<C>, SAB>;
  if constexpr (Pointer<A> || Pointer<B>) {
    static_assert(std::is_same_v<element_t<A>, element_t<B>>, "kiln: where on pointers needs two pointers of one type");
    using R = value_t<element_t<A>, S>;
    return R(detail::emit(
        ir::OpCode::select,
        {detail::emit_broadcast(cond.value(), S::vector(), loc), detail::emit_broadcast(a.value(), S::vector(), loc),
         detail::emit_broadcast(b.value(), S::vector(), loc)},
        ir_type<R>(), {}, loc));
  } else {
    constexpr ir::DType d = detail::common_dtype<A, B>();
    using R = value_t<Scalar<storage_t<d>>, S>;
    return R(detail::emit(ir::OpCode::select,
                          {detail::emit_broadcast(cond.value(), S::vector(), loc),
                           detail::materialize(a, d, S::vector(), loc), detail::materialize(b, d, S::vector(), loc)},
                          ir_type<R>(), {}, loc));
  }
}

}  // namespace kiln
