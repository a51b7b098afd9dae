// Loop-invariant code motion: moves speculatable ops whose operands come from
// outside a `for` or `while` in front of the loop, inner loops first so that
// an invariant climbs out of a whole nest.
#include <algorithm>
#include <memory>

#include "kiln/ir/passes.hpp"
#include "op_traits.hpp"

namespace kiln::ir {

namespace {

bool is_loop(const Operation& op) { return op.code == OpCode::for_ || op.code == OpCode::while_; }

bool is_invariant(const Operation& op, const Operation& loop) {
  if (!is_speculatable(op)) return false;
  return std::none_of(op.operands.begin(), op.operands.end(),
                      [&](const Value* v) { return passes::is_defined_inside(*v, loop); });
}

/// Moves the invariant ops at the top level of `loop`'s regions in front of
/// it; returns how many were moved.
std::size_t hoist_from(Block& block, std::size_t loop_index) {
  Operation& loop = *block.ops[loop_index];
  std::size_t moved = 0;
  for (auto& region : loop.regions) {
    for (std::size_t i = 0; i < region->ops.size();) {
      if (!is_invariant(*region->ops[i], loop)) {
        ++i;
        continue;
      }
      std::unique_ptr<Operation> op = std::move(region->ops[i]);
      passes::erase_op(*region, i);
      op->parent = &block;
      block.ops.insert(block.ops.begin() + static_cast<long>(loop_index + moved), std::move(op));
      ++moved;
    }
  }
  return moved;
}

bool hoist_in(Block& block) {
  bool changed = false;
  for (std::size_t i = 0; i < block.ops.size(); ++i) {
    Operation& op = *block.ops[i];
    for (auto& region : op.regions) changed |= hoist_in(*region);
    if (!is_loop(op)) continue;
    const std::size_t moved = hoist_from(block, i);
    i += moved;  // the loop now sits after the hoisted ops
    changed |= moved > 0;
  }
  return changed;
}

}  // namespace

bool hoist_loop_invariants(Function& fn) { return hoist_in(fn.body); }

}  // namespace kiln::ir
