// Hints to the GPU code generator (Triton's tl.multiple_of): the value,
// unchanged, and a fact about it that widens the vector loads and stores built
// from it. The cpu and emu devices check the fact and report one that does not
// hold; the GPU trusts it.
#pragma once

#include <cstdint>
#include <source_location>

#include "kiln/dsl/value.hpp"

namespace kiln {

namespace detail {
template <class X>
constexpr bool hintable() {
  if constexpr (Pointer<X>) return true;
  else if constexpr (Numeric<X>) return ir::is_integer(dtype_of<X>) && !ir::is_bool(dtype_of<X>);
  else return false;
}
}  // namespace detail

/// `x`, with the promise that every element is a multiple of N (for a
/// pointer: its address in bytes). N is a power of two. Put it on the scalar
/// the offsets are built from (a row stride, a base offset): the code
/// generator carries the fact through the arithmetic, so
/// `row * kl::multiple_of<8>(stride) + kl::arange<BLOCK>()` loads 8-element
/// aligned runs with vector instructions. A false promise is a fault on the
/// cpu and emu devices, naming the kernel, the line and the first offending
/// element; a GPU does not check it, and there it is undefined behaviour
/// (misaligned vector accesses, masks taken as constant where they are not).
template <std::int64_t N, Value X>
plain_t<X> multiple_of(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(detail::hintable<X>(), "kiln: multiple_of needs integer or pointer values");
  static_assert(N > 0 && (N & (N - 1)) == 0, "kiln: multiple_of<N> needs N to be a positive power of two");
  return plain_t<X>(
      detail::emit(ir::OpCode::multiple_of, {x.value()}, ir_type<X>(), {{"value", std::int64_t{N}}}, loc));
}

}  // namespace kiln
