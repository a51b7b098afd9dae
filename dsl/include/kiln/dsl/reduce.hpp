// Reductions and scans along one axis: the generic reduce / associative_scan
// with a combine function written in the DSL, and sum, max, min, argmax,
// argmin, cumsum, cumprod built on them.
#pragma once

#include <source_location>
#include <tuple>
#include <utility>

#include "kiln/dsl/math.hpp"
#include "kiln/dsl/shape_ops.hpp"

namespace kiln {

/// A compile-time axis: kl::axis<1>.
template <int A>
struct axis_t {
  static constexpr int value = A;
};
template <int A>
inline constexpr axis_t<A> axis{};

/// Keep the reduced axis as a dimension of size 1.
struct keep_dims_t {};
inline constexpr keep_dims_t keep_dims{};

namespace detail {

template <class X, int A>
using reduced_t = value_t<element_t<X>, remove_axis_t<shape_t<X>, A>>;

// Traces `combine` into `region`: its arguments are the region's block
// arguments (n left elements, then n right elements); it returns one element
// or a std::tuple of n.
template <class... Xs, class Combine, std::size_t... I>
void trace_combine(ir::Block* region, Combine& combine, std::index_sequence<I...>, const std::source_location& loc) {
  constexpr std::size_t n = sizeof...(Xs);
  ir::Function& fn = TraceContext::current("reduce").function();
  std::vector<ir::Value*> args;
  for (int side = 0; side < 2; ++side) (args.push_back(fn.add_argument(*region, ir_type<element_t<Xs>>())), ...);
  InsertionScope scope(region);
  auto result = combine(element_t<Xs>(args[I])..., element_t<Xs>(args[n + I])...);
  if constexpr (n == 1) {
    emit_yield({emit_cast(result.value(), dtype_of<element_t<Xs>...>, loc)}, loc);
  } else {
    emit_yield({emit_cast(std::get<I>(result).value(), dtype_of<element_t<Xs>>, loc)...}, loc);
  }
}

// A reduce or scan (`code`) of `inputs` with `combine`, one result of type
// Rs… per input.
template <class... Rs, class... Xs, class Combine>
std::tuple<Rs...> emit_combining(ir::OpCode code, const std::tuple<Xs...>& inputs, Combine& combine,
                                 std::vector<std::pair<std::string, ir::Attribute>> attributes,
                                 const std::source_location& loc) {
  std::vector<ir::Value*> operands;
  std::apply([&](const auto&... x) { (operands.push_back(x.value()), ...); }, inputs);
  ir::Operation* op = emit_op(code, operands, {ir_type<Rs>()...}, std::move(attributes), 1, loc);
  trace_combine<Xs...>(op->regions[0].get(), combine, std::index_sequence_for<Xs...>{}, loc);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple<Rs...>(Rs(op->result(I))...);
  }(std::index_sequence_for<Xs...>{});
}

template <int A, class... Xs, class Combine>
auto reduce_n(const std::tuple<Xs...>& inputs, Combine combine, const std::source_location& loc) {
  static_assert((axis_check<shape_t<Xs>, A>::value && ...));
  static_assert(sizeof...(Xs) >= 1);
  using S0 = shape_t<std::tuple_element_t<0, std::tuple<Xs...>>>;
  static_assert((std::is_same_v<shape_t<Xs>, S0> && ...), "kiln: reduce inputs must share one shape");
  return emit_combining<reduced_t<Xs, A>...>(ir::OpCode::reduce, inputs, combine, {{"axis", std::int64_t{A}}}, loc);
}

template <int A, class X>
auto keep_axis(const X& reduced, const std::source_location& loc) {
  return expand_dims<A>(reduced, loc);
}

}  // namespace detail

// [book:reduce]
/// Reduces x along axis A with `combine(a, b)`, an associative function of two
/// elements written in the DSL. The axis is removed unless keep_dims is given.
template <Numeric X, int A, class Combine>
auto reduce(const X& x, axis_t<A>, Combine combine, std::source_location loc = std::source_location::current()) {
  return std::get<0>(detail::reduce_n<A>(std::tuple<plain_t<X>>(x), combine, loc));
}
// [/book:reduce]
template <Numeric X, int A, class Combine>
auto reduce(const X& x, axis_t<A>, Combine combine, keep_dims_t,
            std::source_location loc = std::source_location::current()) {
  return detail::keep_axis<A>(reduce(x, axis<A>, combine, loc), loc);
}

