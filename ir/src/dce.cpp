// Dead code elimination: removes ops without side effects whose results are
// unused, innermost regions and last uses first, to a fixed point.
#include <unordered_map>

#include "kiln/ir/passes.hpp"
#include "op_traits.hpp"

namespace kiln::ir {

namespace {

class DeadCode {
 public:
  explicit DeadCode(Function& fn) : uses_(passes::count_uses(fn.body)) {}

  /// One backward sweep; a removed op releases its operands, so chains die together.
  bool sweep(Block& block) {
    bool changed = false;
    for (std::size_t i = block.ops.size(); i-- > 0;) {
      Operation& op = *block.ops[i];
      for (auto& region : op.regions) changed |= sweep(*region);
      if (!is_dead(op)) continue;
      release(op);
      passes::erase_op(block, i);
      changed = true;
    }
    return changed;
  }

 private:
  bool is_dead(const Operation& op) {
    if (!is_removable_when_unused(op)) return false;
    for (const Value* r : op.results)
      if (uses_[r] != 0) return false;
    return true;
  }

  void release(Operation& op) {
    walk_operands(op, [&](const Value* v) { --uses_[v]; });
  }

  template <class Fn>
  static void walk_operands(Operation& op, Fn&& fn) {
    for (const Value* v : op.operands) fn(v);
    for (auto& region : op.regions)
      for (auto& inner : region->ops) walk_operands(*inner, fn);
  }

  std::unordered_map<const Value*, int> uses_;
};

}  // namespace

bool eliminate_dead_code(Function& fn) {
  bool changed = false;
  while (DeadCode(fn).sweep(fn.body)) changed = true;
  return changed;
}

}  // namespace kiln::ir
