// Elementwise arithmetic and comparison between values and C++ numbers: the
// C-like dtype promotion, numpy broadcasting and pointer arithmetic behind
// the operators.
#pragma once

#include <source_location>
#include <type_traits>

#include "kiln/dsl/value.hpp"

namespace kiln {
namespace detail {

/// The dtype a C++ number takes next to an operand of dtype `other`: the
/// other's dtype when the kinds agree (int with int or float, float with
/// float), else i32 for ints and f32 for floats — Triton's rule for Python numbers.
template <Literal L>
constexpr ir::DType literal_dtype(ir::DType other) {
  if constexpr (std::is_same_v<L, bool>) return ir::DType::i1;
  else if constexpr (std::is_floating_point_v<L>) return ir::is_float(other) ? other : ir::DType::f32;
  else return ir::is_bool(other) ? ir::DType::i32 : other;
}

template <class X>
struct operand {
  // A C++ number: a scalar whose dtype follows the other operand.
  using shape_type = kiln::shape<>;
  static constexpr bool is_literal = true;
};
template <Value X>
struct operand<X> {
  using shape_type = shape_t<X>;
  static constexpr bool is_literal = false;
};

template <class A, class B>
constexpr ir::DType common_dtype() {
  if constexpr (operand<A>::is_literal && operand<B>::is_literal)
    return ir::promote(literal_dtype<A>(ir::DType::i1), literal_dtype<B>(ir::DType::i1));
  else if constexpr (operand<A>::is_literal) return literal_dtype<A>(dtype_of<B>);
  else if constexpr (operand<B>::is_literal) return literal_dtype<B>(dtype_of<A>);
  else return ir::promote(dtype_of<A>, dtype_of<B>);
}

/// `x` as an SSA value of dtype `d` and shape `s`.
template <class X>
ir::Value* materialize(const X& x, ir::DType d, const ir::Shape& s, const std::source_location& loc) {
  if constexpr (Value<X>) {
    return emit_broadcast(emit_cast(x.value(), d, loc), s, loc);
  } else if constexpr (std::is_integral_v<X>) {
    return emit_broadcast(emit_int_constant(ir::Type::scalar(d), static_cast<std::int64_t>(x), loc), s, loc);
  } else {
    return emit_broadcast(emit_constant(ir::Type::scalar(d), static_cast<double>(x), loc), s, loc);
  }
}

constexpr bool is_comparison(Binary op) { return op >= Binary::lt; }
constexpr bool is_bitwise(Binary op) { return op >= Binary::bit_and && op <= Binary::shr; }

inline ir::OpCode opcode_of(Binary op) {
  switch (op) {
    case Binary::add: return ir::OpCode::add;
    case Binary::sub: return ir::OpCode::sub;
    case Binary::mul: return ir::OpCode::mul;
    case Binary::div: return ir::OpCode::div;
    case Binary::rem: return ir::OpCode::rem;
    case Binary::bit_and: return ir::OpCode::and_;
    case Binary::bit_or: return ir::OpCode::or_;
    case Binary::bit_xor: return ir::OpCode::xor_;
    case Binary::shl: return ir::OpCode::shl;
    case Binary::shr: return ir::OpCode::shr;
    default: return ir::OpCode::cmp;
  }
}

inline const char* predicate_of(Binary op) {
  switch (op) {
    case Binary::lt: return "lt";
    case Binary::le: return "le";
    case Binary::gt: return "gt";
    case Binary::ge: return "ge";
    case Binary::eq: return "eq";
    default: return "ne";
  }
}

/// Pointer + integer offsets (either order) and pointer - offsets: addptr.
template <Binary Op, class P, class O>
auto pointer_arithmetic(const P& p, const O& offsets, const std::source_location& loc) {
  static_assert(Op == Binary::add || Op == Binary::sub, "kiln: pointers support only + and - with integer offsets");
  constexpr bool integer_offsets = [] {
    if constexpr (Literal<O>) return std::is_integral_v<O> && !std::is_same_v<O, bool>;
    else if constexpr (Numeric<O>) return ir::is_integer(dtype_of<O>) && !ir::is_bool(dtype_of<O>);
    else return false;
  }();
  static_assert(integer_offsets, "kiln: pointer offsets must be integers (cast the offsets to an integer dtype)");
  using S = broadcast_shape_t<shape_t<P>, typename operand<O>::shape_type>;
  static_assert(broadcast_check<shape_t<P>, typename operand<O>::shape_type>::value);
  using R = value_t<element_t<P>, S>;
  constexpr ir::DType offset_dtype = [] {
    if constexpr (Literal<O>) return ir::DType::i32;
    else return dtype_of<O>;
  }();
  ir::Value* base = emit_broadcast(p.value(), S::vector(), loc);
  ir::Value* off = materialize(offsets, offset_dtype, S::vector(), loc);
  if constexpr (Op == Binary::sub) off = emit(ir::OpCode::neg, {off}, off->type, {}, loc);
  return R(emit(ir::OpCode::addptr, {base, off}, ir_type<R>(), {}, loc));
}

template <Binary Op, class A, class B>
auto apply_binary(const A& a, const B& b, const std::source_location& loc) {
  if constexpr (Pointer<A>) {
    return pointer_arithmetic<Op>(a, b, loc);
  } else if constexpr (Pointer<B>) {
    static_assert(Op == Binary::add, "kiln: only offsets + pointer is allowed with the pointer on the right");
    return pointer_arithmetic<Op>(b, a, loc);
  } else {
    using SA = typename operand<A>::shape_type;
    using SB = typename operand<B>::shape_type;
    static_assert(broadcast_check<SA, SB>::value);
    using S = broadcast_shape_t<SA, SB>;
    constexpr ir::DType d = common_dtype<A, B>();
    if constexpr (is_bitwise(Op))
      static_assert(ir::is_integer(d), "kiln: bitwise operators and shifts need integer operands");
    ir::Value* va = materialize(a, d, S::vector(), loc);
    ir::Value* vb = materialize(b, d, S::vector(), loc);
    if constexpr (is_comparison(Op)) {
      using R = value_t<i1, S>;
      return R(emit(ir::OpCode::cmp, {va, vb}, ir_type<R>(), {{"pred", ir::Symbol{predicate_of(Op)}}}, loc));
    } else {
      using R = value_t<Scalar<storage_t<d>>, S>;
      return R(emit(opcode_of(Op), {va, vb}, ir_type<R>(), {}, loc));
    }
  }
}

template <Unary Op, class A>
auto apply_unary(const A& a, const std::source_location& loc) {
  static_assert(Numeric<A>, "kiln: unary - and ~ apply to numbers, not pointers");
  if constexpr (Op == Unary::bit_not) static_assert(ir::is_integer(dtype_of<A>), "kiln: ~ needs an integer operand");
  return plain_t<A>(emit(Op == Unary::neg ? ir::OpCode::neg : ir::OpCode::not_, {a.value()}, ir_type<A>(), {}, loc));
}

template <class Self, class R>
void assign_result(Self& self, const R& result, const std::source_location& loc) {
  static_assert(std::is_same_v<plain_t<Self>, plain_t<R>>,
                "kiln: compound assignment would change the value's type (dtype promotion or broadcasting); "
                "write x = x op y with an explicit cast");
  rebind(self, result.value(), loc);
}

}  // namespace detail
}  // namespace kiln
