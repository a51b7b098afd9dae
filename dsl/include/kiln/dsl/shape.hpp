// Compile-time tile shapes and the shape rules of the language (broadcasting,
// expand_dims, reshape, permute, dot, reductions), computed with Boost.Hana.
//
// Each rule that can fail is a named check template whose instantiation names
// the shapes involved, so a mistake is one static_assert whose first line
// reads like "In instantiation of 'kiln::broadcast_check<kiln::shape<4, 8>, kiln::shape<3> >'".
#pragma once

#include <boost/hana/all_of.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/bool.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/drop_front.hpp>
#include <boost/hana/equal.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/insert.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/mult.hpp>
#include <boost/hana/remove_at.hpp>
#include <boost/hana/replicate.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/hana/zip.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kiln {

namespace hana = boost::hana;
using hana::size_c;

/// A tile shape as a type: shape<64, 32>. shape<> is a scalar.
template <std::size_t... D>
struct shape {
  static constexpr std::size_t rank = sizeof...(D);
  static constexpr std::size_t numel = (std::size_t{1} * ... * D);
  static constexpr auto dims = hana::make_tuple(size_c<D>...);
  static std::vector<std::int64_t> vector() { return {static_cast<std::int64_t>(D)...}; }
};

/// Dimension I of shape S.
template <class S, std::size_t I>
inline constexpr std::size_t dim_v = std::remove_cvref_t<decltype(hana::at_c<I>(S::dims))>::value;

namespace detail {

// Named function objects rather than lambdas: g++ 12 mishandles lambdas in
// the unevaluated operands of alias templates.
struct to_shape {
  template <class... D>
  constexpr auto operator()(D...) const {
    return shape<D::value...>{};
  }
};
struct dims_broadcast {
  template <class P>
  constexpr auto operator()(P) const {
    using A = std::remove_cvref_t<decltype(hana::at_c<0>(P{}))>;
    using B = std::remove_cvref_t<decltype(hana::at_c<1>(P{}))>;
    return hana::bool_c < A::value == B::value || A::value == 1 || B::value == 1 > ;
  }
};
struct broadcast_dim {
  template <class P>
  constexpr auto operator()(P) const {
    using A = std::remove_cvref_t<decltype(hana::at_c<0>(P{}))>;
    using B = std::remove_cvref_t<decltype(hana::at_c<1>(P{}))>;
    return size_c<(A::value == 1 ? B::value : A::value)>;
  }
};

struct is_power_of_two {
  template <class D>
  constexpr auto operator()(D) const {
    return hana::bool_c < D::value != 0 && (D::value & (D::value - 1)) == 0 > ;
  }
};

/// The shape type holding the dims of a Hana tuple of size_c constants.
template <class HanaDims>
using shape_from_dims = decltype(hana::unpack(HanaDims{}, to_shape{}));

// Dims padded on the left with 1s to `rank` (numpy's right alignment).
template <std::size_t Rank, class Dims>
constexpr auto pad_left(Dims dims) {
  constexpr std::size_t have = decltype(hana::length(dims))::value;
  return hana::concat(hana::replicate<hana::tuple_tag>(size_c<1>, size_c<Rank - have>), dims);
}

template <class A, class B>
constexpr auto broadcast_pairs() {
  constexpr std::size_t rank = A::rank > B::rank ? A::rank : B::rank;
  return hana::zip(pad_left<rank>(A::dims), pad_left<rank>(B::dims));
}

}  // namespace detail

/// True when numpy broadcasting accepts shapes A and B.
template <class A, class B>
inline constexpr bool broadcastable_v =
    decltype(hana::all_of(detail::broadcast_pairs<A, B>(), detail::dims_broadcast{}))::value;

/// Shapes A and B must broadcast: the first line of the error names both.
template <class A, class B>
struct broadcast_check {
  static_assert(broadcastable_v<A, B>, "kiln: tile shapes do not broadcast (numpy rules: equal, or one of them 1)");
  static constexpr bool value = true;
};

/// The broadcast result of shapes A and B.
template <class A, class B>
using broadcast_shape_t =
    detail::shape_from_dims<decltype(hana::transform(detail::broadcast_pairs<A, B>(), detail::broadcast_dim{}))>;

/// `From` can be broadcast to exactly `To` (the direction of broadcast_to and store).
template <class From, class To>
inline constexpr bool broadcasts_to_v =
    From::rank <= To::rank && broadcastable_v<From, To> && std::is_same_v<broadcast_shape_t<From, To>, To>;

