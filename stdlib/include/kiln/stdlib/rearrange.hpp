// Rearranging tiles, written with the shape ops: zeros_like, full_like, flip,
// cat and interleave. None of them computes on the elements, so every dtype
// (i1 and fp8 included) comes through bit for bit.
#pragma once

#include <array>
#include <cstddef>
#include <source_location>
#include <type_traits>
#include <utility>

#include "kiln/dsl/creation.hpp"
#include "kiln/dsl/reduce.hpp"
#include "kiln/dsl/shape_ops.hpp"

namespace kiln {

/// A value of x's element type and shape filled with zeros.
template <Numeric X>
plain_t<X> zeros_like(const X&, std::source_location loc = std::source_location::current()) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return zeros<element_t<X>, dim_v<shape_t<X>, I>...>(loc);
  }(std::make_index_sequence<shape_t<X>::rank>{});
}

/// A value of x's element type and shape filled with v (as full: an integer
/// v exact in every integer type).
template <Numeric X, class V>
  requires std::is_arithmetic_v<V>
plain_t<X> full_like(const X&, V v, std::source_location loc = std::source_location::current()) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return full<element_t<X>, dim_v<shape_t<X>, I>...>(v, loc);
  }(std::make_index_sequence<shape_t<X>::rank>{});
}

/// flip's axis must lie in [0, rank) (every tile dimension is a power of two).
template <class S, int Axis>
struct flip_check {
  static_assert(detail::axis_in_range<S, Axis>, "kiln: flip axis out of range for this tile shape");
  static constexpr bool value = true;
};

/// cat and interleave take two values of one shape (a concatenation of two
/// power-of-two sizes is a power of two only when they are equal).
template <class A, class B>
struct same_shape_check {
  static_assert(std::is_same_v<A, B>, "kiln: cat and interleave need two tiles of the same shape");
  static constexpr bool value = true;
};

/// cat's axis must lie in [0, rank).
template <class S, int Axis>
struct cat_check {
  static_assert(detail::axis_in_range<S, Axis>, "kiln: cat axis out of range for this tile shape");
  static constexpr bool value = true;
};

namespace detail {

// The permutation that moves axis A of a rank-R value to the end, and its inverse.
template <std::size_t R, int A>
constexpr std::array<int, R> axis_to_last_order() {
  std::array<int, R> order{};
  std::size_t next = 0;
  for (std::size_t i = 0; i < R; ++i)
    if (static_cast<int>(i) != A) order[next++] = static_cast<int>(i);
  order[R - 1] = A;
  return order;
}
template <std::size_t R, int A>
constexpr std::array<int, R> axis_from_last_order() {
  std::array<int, R> order{};
  for (std::size_t i = 0; i < R; ++i) {
    const int ii = static_cast<int>(i);
    order[i] = ii < A ? ii : ii == A ? static_cast<int>(R) - 1 : ii - 1;
  }
  return order;
}

template <std::array Order, Value X>
auto permute_by(const X& x, const std::source_location& loc) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    if constexpr (((Order[I] == static_cast<int>(I)) && ...)) return plain_t<X>(x.value());
    else return permute<Order[I]...>(x, loc);
  }(std::make_index_sequence<Order.size()>{});
}

/// x with axis A moved to the end.
template <int A, Value X>
auto axis_to_last(const X& x, const std::source_location& loc) {
  return permute_by<axis_to_last_order<shape_t<X>::rank, A>()>(x, loc);
}
/// The inverse of axis_to_last<A>.
template <int A, Value X>
auto axis_from_last(const X& x, const std::source_location& loc) {
  return permute_by<axis_from_last_order<shape_t<X>::rank, A>()>(x, loc);
}

/// A flat value of N elements viewed as [N / (2 Q), 2, Q] with the two halves
/// of each middle pair swapped, flat again. Swapping at Q = 1, 2, 4, … N/2
/// reverses every run of N elements.
template <std::size_t Q, class E, std::size_t N>
Tile<E, N> swap_halves(const Tile<E, N>& x, const std::source_location& loc) {
  constexpr std::size_t pairs = N / (2 * Q);
  if constexpr (Q == 1) {
    auto [first, second] = split(reshape<pairs, 2>(x, loc), loc);
    return reshape<N>(join(second, first, loc), loc);
  } else {
    auto [first, second] = split(permute<0, 2, 1>(reshape<pairs, 2, Q>(x, loc), loc), loc);
    return reshape<N>(permute<0, 2, 1>(join(second, first, loc), loc), loc);
  }
}

