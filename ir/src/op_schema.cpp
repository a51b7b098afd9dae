// The effect queries of kiln/ir/op_schema.hpp.
#include "kiln/ir/op_schema.hpp"

#include "kiln/ir/inline_asm.hpp"

namespace kiln::ir {

namespace {

bool any_inside(const Operation& op, bool (*holds)(const Operation&)) {
  if (holds(op)) return true;
  for (auto& region : op.regions)
    for (auto& inner : region->ops)
      if (any_inside(*inner, holds)) return true;
  return false;
}

}  // namespace

OpEffect effect_of(const Operation& op) {
  if (op.code == OpCode::inline_asm && inline_asm_is_pure(op)) return OpEffect::none;
  return effect_of(op.code);
}

bool has_lasting_effect(const Operation& op) {
  const OpEffect effect = effect_of(op);
  return effect == OpEffect::writes || effect == OpEffect::reports || effect == OpEffect::orders;
}

bool has_side_effects(const Operation& op) { return any_inside(op, &has_lasting_effect); }

bool writes_memory(const Operation& op) {
  return any_inside(op, [](const Operation& inner) { return effect_of(inner) == OpEffect::writes; });
}

bool is_removable_when_unused(const Operation& op) {
  return family_of(op.code) != OpFamily::terminator && !has_side_effects(op);
}

bool is_pure(const Operation& op) {
  return op.regions.empty() && effect_of(op) == OpEffect::none && family_of(op.code) != OpFamily::terminator;
}

bool is_speculatable(const Operation& op) {
  if (!is_pure(op)) return false;
  if (family_of(op.code) == OpFamily::hint) return false;
  const bool integer_division = op.code == OpCode::div || op.code == OpCode::rem;
  return !(integer_division && !is_float(op.results.at(0)->type.dtype));
}

}  // namespace kiln::ir
