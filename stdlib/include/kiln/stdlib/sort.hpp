// Sorting along the last axis, written with the shape ops and minimum/maximum:
// sort (a bitonic network) and topk (the k largest, sorted).
//
// Elements are sorted as unsigned integer keys of their own width whose order
// is the sort order, so every compare-and-swap is an exact integer min/max and
// the elements come through bit for bit. Floats are ordered
// -inf < … < -0 < +0 < … < +inf < NaN: -0 sorts before +0, and every NaN
// (either sign, any payload) sorts after +inf, as torch.sort puts NaN last.
// Triton's sort compares with >, so there NaNs do not move to a defined place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>

#include "kiln/dsl/creation.hpp"
#include "kiln/dsl/math.hpp"
#include "kiln/dsl/shape_ops.hpp"
#include "kiln/stdlib/gather.hpp"

namespace kiln {

/// sort and topk: a tile of integers (not i1) or f16/bf16/f32/f64.
template <class S, class E>
struct sort_check {
  static constexpr ir::DType d = dtype_v<E>;
  static_assert(S::rank >= 1, "kiln: sort and topk need a tile, not a scalar");
  static_assert(ir::is_signed_int(d) || ir::is_unsigned_int(d) || d == ir::DType::f16 || d == ir::DType::bf16 ||
                    d == ir::DType::f32 || d == ir::DType::f64,
                "kiln: sort and topk take integers (not i1) and f16, bf16, f32, f64 (not fp8)");
  static constexpr bool value = true;
};

/// topk: K a power of two, at most the last dimension N.
template <std::size_t K, std::size_t N>
struct topk_check {
  static_assert(K >= 1 && (K & (K - 1)) == 0, "kiln: topk needs k to be a power of two");
  static_assert(K <= N, "kiln: topk needs k <= the last dimension");
  static constexpr bool value = true;
};

namespace detail {

template <ir::DType D>
constexpr int fraction_bits() {
  if constexpr (D == ir::DType::f16) return 10;
  else if constexpr (D == ir::DType::bf16) return 7;
  else if constexpr (D == ir::DType::f32) return 23;
  else return 52;
}

template <ir::DType D>
constexpr std::int64_t sign_bit() {
  return static_cast<std::int64_t>(std::uint64_t{1} << (ir::dtype_bits(D) - 1));
}

// The keys of -NaN (sign set, any payload) come below -inf's; subtracting
// their count (2^fraction - 1, wrapping) moves them above +NaN's.
template <ir::DType D>
constexpr std::int64_t negative_nan_count() {
  return (std::int64_t{1} << fraction_bits<D>()) - 1;
}

/// x as unsigned keys of its width in sort order (see the file comment).
template <Numeric X>
auto to_sort_key(const X& x, const std::source_location& loc) {
  constexpr ir::DType d = dtype_of<X>;
  if constexpr (ir::is_unsigned_int(d)) {
    return plain_t<X>(x.value());
  } else {
    auto bits = bitcast<same_width_unsigned<X>>(x, loc);
    if constexpr (ir::is_signed_int(d)) {
      return bits ^ sign_bit<d>();
    } else {
      auto negative = (bits >> (ir::dtype_bits(d) - 1)) != 0;
      auto ordered = where(negative, ~bits, bits ^ sign_bit<d>(), loc);
      return ordered - negative_nan_count<d>();
    }
  }
}

/// The inverse of to_sort_key: keys back to elements E.
template <class E, Numeric Key>
auto from_sort_key(const Key& key, const std::source_location& loc) {
  constexpr ir::DType d = dtype_v<typename is_scalar_element<E>::storage>;
  if constexpr (ir::is_unsigned_int(d)) {
    return plain_t<Key>(key.value());
  } else if constexpr (ir::is_signed_int(d)) {
    return bitcast<E>(key ^ sign_bit<d>(), loc);
  } else {
    auto ordered = key + negative_nan_count<d>();
    auto was_negative = (ordered >> (ir::dtype_bits(d) - 1)) == 0;
    return bitcast<E>(where(was_negative, ~ordered, ordered ^ sign_bit<d>(), loc), loc);
  }
}

/// i32 mask, true where bit `Bit` of the pair index p (arange<P>) is set,
/// shaped to broadcast against a [P] or [P, Q] half.
template <std::size_t P, std::size_t Q, std::size_t Bit>
auto pair_bit_set(const std::source_location& loc) {
  auto set = (arange<P>(0, loc) & static_cast<int>(Bit)) != 0;
  if constexpr (Q == 1) return set;
  else return expand_dims<1>(set, loc);
}

/// One compare-and-swap step of a bitonic network over a flat tile of rows of
/// length L: element i meets i + Step in blocks of 2 Step; the pair is put in
/// ascending order, or descending where bit Merge of i is set (so that merges
/// of size Merge alternate direction; none is set once Merge reaches L).
template <std::size_t L, std::size_t Merge, std::size_t Step, class K, std::size_t N>
Tile<K, N> compare_and_swap(const Tile<K, N>& x, const std::source_location& loc) {
  constexpr std::size_t pairs = N / (2 * Step);
  auto order_pair = [&](const auto& first, const auto& second) {
    auto low = minimum(first, second, loc);
    auto high = maximum(first, second, loc);
    if constexpr (Merge >= L) {
      return join(low, high, loc);
    } else {
      auto descending = pair_bit_set<pairs, Step, Merge / (2 * Step)>(loc);
      return join(where(descending, high, low, loc), where(descending, low, high, loc), loc);
    }
  };
  if constexpr (Step == 1) {
    auto [first, second] = split(reshape<pairs, 2>(x, loc), loc);
    return reshape<N>(order_pair(first, second), loc);
  } else {
    auto [first, second] = split(permute<0, 2, 1>(reshape<pairs, 2, Step>(x, loc), loc), loc);
    return reshape<N>(permute<0, 2, 1>(order_pair(first, second), loc), loc);
  }
}

/// The steps Step, Step / 2, … 1 of a bitonic merge of size Merge.
template <std::size_t L, std::size_t Merge, std::size_t Step, class K, std::size_t N>
Tile<K, N> bitonic_merge(const Tile<K, N>& x, const std::source_location& loc) {
  if constexpr (Step == 0) return x;
  else return bitonic_merge<L, Merge, Step / 2>(compare_and_swap<L, Merge, Step>(x, loc), loc);
}

/// Merges of size Merge, 2 Merge, … Last: afterwards every block of Last
/// elements is sorted (ascending, or alternating while Last < L).
template <std::size_t L, std::size_t Merge, std::size_t Last, class K, std::size_t N>
Tile<K, N> bitonic_sort(const Tile<K, N>& x, const std::source_location& loc) {
  if constexpr (Merge > Last) return x;
  else return bitonic_sort<L, 2 * Merge, Last>(bitonic_merge<L, Merge, Merge / 2>(x, loc), loc);
}

/// Rows of length L made of blocks of K, sorted ascending and descending in
/// turn, down to the K smallest of each row, ascending: the elementwise
/// minimum of an ascending and a descending block holds the K smallest of both
/// as a bitonic sequence, which one merge sorts.
template <std::size_t L, std::size_t K, class E, std::size_t N>
auto keep_smallest(const Tile<E, N>& x, const std::source_location& loc) {
  if constexpr (L == K) {
    return x;
  } else {
    constexpr std::size_t pairs = N / (2 * K);
    auto halved = [&] {
      if constexpr (K == 1) {
        auto [first, second] = split(reshape<pairs, 2>(x, loc), loc);
        return reshape<N / 2>(minimum(first, second, loc), loc);
      } else {
        auto [first, second] = split(permute<0, 2, 1>(reshape<pairs, 2, K>(x, loc), loc), loc);
        return reshape<N / 2>(minimum(first, second, loc), loc);
      }
    }();
    return keep_smallest<L / 2, K>(bitonic_merge<L / 2, K, K / 2>(halved, loc), loc);
  }
}

/// x's shape with the last dimension replaced by K.
template <class S, std::size_t K>
struct with_last_dim;
template <std::size_t... D, std::size_t K>
struct with_last_dim<shape<D...>, K> {
  template <std::size_t... I>
  static auto make(std::index_sequence<I...>) {
    return shape<(I + 1 == sizeof...(D) ? K : dim_v<shape<D...>, I>)...>{};
  }
  using type = decltype(make(std::make_index_sequence<sizeof...(D)>{}));
};

template <class E, class S, Numeric Flat>
auto reshape_to(const Flat& flat, const std::source_location& loc) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return value_t<E, S>(reshape<dim_v<S, I>...>(flat, loc).value());
  }(std::make_index_sequence<S::rank>{});
}

}  // namespace detail

