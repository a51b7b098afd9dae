// Type-level facts about DSL values: element type, shape, the concepts the
// primitives are constrained with, and the IR type of a value type.
#pragma once

#include <concepts>
#include <cstddef>
#include <source_location>
#include <type_traits>

#include "kiln/dsl/dtypes.hpp"
#include "kiln/dsl/shape.hpp"
#include "kiln/ir/type.hpp"

namespace kiln {

template <class E, std::size_t... D>
class Tile;
template <class T>
class Var;

/// A reference to a value together with where the expression using it was
/// written. Operators take their left operand as Located<…> so that every op
/// they trace records the user's source line.
template <class T>
struct Located {
  T& value;
  std::source_location loc;
  Located(T& v, std::source_location l = std::source_location::current()) : value(v), loc(l) {}
};

namespace detail {

// Element and shape of each value type.
template <class X>
struct value_traits;
template <class C>
struct value_traits<Scalar<C>> {
  using element = Scalar<C>;
  using shape_type = shape<>;
};
template <class E>
struct value_traits<Ptr<E>> {
  using element = Ptr<E>;
  using shape_type = shape<>;
};
template <class E, std::size_t... D>
struct value_traits<Tile<E, D...>> {
  using element = E;
  using shape_type = shape<D...>;
};
template <class T>
struct value_traits<Var<T>> : value_traits<T> {};

// The value type with element E and shape S: E itself for shape<>.
template <class E, class S>
struct make_value;
template <class E>
struct make_value<E, shape<>> {
  using type = E;
};
template <class E, std::size_t D0, std::size_t... D>
struct make_value<E, shape<D0, D...>> {
  using type = Tile<E, D0, D...>;
};

template <class E>
struct is_scalar_element : std::false_type {};
template <class C>
struct is_scalar_element<Scalar<C>> : std::true_type {
  using storage = C;
};
template <class E>
struct is_pointer_element : std::false_type {};
template <class E>
struct is_pointer_element<Ptr<E>> : std::true_type {
  using pointee = E;
};

}  // namespace detail

/// Any DSL value: Scalar, Ptr, Tile (or a Var holding one).
template <class X>
concept Value = requires { typename detail::value_traits<std::remove_cvref_t<X>>::element; };

template <Value X>
using element_t = typename detail::value_traits<std::remove_cvref_t<X>>::element;
template <Value X>
using shape_t = typename detail::value_traits<std::remove_cvref_t<X>>::shape_type;
/// The value type with element E and shape S (a Scalar or Ptr when S is shape<>).
template <class E, class S>
using value_t = typename detail::make_value<E, S>::type;
/// The plain value type of X (a Var<T> is a T).
template <Value X>
using plain_t = value_t<element_t<X>, shape_t<X>>;

/// A value of numbers (not pointers).
template <class X>
concept Numeric = Value<X> && detail::is_scalar_element<element_t<X>>::value;
/// A value of pointers.
template <class X>
concept Pointer = Value<X> && detail::is_pointer_element<element_t<X>>::value;
/// A plain C++ number used as an operand (a "weak" constant: it takes the
/// other operand's dtype where it fits, like Python numbers in Triton).
template <class X>
concept Literal = std::is_arithmetic_v<std::remove_cvref_t<X>>;

/// The C++ storage type of a numeric value's elements (float, std::int32_t…).
template <Numeric X>
using storage_of = typename detail::is_scalar_element<element_t<X>>::storage;
/// The pointee element of a pointer value (f32 for Ptr<f32>).
template <Pointer X>
using pointee_of = typename detail::is_pointer_element<element_t<X>>::pointee;

template <Numeric X>
inline constexpr ir::DType dtype_of = dtype_v<storage_of<X>>;

namespace detail {
template <class E>
ir::Type element_ir_type() {
  if constexpr (is_pointer_element<E>::value)
    return ir::Type::pointer(dtype_v<typename is_scalar_element<typename is_pointer_element<E>::pointee>::storage>);
  else return ir::Type::scalar(dtype_v<typename is_scalar_element<E>::storage>);
}
}  // namespace detail

/// The IR type of DSL value type X.
template <Value X>
ir::Type ir_type() {
  return detail::element_ir_type<element_t<X>>().with_shape(shape_t<X>::vector());
}

}  // namespace kiln