/// Reduces several same-shaped values together: combine takes the n left then
/// the n right elements and returns a std::tuple of n (argmax combines
/// values and indices this way).
template <int A, class... Xs, class Combine>
auto reduce(const std::tuple<Xs...>& inputs, axis_t<A>, Combine combine,
            std::source_location loc = std::source_location::current()) {
  return detail::reduce_n<A>(inputs, combine, loc);
}

namespace detail {
// sum accumulates narrow floats in f32 and narrow ints in i32, as Triton does.
template <Numeric X>
constexpr ir::DType sum_dtype() {
  constexpr ir::DType d = dtype_of<X>;
  if constexpr (ir::is_float(d)) return ir::dtype_bits(d) < 32 ? ir::DType::f32 : d;
  else if constexpr (ir::is_unsigned_int(d)) return ir::dtype_bits(d) < 32 ? ir::DType::u32 : d;
  else return ir::dtype_bits(d) < 32 ? ir::DType::i32 : d;
}
template <Numeric X>
auto widen_for_sum(const X& x) {
  return cast<Scalar<storage_t<sum_dtype<X>()>>>(x);
}
}  // namespace detail

// [book:sum]
/// Sum along axis A (f16/bf16 accumulate in f32, narrow ints in i32).
template <Numeric X, int A>
auto sum(const X& x, axis_t<A> ax, std::source_location loc = std::source_location::current()) {
  return reduce(detail::widen_for_sum(x), ax, [](auto a, auto b) { return a + b; }, loc);
}
// [/book:sum]
template <Numeric X, int A>
auto sum(const X& x, axis_t<A> ax, keep_dims_t, std::source_location loc = std::source_location::current()) {
  return detail::keep_axis<A>(sum(x, ax, loc), loc);
}
/// Sum of all elements.
template <Numeric X>
auto sum(const X& x, std::source_location loc = std::source_location::current()) {
  return sum(reshape<shape_t<X>::numel>(x, loc), axis<0>, loc);
}

/// Maximum along axis A (NaN if any element is NaN).
template <Numeric X, int A>
auto max(const X& x, axis_t<A> ax, std::source_location loc = std::source_location::current()) {
  return reduce(x, ax, [](auto a, auto b) { return maximum(a, b); }, loc);
}
template <Numeric X, int A>
auto max(const X& x, axis_t<A> ax, keep_dims_t, std::source_location loc = std::source_location::current()) {
  return detail::keep_axis<A>(max(x, ax, loc), loc);
}
template <Numeric X>
auto max(const X& x, std::source_location loc = std::source_location::current()) {
  return max(reshape<shape_t<X>::numel>(x, loc), axis<0>, loc);
}

/// Minimum along axis A (NaN if any element is NaN).
template <Numeric X, int A>
auto min(const X& x, axis_t<A> ax, std::source_location loc = std::source_location::current()) {
  return reduce(x, ax, [](auto a, auto b) { return minimum(a, b); }, loc);
}
template <Numeric X, int A>
auto min(const X& x, axis_t<A> ax, keep_dims_t, std::source_location loc = std::source_location::current()) {
  return detail::keep_axis<A>(min(x, ax, loc), loc);
}
template <Numeric X>
auto min(const X& x, std::source_location loc = std::source_location::current()) {
  return min(reshape<shape_t<X>::numel>(x, loc), axis<0>, loc);
}

namespace detail {
// The extreme element along A and the index of its first occurrence: reduces
// (value, index) pairs.
template <bool Max, Numeric X, int A>
auto arg_extreme(const X& x, const std::source_location& loc) {
  using S = shape_t<X>;
  constexpr std::size_t n = dim_v<S, static_cast<std::size_t>(A)>;
  auto idx = arange<n>(0, loc);
  // Put the index along axis A, then broadcast to x's shape.
  auto shaped = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return value_t<i32, shape<(I == static_cast<std::size_t>(A) ? n : 1)...>>(
        emit(ir::OpCode::reshape, {idx.value()},
             ir_type<value_t<i32, shape<(I == static_cast<std::size_t>(A) ? n : 1)...>>>(), {}, loc));
  }(std::make_index_sequence<S::rank>{});
  auto indices = value_t<i32, S>(emit_broadcast(shaped.value(), S::vector(), loc));
  // [book:argmax]
  auto [extreme, index] = reduce(
      std::tuple<plain_t<X>, decltype(indices)>(x, indices), axis<A>,
      [](auto va, auto ia, auto vb, auto ib) {
        auto better = Max ? (vb > va) : (vb < va);
        auto tie = vb == va;
        if constexpr (ir::is_float(dtype_of<X>)) {
          // A NaN beats every number and ties with another NaN: max's NaN,
          // at the first NaN's index, in any order of combining.
          better = better | (isnan(vb) & ~isnan(va));
          tie = tie | (isnan(va) & isnan(vb));
        }
        auto take_b = better | (tie & (ib < ia));
        return std::tuple(where(take_b, vb, va), where(take_b, ib, ia));
      },
      loc);
  // [/book:argmax]
  return std::pair(extreme, index);
}
}  // namespace detail

