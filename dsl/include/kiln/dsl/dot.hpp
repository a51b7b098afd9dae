// Matrix product of 2-D tiles, dot(a, b[, acc], {.precision}), and of
// batches of them (3-D tiles), one 2-D product per slice.
#pragma once

#include <source_location>

#include "kiln/dsl/creation.hpp"
#include "kiln/dsl/shape_ops.hpp"
#include "kiln/ir/attribute_enums.hpp"

namespace kiln {

/// How f32 inputs are multiplied: exactly (ieee), or rounded to tf32 first
/// (tf32, as tensor cores do), or with the three-pass tf32 split (tf32x3).
using Precision = ir::Precision;

struct DotOptions {
  Precision precision = Precision::ieee;
};

namespace detail {

template <Numeric A>
constexpr ir::DType accumulator_dtype() {
  return ir::is_integer(dtype_of<A>) ? ir::DType::i32 : ir::DType::f32;
}
/// The shape of a @ b: [M, N], or [B, M, N] for a batch.
template <class SA, class SB>
struct dot_shape {
  using type = shape<dim_v<SA, 0>, dim_v<SB, 1>>;
};
template <std::size_t Batch, std::size_t M, std::size_t K, std::size_t B2, std::size_t K2, std::size_t N>
struct dot_shape<shape<Batch, M, K>, shape<B2, K2, N>> {
  using type = shape<Batch, M, N>;
};
template <Numeric A, Numeric B>
using dot_result_t =
    value_t<Scalar<storage_t<accumulator_dtype<A>()>>, typename dot_shape<shape_t<A>, shape_t<B>>::type>;

}  // namespace detail

// [book:dot]
/// acc + a @ b for a [M, K] and b [K, N]; f16/bf16/f32/fp8 inputs accumulate in
/// f32, i8 in i32. acc is [M, N] of the accumulator dtype, or f16 for f16
/// inputs: the sum is then formed in f32 and rounded to f16 once.
template <Numeric A, Numeric B, Numeric Acc>
auto dot(const A& a, const B& b, const Acc& acc, DotOptions opts = {},
         std::source_location loc = std::source_location::current()) {
  static_assert(dot_check<shape_t<A>, shape_t<B>>::value);
  static_assert(dtype_of<A> == dtype_of<B>, "kiln: dot operands must have one dtype; cast one of them");
  static_assert(dtype_of<A> == ir::DType::f16 || dtype_of<A> == ir::DType::bf16 || dtype_of<A> == ir::DType::f32 ||
                    dtype_of<A> == ir::DType::i8 || dtype_of<A> == ir::DType::f8e4m3 ||
                    dtype_of<A> == ir::DType::f8e5m2,
                "kiln: dot takes f16, bf16, f32, fp8 or i8 operands");
  using R = detail::dot_result_t<A, B>;
  constexpr bool f16_out = dtype_of<A> == ir::DType::f16 && dtype_of<Acc> == ir::DType::f16;
  static_assert(std::is_same_v<plain_t<Acc>, R> || (f16_out && std::is_same_v<shape_t<Acc>, shape_t<R>>),
                "kiln: dot accumulator must be [M, N] of the accumulator dtype (f32, or i32 for i8; f16 also for f16 "
                "operands)");
  if constexpr (f16_out) {
    const R wide(detail::emit_cast(acc.value(), ir::DType::f32, loc));
    return plain_t<Acc>(detail::emit_cast(dot(a, b, wide, opts, loc).value(), ir::DType::f16, loc));
  } else {
    return R(detail::emit(ir::OpCode::dot, {a.value(), b.value(), acc.value()}, ir_type<R>(),
                          {{"precision", ir::symbol_attribute(opts.precision)}}, loc));
  }
}
// [/book:dot]

namespace detail {
/// The products of a batch along the last axis: a [M, K, B], b [K, N, B] and
/// acc [M, N, B] give [M, N, B]. Splitting the last axis into (B/2, 2) and
/// that pair apart separates the even slices from the odd ones, so every
/// step is a reshape of the last axis and a split, down to the 2-D dots.
template <Numeric A, Numeric B, Numeric Acc>
auto dot_along_last_axis(const A& a, const B& b, const Acc& acc, DotOptions opts, const std::source_location& loc) {
  constexpr std::size_t m = dim_v<shape_t<A>, 0>, k = dim_v<shape_t<A>, 1>, batch = dim_v<shape_t<A>, 2>;
  constexpr std::size_t n = dim_v<shape_t<B>, 1>;
  if constexpr (batch == 2) {
    auto [a_even, a_odd] = split(a, loc);
    auto [b_even, b_odd] = split(b, loc);
    auto [acc_even, acc_odd] = split(acc, loc);
    return join(dot(a_even, b_even, acc_even, opts, loc), dot(a_odd, b_odd, acc_odd, opts, loc), loc);
  } else {
    auto [a_even, a_odd] = split(reshape<m, k, batch / 2, 2>(a, loc), loc);
    auto [b_even, b_odd] = split(reshape<k, n, batch / 2, 2>(b, loc), loc);
    auto [acc_even, acc_odd] = split(reshape<m, n, batch / 2, 2>(acc, loc), loc);
    return reshape<m, n, batch>(join(dot_along_last_axis(a_even, b_even, acc_even, opts, loc),
                                     dot_along_last_axis(a_odd, b_odd, acc_odd, opts, loc), loc),
                                loc);
  }
}
}  // namespace detail

// [book:batched_dot]
/// acc + a @ b for each of a batch of B products, Triton's dot of 3-D tiles:
/// a [B, M, K], b [B, K, N], acc [B, M, N]; slice i of the result is the 2-D
/// dot of slice i of each. The batch moves to the last axis, where split
/// takes it apart slice by slice, and back.
template <Numeric A, Numeric B, Numeric Acc>
  requires(shape_t<A>::rank == 3)
auto dot(const A& a, const B& b, const Acc& acc, DotOptions opts = {},
         std::source_location loc = std::source_location::current()) {
  static_assert(dot_check<shape_t<A>, shape_t<B>>::value);
  using S = typename detail::dot_shape<shape_t<A>, shape_t<B>>::type;
  static_assert(std::is_same_v<shape_t<Acc>, S>, "kiln: dot accumulator of 3-D tiles must be [B, M, N]");
  constexpr std::size_t m = dim_v<S, 1>, n = dim_v<S, 2>, k = dim_v<shape_t<A>, 2>;
  if constexpr (dim_v<S, 0> == 1) {
    auto product = dot(reshape<m, k>(a, loc), reshape<k, n>(b, loc), reshape<m, n>(acc, loc), opts, loc);
    return reshape<1, m, n>(product, loc);
  } else {
    auto product = detail::dot_along_last_axis(permute<1, 2, 0>(a, loc), permute<1, 2, 0>(b, loc),
                                               permute<1, 2, 0>(acc, loc), opts, loc);
    return permute<2, 0, 1>(product, loc);
  }
}
// [/book:batched_dot]

/// a @ b with a zero accumulator, of 2-D or 3-D tiles; kl::dot<kl::f16>(a, b)
/// gives f16 for f16 operands (Triton's out_dtype=tl.float16).
template <class Out = void, Numeric A, Numeric B>
auto dot(const A& a, const B& b, DotOptions opts = {}, std::source_location loc = std::source_location::current()) {
  static_assert(dot_check<shape_t<A>, shape_t<B>>::value);
  using Wide = detail::dot_result_t<A, B>;
  using R = std::conditional_t<std::is_void_v<Out>, Wide, value_t<Out, shape_t<Wide>>>;
  R zero(detail::emit_constant(ir_type<R>(), 0.0, loc));
  return dot(a, b, zero, opts, loc);
}

}  // namespace kiln
