// The inline_asm op's constraint rules, host reference key and purity
// (kiln/ir/inline_asm.hpp).
#include "kiln/ir/inline_asm.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>

namespace kiln::ir {

namespace {

std::vector<std::string_view> split_constraints(std::string_view constraints) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = constraints.find(',', start);
    out.push_back(constraints.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

/// What register class `letter` holds, or empty when `dtype` fits it.
std::string class_mismatch(char letter, DType dtype) {
  switch (letter) {
    case 'h': return dtype_bits(dtype) == 16 ? "" : "'h' holds 16-bit values";
    case 'r': return dtype_bits(dtype) == 32 ? "" : "'r' holds 32-bit values";
    case 'l': return dtype_bits(dtype) == 64 ? "" : "'l' holds 64-bit values";
    case 'f': return dtype == DType::f32 ? "" : "'f' holds f32";
    case 'd': return dtype == DType::f64 ? "" : "'d' holds f64";
    default: return "'" + std::string(1, letter) + "' is not a register class (h, r, l, f or d)";
  }
}

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

/// Why a `$` placeholder of `asm_text` names no operand of an asm with
/// `count` operands (the result and the inputs); empty when none does.
std::string placeholder_error(std::string_view asm_text, std::size_t count) {
  for (std::size_t i = 0; i < asm_text.size(); ++i) {
    if (asm_text[i] != '$') continue;
    if (i + 1 < asm_text.size() && asm_text[i + 1] == '$') {
      ++i;
      continue;
    }
    std::size_t digits = i + 1;
    if (digits < asm_text.size() && asm_text[digits] == '{') ++digits;
    std::size_t end = digits;
    while (end < asm_text.size() && std::isdigit(static_cast<unsigned char>(asm_text[end]))) ++end;
    if (end == digits || end - digits > 4)
      return "the asm text has a '$' at offset " + std::to_string(i) + " that is not $N, ${N} or $$";
    const std::size_t index = std::stoul(std::string(asm_text.substr(digits, end - digits)));
    if (index >= count)
      return "the asm text's $" + std::to_string(index) + " names no operand (the result is $0, the inputs $1 to $" +
             std::to_string(count - 1) + ")";
    i = end - 1;
  }
  return "";
}

}  // namespace

std::string inline_asm_error(std::string_view asm_text, std::string_view constraints, DType result,
                             std::span<const DType> operands) {
  if (asm_text.empty()) return "the asm text is empty";
  const auto needs_packing = [](DType dtype) { return dtype_bits(dtype) <= 8; };
  const std::string packing = ", which would need several values packed into one register (not supported yet)";
  if (needs_packing(result)) return "the result is " + std::string(dtype_name(result)) + packing;
  for (std::size_t i = 0; i < operands.size(); ++i)
    if (needs_packing(operands[i]))
      return "operand " + std::to_string(i) + " is " + std::string(dtype_name(operands[i])) + packing;

  const std::vector<std::string_view> parts = split_constraints(constraints);
  if (parts[0].empty() || parts[0][0] != '=')
    return "constraints " + quoted(constraints) + " do not start with the result's output constraint ('=r')";
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (!parts[i].empty() && parts[i][0] == '=')
      return "constraints " + quoted(constraints) + " name a second output ('" + std::string(parts[i]) +
             "'); inline_asm has one result";
  if (parts.size() - 1 != operands.size())
    return "constraints " + quoted(constraints) + " name " + std::to_string(parts.size() - 1) + " input" +
           (parts.size() == 2 ? "" : "s") + " for " + std::to_string(operands.size()) + " operand" +
           (operands.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string_view letter = i == 0 ? parts[0].substr(1) : parts[i];
    const std::string role = i == 0 ? "the result" : "operand " + std::to_string(i - 1);
    const DType dtype = i == 0 ? result : operands[i - 1];
    if (letter.size() != 1)
      return "constraint '" + std::string(parts[i]) + "' of " + role +
             " is not one register class (h, r, l, f or d; tied and memory operands are not supported)";
    const std::string mismatch = class_mismatch(letter[0], dtype);
    if (!mismatch.empty())
      return "constraint '" + std::string(parts[i]) + "' does not fit " + role + " (" + std::string(dtype_name(dtype)) +
             "): " + mismatch;
  }
  return placeholder_error(asm_text, parts.size());
}

std::vector<char> inline_asm_register_classes(std::string_view constraints) {
  std::vector<char> out;
  for (std::string_view part : split_constraints(constraints)) out.push_back(part.back());
  return out;
}

std::string inline_asm_key(std::string_view asm_text, std::string_view constraints, DType result,
                           std::span<const DType> operands) {
  std::uint64_t h = 1469598103934665603ull;
  const auto add = [&](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  add(asm_text);
  add(std::string_view("\0", 1));
  add(constraints);
  add(std::string_view("\0", 1));
  add(dtype_name(result));
  for (DType operand : operands) {
    add(",");
    add(dtype_name(operand));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return "asm-" + std::string(hex);
}

bool inline_asm_is_pure(const Operation& op) {
  const auto* symbol = std::get_if<Symbol>(op.find_attribute("pure"));
  return symbol && symbol->name == "true";
}

}  // namespace kiln::ir