// [book:sort]
/// x sorted along its last axis, ascending or descending. A bitonic network
/// of log2(n)(log2(n)+1)/2 compare-and-swap steps on integer keys; elements
/// come through bit for bit, -0 before +0 and NaN after +inf (first when
/// descending).
template <Numeric X>
plain_t<X> sort(const X& x, bool descending = false, std::source_location loc = std::source_location::current()) {
  using S = shape_t<X>;
  static_assert(sort_check<S, storage_of<X>>::value);
  constexpr std::size_t n = dim_v<S, S::rank - 1>;
  auto keys = reshape<S::numel>(detail::to_sort_key(x, loc), loc);
  if (descending) keys = ~keys;
  auto sorted = detail::bitonic_sort<n, 2, n>(keys, loc);
  if (descending) sorted = ~sorted;
  return detail::reshape_to<element_t<X>, S>(detail::from_sort_key<element_t<X>>(sorted, loc), loc);
}
// [/book:sort]

/// The K largest elements along the last axis, largest first, as Triton's
/// topk (ties and NaN as in sort, descending). Blocks of K are sorted, then
/// halved and merged down to K: fewer steps than a full sort when K < n.
template <std::size_t K, Numeric X>
auto topk(const X& x, std::source_location loc = std::source_location::current()) {
  using S = shape_t<X>;
  static_assert(sort_check<S, storage_of<X>>::value);
  constexpr std::size_t n = dim_v<S, S::rank - 1>;
  static_assert(topk_check<K, n>::value);
  // The largest elements are the smallest complemented keys.
  auto keys = ~reshape<S::numel>(detail::to_sort_key(x, loc), loc);
  auto blocks = detail::bitonic_sort<n, 2, K>(keys, loc);
  auto largest = ~detail::keep_smallest<n, K>(blocks, loc);
  using R = typename detail::with_last_dim<S, K>::type;
  return detail::reshape_to<element_t<X>, R>(detail::from_sort_key<element_t<X>>(largest, loc), loc);
}

}  // namespace kiln