template <std::size_t Run, std::size_t Q, class E, std::size_t N>
Tile<E, N> reverse_runs(const Tile<E, N>& x, const std::source_location& loc) {
  if constexpr (Q >= Run) return x;
  else return reverse_runs<Run, 2 * Q>(swap_halves<Q>(x, loc), loc);
}

}  // namespace detail

/// Reverses x along axis A (default: the last axis), as Triton's flip: element
/// i of the axis moves to n - 1 - i. log2(n) swaps of halves with split/join.
template <int A, Value X>
plain_t<X> flip(const X& x, axis_t<A>, std::source_location loc = std::source_location::current()) {
  static_assert(flip_check<shape_t<X>, A>::value);
  if constexpr (!detail::axis_in_range<shape_t<X>, A>) {
    return x;
  } else {
    auto last = detail::axis_to_last<A>(x, loc);
    constexpr std::size_t n = dim_v<shape_t<X>, static_cast<std::size_t>(A)>;
    auto reversed = detail::reverse_runs<n, 1>(reshape<shape_t<X>::numel>(last, loc), loc);
    auto back = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return reshape<dim_v<shape_t<decltype(last)>, I>...>(reversed, loc);
    }(std::make_index_sequence<shape_t<X>::rank>{});
    return detail::axis_from_last<A>(back, loc);
  }
}
template <Value X>
plain_t<X> flip(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(shape_t<X>::rank >= 1, "kiln: flip needs a tile, not a scalar");
  return flip(x, axis<static_cast<int>(shape_t<X>::rank) - 1>, loc);
}

/// The exact concatenation of a and b along axis A (default 0): the result's
/// axis A is twice as long, a's elements first. Unlike Triton's cat, which may
/// reorder elements, the order is always kept.
template <int A, Value X, Value Y>
auto cat(const X& a, const Y& b, axis_t<A>, std::source_location loc = std::source_location::current()) {
  static_assert(same_shape_check<shape_t<X>, shape_t<Y>>::value);
  static_assert(std::is_same_v<element_t<X>, element_t<Y>>, "kiln: cat needs two tiles of one element type");
  static_assert(cat_check<shape_t<X>, A>::value);
  using S = shape_t<X>;
  constexpr std::size_t rank = S::rank;
  // join stacks along a new last axis; moving it in front of axis A makes
  // [..., 2, n_A, ...], whose row-major order is a's elements then b's.
  auto stacked = join(a, plain_t<X>(b.value()), loc);
  auto moved = detail::permute_by<detail::axis_from_last_order<rank + 1, A>()>(stacked, loc);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return reshape<(I == static_cast<std::size_t>(A) ? 2 * dim_v<S, I> : dim_v<S, I>)...>(moved, loc);
  }(std::make_index_sequence<rank>{});
}
template <Value X, Value Y>
auto cat(const X& a, const Y& b, std::source_location loc = std::source_location::current()) {
  return cat(a, b, axis<0>, loc);
}

/// Interleaves a and b along their last axis: a0, b0, a1, b1, … (join, then
/// the pairs laid out in a row).
template <Value X, Value Y>
auto interleave(const X& a, const Y& b, std::source_location loc = std::source_location::current()) {
  static_assert(same_shape_check<shape_t<X>, shape_t<Y>>::value);
  static_assert(std::is_same_v<element_t<X>, element_t<Y>>, "kiln: interleave needs two tiles of one element type");
  using S = shape_t<X>;
  static_assert(S::rank >= 1, "kiln: interleave needs tiles, not scalars");
  auto joined = join(a, plain_t<X>(b.value()), loc);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return reshape<(I + 1 == S::rank ? 2 * dim_v<S, I> : dim_v<S, I>)...>(joined, loc);
  }(std::make_index_sequence<S::rank>{});
}

}  // namespace kiln
