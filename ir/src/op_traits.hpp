// Op properties (side effects, purity) and the rewriting helpers the generic passes share.
#pragma once

#include <cstddef>
#include <unordered_map>

#include "kiln/ir/ir.hpp"

namespace kiln::ir::passes {

/// Writes memory or talks to the host: never removed, merged or moved.
inline bool writes_or_reports(OpCode code) {
  switch (code) {
    case OpCode::store:
    case OpCode::atomic_rmw:
    case OpCode::atomic_cas:
    case OpCode::print:
    case OpCode::assert:
      return true;
    default:
      return false;
  }
}

/// The op, or an op in one of its regions, writes memory or reports.
inline bool has_side_effects(const Operation& op) {
  if (writes_or_reports(op.code)) return true;
  for (auto& region : op.regions)
    for (auto& inner : region->ops)
      if (has_side_effects(*inner)) return true;
  return false;
}

/// May be deleted when its results are unused (loads included: an unused
/// load observes nothing). A yield is part of its region's structure.
inline bool is_removable_when_unused(const Operation& op) {
  return op.code != OpCode::yield && !has_side_effects(op);
}

/// Its results depend only on its operands and attributes: two such ops with
/// equal inputs are interchangeable. A load is not (memory may change between
/// two loads), nor is anything with a region.
inline bool is_pure(const Operation& op) {
  return op.regions.empty() && op.code != OpCode::load && op.code != OpCode::yield && !has_side_effects(op);
}

/// Pure and unable to fault, so it may run where the original program would
/// not have run it (in front of a loop that runs zero times). Integer
/// division by zero faults.
inline bool is_speculatable(const Operation& op) {
  if (!is_pure(op)) return false;
  const bool integer_division = op.code == OpCode::div || op.code == OpCode::rem;
  return !(integer_division && !is_float(op.results.at(0)->type.dtype));
}

/// The block defining `v`: the parent block of its op, or the block it is an argument of.
inline const Block* defining_block(const Value& v) { return v.def ? v.def->parent : v.owner; }

/// `v` is defined inside one of `op`'s regions (at any depth).
inline bool is_defined_inside(const Value& v, const Operation& op) {
  for (const Block* b = defining_block(v); b && b->parent; b = b->parent->parent)
    if (b->parent == &op) return true;
  return false;
}

/// How many operands refer to each value, over the whole kernel.
inline std::unordered_map<const Value*, int> count_uses(const Block& body) {
  std::unordered_map<const Value*, int> uses;
  walk(body, [&](Operation& op) {
    for (Value* v : op.operands) ++uses[v];
  });
  return uses;
}

/// Values to be replaced by others. Passes record a replacement when they
/// remove an op and remap operands as they go (SSA order: every use comes
/// after its definition in a walk); apply() rewrites any use left.
class ValueReplacements {
 public:
  void add(Value* from, Value* to) { map_[from] = to; }
  bool empty() const { return map_.empty(); }

  /// The value `v` stands for now, following chains of replacements.
  Value* resolve(Value* v) const {
    for (auto it = map_.find(v); it != map_.end(); it = map_.find(v)) v = it->second;
    return v;
  }

  void remap_operands(Operation& op) const {
    for (Value*& v : op.operands) v = resolve(v);
  }

  /// Replaces every use in `body` and its nested regions.
  void apply(Block& body) const {
    if (map_.empty()) return;
    walk(body, [&](Operation& op) { remap_operands(op); });
  }

 private:
  std::unordered_map<Value*, Value*> map_;
};

inline void erase_op(Block& block, std::size_t index) { block.ops.erase(block.ops.begin() + static_cast<long>(index)); }

}  // namespace kiln::ir::passes
