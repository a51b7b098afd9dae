// Dead code elimination: removes ops without side effects whose results are
// unused, innermost regions and last uses first, to a fixed point; and a
// `for` loop's carried values that nothing reads but their own update (the
// pipeliner leaves them behind: software_pipeline.cpp).
#include <unordered_map>
#include <unordered_set>

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

/// Whether carried value `i` of `loop` only feeds itself: the loop's result
/// is unused and everything computed from its block argument in the body is
/// removable and reaches the yield only as carried value `i`.
bool only_updates_itself(const Operation& loop, std::size_t i, const std::unordered_map<const Value*, int>& uses) {
  if (auto it = uses.find(loop.results[i]); it != uses.end() && it->second != 0) return false;
  const Block& body = *loop.regions[0];
  std::unordered_set<const Value*> reached{body.arguments[1 + i]};
  // SSA order: every value is reached before the top-level ops reading it.
  for (const auto& op : body.ops) {
    bool reads = false;
    auto visit = [&](const Operation& o) {
      for (std::size_t k = 0; k < o.operands.size(); ++k) {
        if (!reached.count(o.operands[k])) continue;
        if (&o == op.get() && o.code == OpCode::yield && k != i) return false;
        reads = true;
      }
      return true;
    };
    if (!visit(*op)) return false;
    bool nested_ok = true;
    for (const auto& region : op->regions) walk(*region, [&](Operation& inner) { nested_ok &= visit(inner); });
    if (!nested_ok) return false;
    if (!reads || op->code == OpCode::yield) continue;
    if (!is_removable_when_unused(*op)) return false;
    reached.insert(op->results.begin(), op->results.end());
  }
  return true;
}

void renumber(std::vector<Value*>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) values[i]->index = static_cast<int>(i);
}

/// Removes the carried values of `for` loops that only update themselves;
/// the ops computing their updates are left unused, for the sweep.
bool drop_self_updated_carried(Function& fn) {
  const std::unordered_map<const Value*, int> uses = passes::count_uses(fn.body);
  bool changed = false;
  walk(fn.body, [&](Operation& loop) {
    if (loop.code != OpCode::for_) return;
    Block& body = *loop.regions[0];
    Operation* yield = body.terminator();
    for (std::size_t i = loop.results.size(); i-- > 0;) {
      if (!only_updates_itself(loop, i, uses)) continue;
      yield->operands.erase(yield->operands.begin() + static_cast<long>(i));
      body.arguments.erase(body.arguments.begin() + static_cast<long>(1 + i));
      loop.operands.erase(loop.operands.begin() + static_cast<long>(3 + i));
      loop.results.erase(loop.results.begin() + static_cast<long>(i));
      changed = true;
    }
    renumber(body.arguments);
    renumber(loop.results);
  });
  return changed;
}

}  // namespace

bool eliminate_dead_code(Function& fn) {
  bool changed = false;
  for (;;) {
    const bool dropped = drop_self_updated_carried(fn);
    if (!DeadCode(fn).sweep(fn.body) && !dropped) break;
    changed = true;
  }
  return changed;
}

}  // namespace kiln::ir
