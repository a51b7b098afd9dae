// Debugging inside kernels: device_print and device_assert.
#pragma once

#include <source_location>
#include <string>

#include "kiln/dsl/value.hpp"

namespace kiln {

/// Prints `prefix` and the values, once per program, with the program id.
template <Value... Xs>
void device_print(const std::string& prefix, const Xs&... values) {
  detail::emit_op(ir::OpCode::print, {values.value()...}, {}, {{"prefix", prefix}}, 0, std::source_location::current());
}

/// A fault naming `message`, the kernel and this line if any element of
/// `cond` (an i1 scalar or tile) is false.
template <Numeric C>
void device_assert(const C& cond, const std::string& message, std::source_location loc = std::source_location::current()) {
  static_assert(dtype_of<C> == ir::DType::i1, "kiln: device_assert needs an i1 condition");
  detail::emit_op(ir::OpCode::assert, {cond.value()}, {}, {{"message", message}}, 0, loc);
}

}  // namespace kiln
