// C++ operators on DSL values (+ - * / % & | ^ << >> comparisons, unary - ~
// and compound assignment), as hidden friends mixed into every value type so
// that each records the source line of the expression that used it.
#pragma once

#include <source_location>

#include "kiln/dsl/traits.hpp"

namespace kiln {

template <class T>
struct Located;

namespace detail {

enum class Binary { add, sub, mul, div, rem, bit_and, bit_or, bit_xor, shl, shr, lt, le, gt, ge, eq, ne };
enum class Unary { neg, bit_not };

template <Binary Op, class A, class B>
auto apply_binary(const A& a, const B& b, const std::source_location& loc);
template <Unary Op, class A>
auto apply_unary(const A& a, const std::source_location& loc);
template <class Self, class R>
void assign_result(Self& self, const R& result, const std::source_location& loc);

#define KILN_BINARY_OPERATOR(SYMBOL, OP)                           \
  template <class B>                                               \
    requires(Value<B> || Literal<B>)                               \
  friend auto operator SYMBOL(Located<const Self> a, const B& b) { \
    return apply_binary<Binary::OP>(a.value, b, a.loc);            \
  }                                                                \
  template <class A>                                               \
    requires Literal<A>                                            \
  friend auto operator SYMBOL(const A& a, Located<const Self> b) { \
    return apply_binary<Binary::OP>(a, b.value, b.loc);            \
  }
#define KILN_COMPOUND_OPERATOR(SYMBOL, OP)                                                                \
  template <class B>                                                                                      \
    requires(Value<B> || Literal<B>)                                                                      \
  friend Self& operator SYMBOL(Located<Self> a, const B & b) {                                            \
    assign_result(a.value, apply_binary<Binary::OP>(static_cast<const Self&>(a.value), b, a.loc), a.loc); \
    return a.value;                                                                                       \
  }

/// Mixed into Scalar, Ptr and Tile.
template <class Self>
struct Operators {
  KILN_BINARY_OPERATOR(+, add)
  KILN_BINARY_OPERATOR(-, sub)
  KILN_BINARY_OPERATOR(*, mul)
  KILN_BINARY_OPERATOR(/, div)
  KILN_BINARY_OPERATOR(%, rem)
  KILN_BINARY_OPERATOR(&, bit_and)
  KILN_BINARY_OPERATOR(|, bit_or)
  KILN_BINARY_OPERATOR(^, bit_xor)
  KILN_BINARY_OPERATOR(<<, shl)
  KILN_BINARY_OPERATOR(>>, shr)
  KILN_BINARY_OPERATOR(<, lt)
  KILN_BINARY_OPERATOR(<=, le)
  KILN_BINARY_OPERATOR(>, gt)
  KILN_BINARY_OPERATOR(>=, ge)
  KILN_BINARY_OPERATOR(==, eq)
  KILN_BINARY_OPERATOR(!=, ne)
  KILN_COMPOUND_OPERATOR(+=, add)
  KILN_COMPOUND_OPERATOR(-=, sub)
  KILN_COMPOUND_OPERATOR(*=, mul)
  KILN_COMPOUND_OPERATOR(/=, div)
  KILN_COMPOUND_OPERATOR(%=, rem)
  KILN_COMPOUND_OPERATOR(&=, bit_and)
  KILN_COMPOUND_OPERATOR(|=, bit_or)
  KILN_COMPOUND_OPERATOR(^=, bit_xor)
  KILN_COMPOUND_OPERATOR(<<=, shl)
  KILN_COMPOUND_OPERATOR(>>=, shr)

  friend auto operator-(Located<const Self> a) { return apply_unary<Unary::neg>(a.value, a.loc); }
  friend auto operator~(Located<const Self> a) { return apply_unary<Unary::bit_not>(a.value, a.loc); }
};

#undef KILN_BINARY_OPERATOR
#undef KILN_COMPOUND_OPERATOR

}  // namespace detail
}  // namespace kiln
