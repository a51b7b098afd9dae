// Debugging inside kernels: device_print, device_assert and debug_barrier.
#pragma once

#include <source_location>
#include <string>
#include <utility>

#include "kiln/dsl/value.hpp"

namespace kiln {

/// The text device_print prints first, carrying the line of the call (a
/// default argument cannot follow the values).
struct PrintPrefix {
  std::string text;
  std::source_location loc;
  PrintPrefix(const char* t, std::source_location l = std::source_location::current()) : text(t), loc(l) {}
  PrintPrefix(std::string t, std::source_location l = std::source_location::current()) : text(std::move(t)), loc(l) {}
};

/// Prints `prefix` and the values, once per program, with the program id.
template <Value... Xs>
void device_print(const PrintPrefix& prefix, const Xs&... values) {
  detail::emit_op(ir::OpCode::print, {values.value()...}, {}, {{"prefix", prefix.text}}, 0, prefix.loc);
}

/// A fault naming `message`, the kernel and this line if any element of
/// `cond` (an i1 scalar or tile) is false.
template <Numeric C>
void device_assert(const C& cond, const std::string& message,
                   std::source_location loc = std::source_location::current()) {
  static_assert(dtype_of<C> == ir::DType::i1, "kiln: device_assert needs an i1 condition");
  detail::emit_op(ir::OpCode::assert, {cond.value()}, {}, {{"message", message}}, 0, loc);
}

/// Orders the program's memory accesses: every load and store before it is
/// done, and seen by all of the program's elements, before any after it (a
/// CTA barrier on the GPU). Needed between a load and a store of one buffer
/// when an element writes what another element read, as in a tile reversed
/// in place; the cpu device reports the access pairs that lack it.
inline void debug_barrier(std::source_location loc = std::source_location::current()) {
  detail::emit_op(ir::OpCode::barrier, {}, {}, {}, 0, loc);
}

}  // namespace kiln
