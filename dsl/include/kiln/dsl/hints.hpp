// Hints to the GPU code generator (Triton's tl.multiple_of and
// tl.max_contiguous): the value, unchanged, and a fact about it that widens
// the vector loads and stores built from it. The cpu and emu devices check the
// fact and report one that does not hold; the GPU trusts it.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "kiln/dsl/value.hpp"

namespace kiln {

namespace detail {
template <class X>
constexpr bool hintable() {
  if constexpr (Pointer<X>) return true;
  else if constexpr (Numeric<X>) return ir::is_integer(dtype_of<X>) && !ir::is_bool(dtype_of<X>);
  else return false;
}

template <class X>
constexpr bool integer_tile() {
  if constexpr (Numeric<X>) return shape_t<X>::rank > 0 && detail::hintable<X>();
  else return false;
}

template <class X>
constexpr std::int64_t last_dimension() {
  if constexpr (shape_t<X>::rank > 0) return static_cast<std::int64_t>(dim_v<shape_t<X>, shape_t<X>::rank - 1>);
  else return 0;
}

/// The run length G when `value` is the result of max_contiguous<G> (G > 1), else 0.
inline std::int64_t contiguous_group(const ir::Value* value) {
  if (!value->def || value->def->code != ir::OpCode::max_contiguous) return 0;
  const std::int64_t group = value->def->int_attribute("value");
  return group > 1 ? group : 0;
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
///
/// On the result of `kl::max_contiguous<G>` the promise is about the first
/// element of each run of G instead (the IR op's `group` attribute), so
/// `kl::multiple_of<G>(kl::max_contiguous<G>(offsets))` says: runs of G
/// consecutive integers, each starting at a multiple of G. Write the two in
/// this order: the other one promises every element a multiple of G.
template <std::int64_t N, Value X>
plain_t<X> multiple_of(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(detail::hintable<X>(), "kiln: multiple_of needs integer or pointer values");
  static_assert(N > 0 && (N & (N - 1)) == 0, "kiln: multiple_of<N> needs N to be a positive power of two");
  std::vector<std::pair<std::string, ir::Attribute>> attributes = {{"value", std::int64_t{N}}};
  if (const std::int64_t group = detail::contiguous_group(x.value())) attributes.emplace_back("group", group);
  return plain_t<X>(detail::emit(ir::OpCode::multiple_of, {x.value()}, ir_type<X>(), std::move(attributes), loc));
}

/// `x`, with the promise that along its last dimension the elements come in
/// runs of N consecutive integers (x[j] == x[j - 1] + 1 unless j is a
/// multiple of N), as Triton's tl.max_contiguous. N is a power of two no
/// larger than the last dimension. Put it on gathered offsets that are known
/// to come in such runs (indices of blocks of N), and say where each run
/// starts with multiple_of around it:
/// `x + kl::multiple_of<4>(kl::max_contiguous<4>(offsets))` loads each run
/// of 4 floats with one vector instruction. A false promise is a fault on the
/// cpu and emu devices, naming the kernel, the line, the first element that
/// breaks its run and the one before it; a GPU does not check it.
template <std::int64_t N, Value X>
plain_t<X> max_contiguous(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(detail::integer_tile<X>(), "kiln: max_contiguous needs an integer tile");
  static_assert(N > 0 && (N & (N - 1)) == 0, "kiln: max_contiguous<N> needs N to be a positive power of two");
  static_assert(!detail::integer_tile<X>() || N <= detail::last_dimension<X>(),
                "kiln: max_contiguous<N> needs N no larger than the last dimension");
  return plain_t<X>(
      detail::emit(ir::OpCode::max_contiguous, {x.value()}, ir_type<X>(), {{"value", std::int64_t{N}}}, loc));
}

}  // namespace kiln
