// The value types of the language: Scalar<C>, Ptr<E> and Tile<E, D...>, each a
// handle to one SSA value of the kernel being traced, with its element type
// and shape in the C++ type.
#pragma once

#include <cstddef>
#include <source_location>

#include "kiln/dsl/operators.hpp"
#include "kiln/dsl/trace.hpp"
#include "kiln/dsl/traits.hpp"

namespace kiln {

namespace detail {

/// Base of every DSL value: the SSA value it stands for and the block in which
/// the C++ variable holding it was declared.
class Handle {
 public:
  ir::Value* value() const { return value_; }

 protected:
  explicit Handle(ir::Value* v)
      : value_(v), home_(TraceContext::active() ? TraceContext::current("value").block() : nullptr) {}
  Handle(const Handle& other) : Handle(other.value_) {}
  Handle& operator=(const Handle&) = delete;
  ~Handle() = default;

  /// Rebinds this variable; inside runtime control flow only kl::Var may be rebound.
  void assign(ir::Value* v, const std::source_location& loc) {
    check_assignment(home_, loc);
    value_ = v;
  }
  /// As above for `x = y`: an operator= cannot take a defaulted location, so
  /// a mistake is reported at the line of the op that computed y.
  void assign(ir::Value* v) {
    check_assignment(home_, v);
    value_ = v;
  }

 private:
  template <class T>
  friend class kiln::Var;
  friend void rebind(Handle& h, ir::Value* v, const std::source_location& loc) { h.assign(v, loc); }
  ir::Value* value_;
  const ir::Block* home_;
};

}  // namespace detail

/// A number of dtype C: kl::f32, kl::i32…
template <class C>
class Scalar : public detail::Handle, public detail::Operators<Scalar<C>> {
  static_assert(Storage<C>, "kiln::Scalar<C>: C must be a dtype storage type (float, std::int32_t, kiln::half…)");

 public:
  using storage_type = C;
  explicit Scalar(ir::Value* v) : Handle(v) {}
  /// A constant: kl::f32(1.5f).
  explicit Scalar(C v, std::source_location loc = std::source_location::current())
      : Handle(detail::emit_constant(ir::Type::scalar(dtype_v<C>), static_cast<double>(v), loc)) {}
  Scalar(const Scalar&) = default;
  Scalar& operator=(const Scalar& other) {
    assign(other.value());
    return *this;
  }
};

/// A pointer to elements of E in global memory: Ptr<f32>.
template <class E>
class Ptr : public detail::Handle, public detail::Operators<Ptr<E>> {
  static_assert(detail::is_scalar_element<E>::value, "kiln::Ptr<E>: E must be an element type such as kl::f32");

 public:
  using pointee_type = E;
  explicit Ptr(ir::Value* v) : Handle(v) {}
  Ptr(const Ptr&) = default;
  Ptr& operator=(const Ptr& other) {
    assign(other.value());
    return *this;
  }
};

/// A tile: a D0 x D1 x … block of elements E (numbers or pointers), held by
/// the program as a whole. Tile<f32, 128> is 128 floats.
template <class E, std::size_t... D>
class Tile : public detail::Handle, public detail::Operators<Tile<E, D...>> {
  static_assert(sizeof...(D) > 0, "kiln::Tile needs at least one dimension; use Scalar for rank 0");
  static_assert(((D > 0) && ...), "kiln::Tile dimensions must be positive");
  static_assert(tile_dims_check<shape<D...>>::value);

 public:
  using element_type = E;
  using shape_type = shape<D...>;
  static constexpr std::size_t rank = sizeof...(D);
  static constexpr std::size_t numel = shape_type::numel;

  explicit Tile(ir::Value* v) : Handle(v) {}
  Tile(const Tile&) = default;
  Tile& operator=(const Tile& other) {
    assign(other.value());
    return *this;
  }
};

}  // namespace kiln
