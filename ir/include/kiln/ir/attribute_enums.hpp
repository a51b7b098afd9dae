// The IR's enumerated attributes, each declared once: its C++ enum, its key,
// the symbol of each value in the text form (OPS.md), and the value an op
// without the attribute has. The DSL's options, the verifier, the
// interpreter and the code generator all use these, so that a new value is
// added in one place and every `switch` on it that forgets it is a warning.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

/// cmp's `pred`.
enum class Predicate { eq, ne, lt, le, gt, ge };
/// A load's or store's `cache` hint (PTX's .ca .cg .cs .cv).
enum class Cache { none, ca, cg, cs, cv };
/// A load's or store's `evict` priority hint.
enum class Evict { none, first, last };
/// An atomic's memory `order`.
enum class MemoryOrder { relaxed, acquire, release, acq_rel };
/// The set of threads an atomic is atomic with respect to (`scope`).
enum class Scope { cta, gpu, sys };
/// atomic_rmw's `kind`.
enum class AtomicKind { add, max, min, bit_and, bit_or, bit_xor, xchg };
/// dot's `precision`: how f32 inputs are multiplied: exactly (ieee), rounded
/// to tf32 first (tf32, as tensor cores do), or with the three-pass tf32
/// split (tf32x3).
enum class Precision { ieee, tf32, tf32x3 };

/// Per enum: the attribute's key, its values' symbols in enumerator order,
/// and the value when an op has no such attribute (none: it is required).
template <class E>
struct AttributeEnum;

template <>
struct AttributeEnum<Predicate> {
  static constexpr std::string_view key = "pred";
  static constexpr std::array<std::string_view, 6> symbols = {"eq", "ne", "lt", "le", "gt", "ge"};
  static constexpr std::optional<Predicate> absent = std::nullopt;
};
template <>
struct AttributeEnum<Cache> {
  static constexpr std::string_view key = "cache";
  static constexpr std::array<std::string_view, 5> symbols = {"none", "ca", "cg", "cs", "cv"};
  static constexpr std::optional<Cache> absent = Cache::none;
};
template <>
struct AttributeEnum<Evict> {
  static constexpr std::string_view key = "evict";
  static constexpr std::array<std::string_view, 3> symbols = {"none", "first", "last"};
  static constexpr std::optional<Evict> absent = Evict::none;
};
template <>
struct AttributeEnum<MemoryOrder> {
  static constexpr std::string_view key = "order";
  static constexpr std::array<std::string_view, 4> symbols = {"relaxed", "acquire", "release", "acq_rel"};
  static constexpr std::optional<MemoryOrder> absent = MemoryOrder::acq_rel;
};
template <>
struct AttributeEnum<Scope> {
  static constexpr std::string_view key = "scope";
  static constexpr std::array<std::string_view, 3> symbols = {"cta", "gpu", "sys"};
  static constexpr std::optional<Scope> absent = Scope::gpu;
};
template <>
struct AttributeEnum<AtomicKind> {
  static constexpr std::string_view key = "kind";
  static constexpr std::array<std::string_view, 7> symbols = {"add", "max", "min", "and", "or", "xor", "xchg"};
  static constexpr std::optional<AtomicKind> absent = std::nullopt;
};
template <>
struct AttributeEnum<Precision> {
  static constexpr std::string_view key = "precision";
  static constexpr std::array<std::string_view, 3> symbols = {"ieee", "tf32", "tf32x3"};
  static constexpr std::optional<Precision> absent = Precision::ieee;
};

/// The text-form symbol of `value`.
template <class E>
constexpr std::string_view symbol_of(E value) {
  return AttributeEnum<E>::symbols[static_cast<std::size_t>(value)];
}

/// `value` as an attribute value: the symbol the printer writes bare.
template <class E>
Symbol symbol_attribute(E value) {
  return Symbol{std::string(symbol_of(value))};
}

/// The value whose symbol is `symbol`; nullopt when none is.
template <class E>
constexpr std::optional<E> parse_symbol(std::string_view symbol) {
  for (std::size_t i = 0; i < AttributeEnum<E>::symbols.size(); ++i)
    if (AttributeEnum<E>::symbols[i] == symbol) return static_cast<E>(i);
  return std::nullopt;
}

/// `op`'s attribute of enum E: its value, the absent value when `op` has
/// none, nullopt when it is missing but required or not one of E's symbols
/// (the verifier rejects both).
template <class E>
std::optional<E> attribute_enum(const Operation& op) {
  const Attribute* attribute = op.find_attribute(AttributeEnum<E>::key);
  if (!attribute) return AttributeEnum<E>::absent;
  const auto* symbol = std::get_if<Symbol>(attribute);
  return symbol ? parse_symbol<E>(symbol->name) : std::nullopt;
}

}  // namespace kiln::ir
