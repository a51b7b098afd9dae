// Inline assembly applied elementwise (Triton's tl.inline_asm_elementwise):
// PTX text run once per element of the arguments' broadcast shape on the
// cuda device, and a plain C++ host reference run in its place on the cpu and
// emu devices.
#pragma once

#include <optional>
#include <source_location>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kiln/dsl/value.hpp"
#include "kiln/runtime/host_reference.hpp"

namespace kiln {

/// The arguments of inline_asm_elementwise, in the order of the asm's $1,
/// $2, … placeholders ($0 is the result). Make it with kl::asm_args.
template <class... A>
struct AsmArgs {
  std::tuple<A...> values;
};

/// The arguments of inline_asm_elementwise: tiles and scalars (numbers, not
/// pointers), broadcast together as an arithmetic op's operands are.
template <Numeric... A>
AsmArgs<plain_t<A>...> asm_args(const A&... args) {
  return {std::tuple<plain_t<A>...>(plain_t<A>(args)...)};
}

/// In place of a host reference: the asm has none, so a kernel using it runs
/// on the cuda device only; the cpu and emu devices refuse to launch it with
/// one line naming the kernel, the op and its source line.
struct NoHostReference {};
inline constexpr NoHostReference no_host_reference{};

struct InlineAsmOptions {
  /// The asm computes its result from its arguments alone: an unused result
  /// may be removed, two equal calls merged and a call moved out of a loop.
  /// false: it has effects beyond its result (it is never removed, merged
  /// or moved).
  bool pure = true;
};

namespace detail {

template <class... S>
struct broadcast_all;
template <class S>
struct broadcast_all<S> {
  using type = S;
};
template <class S, class T, class... Rest>
struct broadcast_all<S, T, Rest...> {
  static_assert(broadcast_check<S, T>::value);
  using type = typename broadcast_all<broadcast_shape_t<S, T>, Rest...>::type;
};

/// Emits inline_asm of `operands` (of one shape) with a `result` type,
/// registering `reference` under the op's key; a TraceError names the kernel,
/// the line and what is wrong with the constraints or the reference.
ir::Value* emit_inline_asm(std::string_view asm_text, std::string_view constraints,
                           const std::vector<ir::Value*>& operands, const ir::Type& result,
                           const std::optional<runtime::HostReference>& reference, bool pure,
                           const std::source_location& loc);

}  // namespace detail

/// `asm_text` run once per element of the arguments' broadcast shape, giving
/// a value of element type R (kl::f32, kl::i32…) and that shape: $0 is the
/// element's result, $1… its arguments, in `args`' order. `constraints` are
/// LLVM's, one output then one input per argument: `=r,r,r` (register
/// classes h: 16-bit, r: 32-bit, l: 64-bit, f: f32, d: f64, matching each
/// dtype's width; i1 and 8-bit dtypes do not compile, as they would need
/// packing). A constraint string that does not fit is a TraceError.
///
/// `host_reference` gives one element's result on the cpu and emu devices: a
/// plain function (or captureless lambda) `R(A...)` of the element storage
/// types (`float(float)` for an f32 result of one f32 argument), checked at
/// compile time; or kl::no_host_reference, for a kernel that runs on the
/// cuda device only.
///
///   auto y = kl::inline_asm_elementwise<kl::f32>("tanh.approx.f32 $0, $1;", "=f,f", kl::asm_args(x),
///                                                [](float v) { return std::tanh(v); });
template <class R, class... A, class Reference>
auto inline_asm_elementwise(std::string_view asm_text, std::string_view constraints, const AsmArgs<A...>& args,
                            Reference host_reference, InlineAsmOptions options = {},
                            std::source_location loc = std::source_location::current()) {
  static_assert(detail::is_scalar_element<R>::value,
                "kiln: inline_asm_elementwise<R>: R is the result's element type, such as kl::f32 or kl::i32");
  static_assert(sizeof...(A) > 0, "kiln: inline_asm_elementwise needs at least one argument (kl::asm_args(x, …))");
  using Result = typename detail::is_scalar_element<R>::storage;
  static_assert(ir::dtype_bits(dtype_v<Result>) > 8 && (... && (ir::dtype_bits(dtype_of<A>) > 8)),
                "kiln: inline_asm_elementwise: i1 and 8-bit dtypes are not supported yet (they would need several "
                "values packed into one register)");
  using Function = Result (*)(storage_of<A>...);
  constexpr bool no_reference = std::is_same_v<Reference, NoHostReference>;
  constexpr bool reference_fits = std::is_convertible_v<Reference, Function>;
  static_assert(no_reference || reference_fits,
                "kiln: inline_asm_elementwise: the host reference must be a function R(A...) of the result's and the "
                "arguments' element types (float(float) for an f32 result of one f32 argument), or "
                "kl::no_host_reference");
  using S = typename detail::broadcast_all<shape_t<A>...>::type;
  using Out = value_t<R, S>;
  std::vector<ir::Value*> operands;
  std::apply([&](const auto&... a) { (operands.push_back(detail::emit_broadcast(a.value(), S::vector(), loc)), ...); },
             args.values);
  std::optional<runtime::HostReference> reference;
  if constexpr (reference_fits) reference = runtime::HostReference::of(static_cast<Function>(host_reference));
  return Out(detail::emit_inline_asm(asm_text, constraints, operands, ir_type<Out>(), reference, options.pure, loc));
}

}  // namespace kiln
