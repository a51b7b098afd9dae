// Debugging inside kernels: device_print, device_assert, debug_barrier and
// static_print.
#pragma once

#include <source_location>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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

/// Prints `prefix` and the values, once per program, with the program id;
/// the tiles among the values share one shape (the verifier checks).
template <Value... Xs>
void device_print(const PrintPrefix& prefix, const Xs&... values) {
  detail::emit_op(ir::OpCode::print, {values.value()...}, {}, {{"prefix", prefix.text}}, 0, prefix.loc);
}

namespace detail {
/// The type of traced value `v`, as the IR prints it ("tile<8x64xf32>").
std::string traced_type(const ir::Value* v);
/// Prints "kernel K: static_print at FILE:LINE: PREFIX PARTS..." to stdout.
void static_print(const std::string& prefix, const std::vector<std::string>& parts, const std::source_location& loc);

template <class X>
std::string static_text(const X& x) {
  static_assert(Value<X> || std::is_arithmetic_v<X>, "kiln: static_print takes DSL values and C++ numbers");
  if constexpr (Value<X>) return traced_type(x.value());
  else if constexpr (std::is_same_v<X, bool>) return x ? "true" : "false";
  else return std::to_string(x);
}
}  // namespace detail

/// Prints `prefix` and, for each argument, its type (a DSL value) or its
/// value (a C++ number, such as a template argument) once, while the kernel
/// is traced: Triton's static_print. Nothing runs on the device.
template <class... Xs>
void static_print(const PrintPrefix& prefix, const Xs&... values) {
  detail::static_print(prefix.text, {detail::static_text(values)...}, prefix.loc);
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