template <class From, class To>
struct broadcast_to_check {
  static_assert(broadcasts_to_v<From, To>, "kiln: tile shape cannot be broadcast to the target shape");
  static constexpr bool value = true;
};

/// Every dimension of a tile is a power of two, as the GPU code generator
/// spreads a tile over threads by halving it: the first line of the error
/// names the shape.
template <class S>
struct tile_dims_check {
  static constexpr bool value = decltype(hana::all_of(S::dims, detail::is_power_of_two{}))::value;
  static_assert(value,
                "kiln: tile dimensions must be powers of two; pad the tile to std::bit_ceil(n) and mask the extra "
                "elements");
};

/// An axis must lie in [0, rank) for reductions and scans.
template <class S, int Axis>
struct axis_check {
  static_assert(Axis >= 0 && static_cast<std::size_t>(Axis) < S::rank, "kiln: axis out of range for this tile shape");
  static constexpr bool value = true;
};

namespace detail {
template <class S, int Axis>
constexpr bool axis_in_range = Axis >= 0 && static_cast<std::size_t>(Axis) < S::rank;

// An out-of-range axis leaves the shape as it is, so that axis_check's
// message is the only error the compiler reports.
template <class S, int Axis>
constexpr auto remove_axis() {
  if constexpr (axis_in_range<S, Axis>) return hana::remove_at(S::dims, size_c<static_cast<std::size_t>(Axis)>);
  else return S::dims;
}
}  // namespace detail

/// The shape with dimension Axis removed.
template <class S, int Axis>
using remove_axis_t = detail::shape_from_dims<decltype(detail::remove_axis<S, Axis>())>;

/// expand_dims: Axis may be rank (append).
template <class S, int Axis>
struct expand_dims_check {
  static_assert(Axis >= 0 && static_cast<std::size_t>(Axis) <= S::rank,
                "kiln: expand_dims axis out of range for this tile shape");
  static constexpr bool value = true;
};
template <class S, int Axis>
using expand_dims_t =
    detail::shape_from_dims<decltype(hana::insert(S::dims, size_c<static_cast<std::size_t>(Axis)>, size_c<1>))>;

/// reshape keeps the element count.
template <class From, class To>
struct reshape_check {
  static_assert(From::numel == To::numel, "kiln: reshape must keep the number of elements");
  static constexpr bool value = true;
};

/// permute: Order must be a permutation of [0, rank).
template <class S, int... Order>
struct permute_check {
  static constexpr bool is_permutation() {
    if (sizeof...(Order) != S::rank) return false;
    int order[] = {Order..., 0};
    for (std::size_t i = 0; i < S::rank; ++i) {
      if (order[i] < 0 || static_cast<std::size_t>(order[i]) >= S::rank) return false;
      for (std::size_t j = 0; j < i; ++j)
        if (order[i] == order[j]) return false;
    }
    return true;
  }
  static_assert(is_permutation(), "kiln: permute order must be a permutation of the tile's axes");
  static constexpr bool value = true;
};
template <class S, int... Order>
using permute_t = shape<std::remove_cvref_t<decltype(hana::at_c<static_cast<std::size_t>(Order)>(S::dims))>::value...>;

/// dot: [M, K] x [K, N], or a batch of them, [B, M, K] x [B, K, N].
template <class A, class B>
struct dot_check {
  static constexpr bool ranks_fit = (A::rank == 2 || A::rank == 3) && A::rank == B::rank;
  static_assert(ranks_fit, "kiln: dot takes two 2-D tiles, or two 3-D tiles (a batch of products)");
  static constexpr bool inner_dims_match() {
    if constexpr (ranks_fit) return dim_v<A, A::rank - 1> == dim_v<B, B::rank - 2>;
    else return true;
  }
  static_assert(inner_dims_match(), "kiln: dot inner dimensions differ (a is [M, K], b must be [K, N])");
  static constexpr bool batches_match() {
    if constexpr (ranks_fit && A::rank == 3) return dim_v<A, 0> == dim_v<B, 0>;
    else return true;
  }
  static_assert(batches_match(), "kiln: dot's 3-D tiles differ in their batch (a is [B, M, K], b must be [B, K, N])");
  static constexpr bool value = true;
};

}  // namespace kiln
