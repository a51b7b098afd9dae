// Element types of interpreter slots: per dtype, the storage type held in a
// slot and the type arithmetic is done in, plus the one-time dtype dispatch.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/ir/type.hpp"

namespace kiln::runtime::interp {

/// A dtype's slot storage `S` and compute type `C`: narrow floats compute in
/// float and round back on store; i1 is a 0/1 byte.
template <ir::DType D, class Storage, class Compute>
struct ElementBase {
  static constexpr ir::DType dtype = D;
  using S = Storage;
  using C = Compute;
  static constexpr bool is_pointer = false;
  static constexpr bool is_float = ir::is_float(D);
  static constexpr bool is_bool = D == ir::DType::i1;
  static constexpr bool is_signed = ir::is_signed_int(D);
  static constexpr int bits = is_bool ? 1 : static_cast<int>(sizeof(Storage) * 8);
  static C load(S s) { return static_cast<C>(s); }
  static S store(C c) {
    if constexpr (is_bool) return static_cast<S>(c & 1u);
    else return static_cast<S>(c);
  }
};

template <ir::DType D>
struct Element;

#define KILN_ELEMENT(D, Storage, Compute) \
  template <>                             \
  struct Element<ir::DType::D> : ElementBase<ir::DType::D, Storage, Compute> {};
KILN_ELEMENT(i1, std::uint8_t, std::uint8_t)
KILN_ELEMENT(i8, std::int8_t, std::int8_t)
KILN_ELEMENT(i16, std::int16_t, std::int16_t)
KILN_ELEMENT(i32, std::int32_t, std::int32_t)
KILN_ELEMENT(i64, std::int64_t, std::int64_t)
KILN_ELEMENT(u8, std::uint8_t, std::uint8_t)
KILN_ELEMENT(u16, std::uint16_t, std::uint16_t)
KILN_ELEMENT(u32, std::uint32_t, std::uint32_t)
KILN_ELEMENT(u64, std::uint64_t, std::uint64_t)
KILN_ELEMENT(f16, kiln::half, float)
KILN_ELEMENT(bf16, kiln::bfloat16, float)
KILN_ELEMENT(f32, float, float)
KILN_ELEMENT(f64, double, double)
KILN_ELEMENT(f8e4m3, kiln::float8_e4m3, float)
KILN_ELEMENT(f8e5m2, kiln::float8_e5m2, float)
#undef KILN_ELEMENT

/// Pointer elements: a 64-bit address.
struct PointerElement {
  using S = std::uint64_t;
  using C = std::uint64_t;
  static constexpr bool is_pointer = true;
  static constexpr bool is_float = false;
  static constexpr bool is_bool = false;
  static constexpr bool is_signed = false;
  static constexpr int bits = 64;
  static C load(S s) { return s; }
  static S store(C c) { return c; }
};

/// Calls `f(Element<d>{})`; every branch must return the same type.
template <class F>
decltype(auto) with_dtype(ir::DType d, F&& f) {
  using D = ir::DType;
  switch (d) {
    case D::i1: return f(Element<D::i1>{});
    case D::i8: return f(Element<D::i8>{});
    case D::i16: return f(Element<D::i16>{});
    case D::i32: return f(Element<D::i32>{});
    case D::i64: return f(Element<D::i64>{});
    case D::u8: return f(Element<D::u8>{});
    case D::u16: return f(Element<D::u16>{});
    case D::u32: return f(Element<D::u32>{});
    case D::u64: return f(Element<D::u64>{});
    case D::f16: return f(Element<D::f16>{});
    case D::bf16: return f(Element<D::bf16>{});
    case D::f32: return f(Element<D::f32>{});
    case D::f64: return f(Element<D::f64>{});
    case D::f8e4m3: return f(Element<D::f8e4m3>{});
    case D::f8e5m2: return f(Element<D::f8e5m2>{});
  }
  throw std::logic_error("interpreter: unknown dtype " + std::to_string(static_cast<int>(d)));
}

/// Like with_dtype, with pointers as PointerElement.
template <class F>
decltype(auto) with_element(const ir::Type& t, F&& f) {
  if (t.is_pointer) return f(PointerElement{});
  return with_dtype(t.dtype, std::forward<F>(f));
}

/// Calls `f(U{})` with the unsigned integer type of `bytes` bytes: routines
/// that only move elements do not care what the bits mean.
template <class F>
decltype(auto) with_width(int bytes, F&& f) {
  switch (bytes) {
    case 1: return f(std::uint8_t{});
    case 2: return f(std::uint16_t{});
    case 4: return f(std::uint32_t{});
    case 8: return f(std::uint64_t{});
  }
  throw std::logic_error("interpreter: no element of " + std::to_string(bytes) + " bytes");
}

/// Unsigned type with at least 32 bits holding `T`: integer arithmetic is done
/// in it so that it wraps instead of overflowing.
template <class T>
using Wide = std::conditional_t<(sizeof(T) < 4), std::uint32_t, std::make_unsigned_t<T>>;

}  // namespace kiln::runtime::interp
