// The rewriting helpers the generic passes share; what an op may do comes
// from the schema (kiln/ir/op_schema.hpp).
#pragma once

#include <cstddef>
#include <unordered_map>

#include "kiln/ir/ir.hpp"
#include "kiln/ir/op_schema.hpp"

namespace kiln::ir::passes {

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
