// Host references of inline assembly: for each inline_asm key (kiln/ir/
// inline_asm.hpp), the plain C++ function that gives one element's result on
// the devices that cannot run the asm (cpu, emu). The DSL registers a
// reference while it traces the kernel; the interpreter and the emu's hook
// look it up by key and call it once per element, on storage bits.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "kiln/ir/ir.hpp"

namespace kiln::runtime {

/// A type-erased host reference `R f(A...)` over element storage bits: each
/// argument's bits zero-extended to 64 bits in, the result's bits (likewise)
/// out.
class HostReference {
 public:
  using Erased = void (*)();
  using Thunk = std::uint64_t (*)(Erased function, const std::uint64_t* arguments);

  HostReference(Thunk thunk, Erased function) : thunk_(thunk), function_(function) {}

  /// `function` type-erased; R and A... are element storage types (float,
  /// std::int32_t, kiln::half…).
  template <class R, class... A>
  static HostReference of(R (*function)(A...)) {
    return HostReference(&call<R, A...>, reinterpret_cast<Erased>(function));
  }

  /// The result's bits for the arguments' bits (one per parameter).
  std::uint64_t operator()(const std::uint64_t* arguments) const { return thunk_(function_, arguments); }
  /// The function it calls: two references are the same when these are.
  Erased function() const { return function_; }

 private:
  template <class C>
  using Bits = std::conditional_t<sizeof(C) == 2, std::uint16_t,
                                  std::conditional_t<sizeof(C) == 4, std::uint32_t, std::uint64_t>>;

  template <class C>
  static C from_bits(std::uint64_t bits) {
    return std::bit_cast<C>(static_cast<Bits<C>>(bits));
  }
  template <class C>
  static std::uint64_t to_bits(C value) {
    return std::bit_cast<Bits<C>>(value);
  }

  template <class R, class... A, std::size_t... I>
  static std::uint64_t apply(R (*function)(A...), const std::uint64_t* arguments, std::index_sequence<I...>) {
    return to_bits<R>(function(from_bits<A>(arguments[I])...));
  }
  template <class R, class... A>
  static std::uint64_t call(Erased function, const std::uint64_t* arguments) {
    return apply(reinterpret_cast<R (*)(A...)>(function), arguments, std::index_sequence_for<A...>{});
  }

  Thunk thunk_;
  Erased function_;
};

/// Registers `reference` for inline_asm `key`; registering the same function
/// again changes nothing. False, registering nothing, when another function
/// has the key.
bool register_host_reference(const std::string& key, const HostReference& reference);

/// The reference registered for `key`, if any.
std::optional<HostReference> find_host_reference(std::string_view key);

/// "kernel K: inline_asm at FILE:LINE has no host reference
/// (kl::no_host_reference), so it runs on the cuda device only, not on
/// DEVICE" for the first inline_asm of `fn` whose key has no reference; empty
/// when each has one. The cpu and emu devices refuse such a kernel with it.
std::string missing_host_reference(const ir::Function& fn, std::string_view device);

}  // namespace kiln::runtime
