// Global memory: load and store through pointer values with masks, and atomics.
#pragma once

#include <optional>
#include <source_location>

#include "kiln/dsl/arith.hpp"
#include "kiln/ir/attribute_enums.hpp"

namespace kiln {

/// Cache hint of a load or store (PTX's .ca .cg .cs .cv).
using Cache = ir::Cache;
/// Eviction priority hint.
using Evict = ir::Evict;
/// Memory ordering of an atomic.
using MemoryOrder = ir::MemoryOrder;
/// The set of threads an atomic is atomic with respect to.
using Scope = ir::Scope;

struct LoadOptions {
  /// The value of masked-off elements (0 when not given).
  std::optional<double> other{};
  Cache cache = Cache::none;
  Evict evict = Evict::none;
};

struct StoreOptions {
  Cache cache = Cache::none;
  Evict evict = Evict::none;
};

struct AtomicOptions {
  MemoryOrder order = MemoryOrder::acq_rel;
  Scope scope = Scope::gpu;
};

namespace detail {
template <class M>
constexpr void check_mask() {
  static_assert(Numeric<M> && dtype_of<M> == ir::DType::i1, "kiln: a mask must be an i1 value (a comparison)");
}

template <class P, class M>
using masked_shape_t = broadcast_shape_t<shape_t<P>, shape_t<M>>;

template <Pointer P, class S>
ir::Value* pointers_as(const P& p, const std::source_location& loc) {
  return emit_broadcast(p.value(), S::vector(), loc);
}

template <Pointer P, Numeric M, class O>
auto masked_load(const P& ptrs, const M* mask, const O* other, const LoadOptions& opts,
                 const std::source_location& loc) {
  using S = masked_shape_t<P, M>;
  using R = value_t<pointee_of<P>, S>;
  std::vector<ir::Value*> operands{pointers_as<P, S>(ptrs, loc)};
  if (mask) operands.push_back(emit_broadcast(mask->value(), S::vector(), loc));
  if (other) operands.push_back(materialize(*other, dtype_of<R>, S::vector(), loc));
  return R(emit(ir::OpCode::load, operands, ir_type<R>(),
                {{"cache", ir::symbol_attribute(opts.cache)}, {"evict", ir::symbol_attribute(opts.evict)}}, loc));
}
}  // namespace detail

/// Loads the elements `ptrs` points at (a scalar pointer loads one element).
template <Pointer P>
auto load(const P& ptrs, LoadOptions opts = {}, std::source_location loc = std::source_location::current()) {
  using R = value_t<pointee_of<P>, shape_t<P>>;
  return R(detail::emit(ir::OpCode::load, {ptrs.value()}, ir_type<R>(),
                        {{"cache", ir::symbol_attribute(opts.cache)}, {"evict", ir::symbol_attribute(opts.evict)}},
                        loc));
}

/// Loads where `mask` is true; elsewhere the result is `opts.other` (or 0) and
/// memory is not touched. Pointers and mask broadcast together.
template <Pointer P, Numeric M>
auto load(const P& ptrs, const M& mask, LoadOptions opts = {},
          std::source_location loc = std::source_location::current()) {
  detail::check_mask<M>();
  static_assert(broadcast_check<shape_t<P>, shape_t<M>>::value);
  if (opts.other) return detail::masked_load(ptrs, &mask, &*opts.other, opts, loc);
  return detail::masked_load<P, M, double>(ptrs, &mask, nullptr, opts, loc);
}

/// Loads where `mask` is true and takes `other` (a value, broadcast) elsewhere.
template <Pointer P, Numeric M, Numeric O>
auto load(const P& ptrs, const M& mask, const O& other, LoadOptions opts = {},
          std::source_location loc = std::source_location::current()) {
  detail::check_mask<M>();
  static_assert(broadcast_check<shape_t<P>, shape_t<M>>::value);
  static_assert(broadcasts_to_v<shape_t<O>, detail::masked_shape_t<P, M>>,
                "kiln: load's other must broadcast to the loaded shape");
  return detail::masked_load(ptrs, &mask, &other, opts, loc);
}

namespace detail {
template <Pointer P, class V>
constexpr void check_store_shapes() {
  static_assert(broadcast_to_check<typename operand<V>::shape_type, shape_t<P>>::value);
}

template <Pointer P, class V, class M>
void masked_store(const P& ptrs, const V& value, const M* mask, const StoreOptions& opts,
                  const std::source_location& loc) {
  check_store_shapes<P, V>();
  using S = shape_t<P>;
  std::vector<ir::Value*> operands{ptrs.value(), materialize(value, dtype_of<pointee_of<P>>, S::vector(), loc)};
  if (mask) operands.push_back(emit_broadcast(mask->value(), S::vector(), loc));
  emit_op(ir::OpCode::store, operands, {},
          {{"cache", ir::symbol_attribute(opts.cache)}, {"evict", ir::symbol_attribute(opts.evict)}}, 0, loc);
}
}  // namespace detail

/// Stores `value` (cast to the pointee type, broadcast to the pointers' shape).
template <Pointer P, class V>
  requires(Numeric<V> || Literal<V>)
void store(const P& ptrs, const V& value, StoreOptions opts = {},
           std::source_location loc = std::source_location::current()) {
  detail::masked_store<P, V, i1>(ptrs, value, nullptr, opts, loc);
}

/// Stores where `mask` (broadcast to the pointers' shape) is true.
template <Pointer P, class V, Numeric M>
  requires(Numeric<V> || Literal<V>)
void store(const P& ptrs, const V& value, const M& mask, StoreOptions opts = {},
           std::source_location loc = std::source_location::current()) {
  detail::check_mask<M>();
  static_assert(broadcast_to_check<shape_t<M>, shape_t<P>>::value);
  detail::masked_store(ptrs, value, &mask, opts, loc);
}

namespace detail {
template <Pointer P, class V, class M>
auto atomic_rmw(ir::AtomicKind kind, const P& ptrs, const V& value, const M* mask, const AtomicOptions& opts,
                const std::source_location& loc) {
  check_store_shapes<P, V>();
  using S = shape_t<P>;
  using R = value_t<pointee_of<P>, S>;
  std::vector<ir::Value*> operands{ptrs.value(), materialize(value, dtype_of<R>, S::vector(), loc)};
  if (mask) operands.push_back(emit_broadcast(mask->value(), S::vector(), loc));
  return R(emit(ir::OpCode::atomic_rmw, operands, ir_type<R>(),
                {{"kind", ir::symbol_attribute(kind)},
                 {"order", ir::symbol_attribute(opts.order)},
                 {"scope", ir::symbol_attribute(opts.scope)}},
                loc));
}
}  // namespace detail

#define KILN_ATOMIC(NAME, KIND)                                                    \
  template <Pointer P, class V>                                                    \
    requires(Numeric<V> || Literal<V>)                                             \
  auto NAME(const P& ptrs, const V& value, AtomicOptions opts = {},                \
            std::source_location loc = std::source_location::current()) {          \
    return detail::atomic_rmw<P, V, i1>(KIND, ptrs, value, nullptr, opts, loc);    \
  }                                                                                \
  template <Pointer P, class V, Numeric M>                                         \
    requires(Numeric<V> || Literal<V>)                                             \
  auto NAME(const P& ptrs, const V& value, const M& mask, AtomicOptions opts = {}, \
            std::source_location loc = std::source_location::current()) {          \
    detail::check_mask<M>();                                                       \
    return detail::atomic_rmw(KIND, ptrs, value, &mask, opts, loc);                \
  }
/// Atomically adds; returns the old values (0 where masked off).
KILN_ATOMIC(atomic_add, ir::AtomicKind::add)
/// Atomically takes the maximum; returns the old values.
KILN_ATOMIC(atomic_max, ir::AtomicKind::max)
/// Atomically takes the minimum; returns the old values.
KILN_ATOMIC(atomic_min, ir::AtomicKind::min)
/// Atomically ands bits; returns the old values.
KILN_ATOMIC(atomic_and, ir::AtomicKind::bit_and)
/// Atomically ors bits; returns the old values.
KILN_ATOMIC(atomic_or, ir::AtomicKind::bit_or)
/// Atomically xors bits; returns the old values.
KILN_ATOMIC(atomic_xor, ir::AtomicKind::bit_xor)
/// Atomically exchanges; returns the old values.
KILN_ATOMIC(atomic_xchg, ir::AtomicKind::xchg)
#undef KILN_ATOMIC

/// Atomically: if *p == compare then *p = value; returns the old values.
template <Pointer P, class Cmp, class V>
auto atomic_cas(const P& ptrs, const Cmp& compare, const V& value, AtomicOptions opts = {},
                std::source_location loc = std::source_location::current()) {
  detail::check_store_shapes<P, Cmp>();
  detail::check_store_shapes<P, V>();
  using S = shape_t<P>;
  using R = value_t<pointee_of<P>, S>;
  return R(detail::emit(
      ir::OpCode::atomic_cas,
      {ptrs.value(), detail::materialize(compare, dtype_of<R>, S::vector(), loc),
       detail::materialize(value, dtype_of<R>, S::vector(), loc)},
      ir_type<R>(), {{"order", ir::symbol_attribute(opts.order)}, {"scope", ir::symbol_attribute(opts.scope)}}, loc));
}

}  // namespace kiln
