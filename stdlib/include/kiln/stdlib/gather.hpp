// Indexed reads within a tile, written with compares and reductions: gather
// (Triton's gather along an axis) and histogram (counts of small integers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <utility>

#include "kiln/dsl/creation.hpp"
#include "kiln/dsl/reduce.hpp"
#include "kiln/dsl/shape_ops.hpp"

namespace kiln {

/// gather: the index has src's rank, integer elements, and src's dims except
/// along the axis, which lies in [0, rank).
template <class Src, class Index, int Axis>
struct gather_check {
  static constexpr bool other_dims_match() {
    if constexpr (Src::rank != Index::rank) {
      return false;
    } else {
      bool same = true;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((same = same && (static_cast<int>(I) == Axis || dim_v<Src, I> == dim_v<Index, I>)), ...);
      }(std::make_index_sequence<Src::rank>{});
      return same;
    }
  }
  static_assert(Src::rank == Index::rank, "kiln: gather needs an index of the source's rank");
  static_assert(Axis >= 0 && static_cast<std::size_t>(Axis) < Src::rank,
                "kiln: gather axis out of range for this tile shape");
  static_assert(other_dims_match(), "kiln: gather index must have the source's dims except along the axis");
  static constexpr bool value = true;
};

namespace detail {

template <std::size_t Bits>
struct unsigned_of_width;
template <>
struct unsigned_of_width<8> {
  using type = std::uint8_t;
};
template <>
struct unsigned_of_width<16> {
  using type = std::uint16_t;
};
template <>
struct unsigned_of_width<32> {
  using type = std::uint32_t;
};
template <>
struct unsigned_of_width<64> {
  using type = std::uint64_t;
};

/// The unsigned integer element of X's bit width (u32 for f32).
template <Numeric X>
using same_width_unsigned = Scalar<typename unsigned_of_width<ir::dtype_bits(dtype_of<X>)>::type>;

/// Elements on which | is exact: floats as their bits, integers and i1 as they are.
template <Numeric X>
auto as_bits(const X& x, const std::source_location& loc) {
  if constexpr (ir::is_float(dtype_of<X>)) return bitcast<same_width_unsigned<X>>(x, loc);
  else return plain_t<X>(x.value());
}
template <class E, Numeric B>
auto from_bits(const B& bits, const std::source_location& loc) {
  if constexpr (std::is_same_v<E, element_t<B>>) return plain_t<B>(bits.value());
  else return bitcast<E>(bits, loc);
}

/// arange<N> laid along axis A of a rank-R value ([1, …, N, …, 1]).
template <std::size_t R, int A, std::size_t N>
auto arange_along(const std::source_location& loc) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return reshape<(I == static_cast<std::size_t>(A) ? N : 1)...>(arange<N>(0, loc), loc);
  }(std::make_index_sequence<R>{});
}

}  // namespace detail

/// out[…, i, …] = src[…, index[…, i, …], …] along axis A, as Triton's gather:
/// index has src's rank and dims except along A. The elements come through bit
/// for bit (NaN payloads and signed zeros included); an index outside
/// [0, src's dim A) gives 0 (all bits clear), where Triton leaves it undefined.
/// A one-hot compare of every index with every position, then a bitwise-or
/// reduction: O(n_A) work per output element.
template <int A, Numeric Src, Numeric Index>
auto gather(const Src& src, const Index& index, axis_t<A>, std::source_location loc = std::source_location::current()) {
  static_assert(gather_check<shape_t<Src>, shape_t<Index>, A>::value);
  static_assert(ir::is_signed_int(dtype_of<Index>) || ir::is_unsigned_int(dtype_of<Index>),
                "kiln: gather needs an integer index");
  constexpr std::size_t rank = shape_t<Src>::rank;
  constexpr std::size_t n = dim_v<shape_t<Src>, static_cast<std::size_t>(A)>;
  // src as [pre, 1, n, post], index as [pre, m, 1, post]: position p of the
  // new axis A + 1 is chosen where the index equals p.
  auto sources = expand_dims<A>(detail::as_bits(src, loc), loc);
  auto wanted = expand_dims<A + 1>(index, loc);
  auto chosen = wanted == detail::arange_along<rank + 1, A + 1, n>(loc);
  auto picked = [&] {
    if constexpr (ir::is_bool(dtype_of<Src>)) return chosen & sources;
    else return where(chosen, sources, 0, loc);
  }();
  auto bits = reduce(picked, axis<A + 1>, [](auto x, auto y) { return x | y; }, loc);
  return detail::from_bits<element_t<Src>>(bits, loc);
}

/// histogram: a 1-D tile of integers.
template <class S, class E>
struct histogram_check {
  static_assert(S::rank == 1, "kiln: histogram takes a 1-D tile");
  static_assert(ir::is_signed_int(dtype_v<E>) || ir::is_unsigned_int(dtype_v<E>),
                "kiln: histogram needs integer values");
  static constexpr bool value = true;
};

/// The number of elements of x equal to each of 0, 1, … Bins - 1, as Triton's
/// histogram (an i32 tile of Bins counts); values outside [0, Bins) are not
/// counted. Bins must be a power of two.
template <std::size_t Bins, Numeric X>
Tile<i32, Bins> histogram(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(histogram_check<shape_t<X>, storage_of<X>>::value);
  static_assert(tile_dims_check<shape<Bins>>::value);
  auto hits = expand_dims<1>(x, loc) == expand_dims<0>(arange<Bins>(0, loc), loc);
  return sum(cast<i32>(hits, loc), axis<0>, loc);
}

}  // namespace kiln
