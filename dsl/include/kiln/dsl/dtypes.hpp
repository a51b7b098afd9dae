// Element types of the language: Scalar<C> for each C++ storage type, the
// short aliases (kl::i32, kl::f16, …) and the mapping to IR dtypes.
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/numeric.hpp"

namespace kiln {

template <class C>
struct Scalar;
template <class E>
struct Ptr;

namespace detail {

template <class C>
struct dtype_of_storage;
#define KILN_DTYPE(C, D)                             \
  template <>                                        \
  struct dtype_of_storage<C> {                       \
    static constexpr ir::DType value = ir::DType::D; \
    static constexpr std::string_view name = #D;     \
  };
KILN_DTYPE(bool, i1)
KILN_DTYPE(std::int8_t, i8)
KILN_DTYPE(std::int16_t, i16)
KILN_DTYPE(std::int32_t, i32)
KILN_DTYPE(std::int64_t, i64)
KILN_DTYPE(std::uint8_t, u8)
KILN_DTYPE(std::uint16_t, u16)
KILN_DTYPE(std::uint32_t, u32)
KILN_DTYPE(std::uint64_t, u64)
KILN_DTYPE(half, f16)
KILN_DTYPE(bfloat16, bf16)
KILN_DTYPE(float, f32)
KILN_DTYPE(double, f64)
KILN_DTYPE(float8_e4m3, f8e4m3)
KILN_DTYPE(float8_e5m2, f8e5m2)
#undef KILN_DTYPE

template <ir::DType D>
struct storage_of_dtype;
#define KILN_STORAGE(C, D)                \
  template <>                             \
  struct storage_of_dtype<ir::DType::D> { \
    using type = C;                       \
  };
KILN_STORAGE(bool, i1)
KILN_STORAGE(std::int8_t, i8)
KILN_STORAGE(std::int16_t, i16)
KILN_STORAGE(std::int32_t, i32)
KILN_STORAGE(std::int64_t, i64)
KILN_STORAGE(std::uint8_t, u8)
KILN_STORAGE(std::uint16_t, u16)
KILN_STORAGE(std::uint32_t, u32)
KILN_STORAGE(std::uint64_t, u64)
KILN_STORAGE(half, f16)
KILN_STORAGE(bfloat16, bf16)
KILN_STORAGE(float, f32)
KILN_STORAGE(double, f64)
KILN_STORAGE(float8_e4m3, f8e4m3)
KILN_STORAGE(float8_e5m2, f8e5m2)
#undef KILN_STORAGE

}  // namespace detail

/// A C++ type that stores one element of some dtype (float, std::int32_t, kiln::half…).
template <class C>
concept Storage = requires { detail::dtype_of_storage<C>::value; };

/// The IR dtype stored by C++ type C.
template <Storage C>
inline constexpr ir::DType dtype_v = detail::dtype_of_storage<C>::value;

/// "f16": the dtype name of C++ type C, at compile time (as ir::dtype_name).
template <Storage C>
inline constexpr std::string_view dtype_name_v = detail::dtype_of_storage<C>::name;

/// The C++ storage type of dtype D.
template <ir::DType D>
using storage_t = typename detail::storage_of_dtype<D>::type;

using i1 = Scalar<bool>;
using i8 = Scalar<std::int8_t>;
using i16 = Scalar<std::int16_t>;
using i32 = Scalar<std::int32_t>;
using i64 = Scalar<std::int64_t>;
using u8 = Scalar<std::uint8_t>;
using u16 = Scalar<std::uint16_t>;
using u32 = Scalar<std::uint32_t>;
using u64 = Scalar<std::uint64_t>;
using f16 = Scalar<half>;
using bf16 = Scalar<bfloat16>;
using f32 = Scalar<float>;
using f64 = Scalar<double>;
using f8e4m3 = Scalar<float8_e4m3>;
using f8e5m2 = Scalar<float8_e5m2>;

}  // namespace kiln
