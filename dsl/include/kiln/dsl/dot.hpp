// Matrix product of 2-D tiles: dot(a, b[, acc], {.precision}).
#pragma once

#include <source_location>

#include "kiln/dsl/creation.hpp"
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
template <Numeric A, Numeric B>
using dot_result_t = Tile<Scalar<storage_t<accumulator_dtype<A>()>>, dim_v<shape_t<A>, 0>, dim_v<shape_t<B>, 1>>;
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

/// a @ b with a zero accumulator; kl::dot<kl::f16>(a, b) gives f16 for f16
/// operands (Triton's out_dtype=tl.float16).
template <class Out = void, Numeric A, Numeric B>
auto dot(const A& a, const B& b, DotOptions opts = {}, std::source_location loc = std::source_location::current()) {
  static_assert(dot_check<shape_t<A>, shape_t<B>>::value);
  using Wide = detail::dot_result_t<A, B>;
  using R = std::conditional_t<std::is_void_v<Out>, Wide, value_t<Out, shape_t<Wide>>>;
  R zero(detail::emit_constant(ir_type<R>(), 0.0, loc));
  return dot(a, b, zero, opts, loc);
}

}  // namespace kiln