/// Index (i32) of the maximum along axis A; the first one on ties, the first
/// NaN's where there is a NaN.
template <Numeric X, int A>
auto argmax(const X& x, axis_t<A>, std::source_location loc = std::source_location::current()) {
  return detail::arg_extreme<true, X, A>(x, loc).second;
}
/// Index (i32) of the minimum along axis A; the first one on ties, the first
/// NaN's where there is a NaN.
template <Numeric X, int A>
auto argmin(const X& x, axis_t<A>, std::source_location loc = std::source_location::current()) {
  return detail::arg_extreme<false, X, A>(x, loc).second;
}

/// The maximum along axis A and its index (i32, the first one on ties), from
/// one reduction, as Triton's max(x, axis, return_indices=True): the value is
/// max's, NaN where the row has one, and the index then the first NaN's (as
/// torch.max; Triton's leaves it to the order of combining).
template <Numeric X, int A>
auto max_with_index(const X& x, axis_t<A>, std::source_location loc = std::source_location::current()) {
  return detail::arg_extreme<true, X, A>(x, loc);
}
/// The minimum along axis A and its index (i32, the first one on ties), from
/// one reduction; NaNs as in max_with_index.
template <Numeric X, int A>
auto min_with_index(const X& x, axis_t<A>, std::source_location loc = std::source_location::current()) {
  return detail::arg_extreme<false, X, A>(x, loc);
}

/// Inclusive scan of several same-shaped tiles together along axis A, as
/// Triton's associative_scan of a tuple: combine takes the n earlier
/// elements then the n later ones and returns a std::tuple of n. It need
/// only be associative, so a first-order linear recurrence h = a h + x is
/// the scan of the pairs (a, x) under (a1, x1), (a2, x2) -> (a1 a2, a2 x1 + x2).
template <int A, class... Xs, class Combine>
auto associative_scan(const std::tuple<Xs...>& inputs, axis_t<A>, Combine combine, bool reverse = false,
                      std::source_location loc = std::source_location::current()) {
  static_assert((axis_check<shape_t<Xs>, A>::value && ...));
  using S0 = shape_t<std::tuple_element_t<0, std::tuple<Xs...>>>;
  static_assert((std::is_same_v<shape_t<Xs>, S0> && ...), "kiln: associative_scan inputs must share one shape");
  return detail::emit_combining<plain_t<Xs>...>(
      ir::OpCode::scan, inputs, combine, {{"axis", std::int64_t{A}}, {"reverse", std::int64_t{reverse ? 1 : 0}}}, loc);
}

/// Inclusive scan along axis A with an associative `combine(a, b)`;
/// `reverse` scans from the last element to the first.
template <Numeric X, int A, class Combine>
plain_t<X> associative_scan(const X& x, axis_t<A> ax, Combine combine, bool reverse = false,
                            std::source_location loc = std::source_location::current()) {
  return std::get<0>(associative_scan(std::tuple<plain_t<X>>(x), ax, combine, reverse, loc));
}

// [book:cumsum]
/// Running sum along axis A (in the sum's accumulation dtype).
template <Numeric X, int A>
auto cumsum(const X& x, axis_t<A> ax, bool reverse = false,
            std::source_location loc = std::source_location::current()) {
  return associative_scan(detail::widen_for_sum(x), ax, [](auto a, auto b) { return a + b; }, reverse, loc);
}
// [/book:cumsum]

/// Running product along axis A.
template <Numeric X, int A>
auto cumprod(const X& x, axis_t<A> ax, bool reverse = false,
             std::source_location loc = std::source_location::current()) {
  return associative_scan(detail::widen_for_sum(x), ax, [](auto a, auto b) { return a * b; }, reverse, loc);
}

}  // namespace kiln
