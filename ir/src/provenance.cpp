// Pointer provenance as a forward data-flow over the kernel's values: an
// argument is its own source, shape ops, addptr and pointer casts keep their
// operand's, joins of two sources and everything else are mixed.
#include "kiln/ir/provenance.hpp"

#include "kiln/ir/op_schema.hpp"

namespace kiln::ir {

namespace {

constexpr int kUndefined = -2;

int join(int a, int b) {
  if (a == kUndefined) return b;
  if (b == kUndefined || a == b) return a;
  return Provenance::kMixed;
}

const std::vector<Value*>& yields(const Block& b) {
  static const std::vector<Value*> none;
  const Operation* t = b.terminator();
  return t ? t->operands : none;
}

}  // namespace

const Value* pointer_operand(const Operation& op) {
  const std::size_t index = op.code == OpCode::async_copy ? 2 : 0;
  const OpFamily family = family_of(op.code);
  if (family != OpFamily::memory && family != OpFamily::atomic && op.code != OpCode::async_copy) return nullptr;
  if (op.operands.size() <= index || !op.operands[index]->type.is_pointer) return nullptr;
  return op.operands[index];
}

Provenance::Provenance(const Function& fn) : sources_(fn.value_count(), kUndefined) {
  for (std::size_t i = 0; i < fn.body.arguments.size(); ++i)
    if (fn.body.arguments[i]->type.is_pointer) sources_[fn.body.arguments[i]->id] = static_cast<int>(i);
  do {
    changed_ = false;
    visit(fn.body);
  } while (changed_);
  walk(fn.body, [&](Operation& op) {
    const bool writes = op.code == OpCode::store || op.code == OpCode::atomic_rmw || op.code == OpCode::atomic_cas;
    if (writes) written_.insert(source(op.operands[0]));
  });
}

int Provenance::source(const Value* v) const {
  const int s = sources_[v->id];
  return s == kUndefined ? kMixed : s;
}

bool Provenance::may_be_written(int source) const {
  if (written_.empty()) return false;
  return source == kMixed || written_.count(source) || written_.count(kMixed);
}

void Provenance::flow(const Value* to, int from) {
  if (!to->type.is_pointer) return;
  const int joined = join(sources_[to->id], from);
  if (joined != sources_[to->id]) {
    sources_[to->id] = joined;
    changed_ = true;
  }
}

void Provenance::visit(const Block& block) {
  for (auto& op : block.ops) {
    for (auto& region : op->regions) visit(*region);
    const auto& in = op->operands;
    switch (op->code) {
      case OpCode::splat:
      case OpCode::broadcast:
      case OpCode::expand_dims:
      case OpCode::reshape:
      case OpCode::trans:
      case OpCode::addptr:
      case OpCode::split:
        for (Value* r : op->results) flow(r, of(in[0]));
        break;
      case OpCode::cast:
      case OpCode::bitcast: flow(op->result(), in[0]->type.is_pointer ? of(in[0]) : kMixed); break;
      case OpCode::join: flow(op->result(), join(of(in[0]), of(in[1]))); break;
      case OpCode::select: flow(op->result(), join(of(in[1]), of(in[2]))); break;
      case OpCode::for_: {
        const Block& body = *op->regions[0];
        for (std::size_t i = 0; i + 3 < in.size() && i + 1 < body.arguments.size(); ++i) {
          flow(body.arguments[i + 1], of(in[i + 3]));
          if (i < yields(body).size()) flow(body.arguments[i + 1], of(yields(body)[i]));
          if (i < op->results.size()) flow(op->results[i], of(body.arguments[i + 1]));
        }
        break;
      }
      case OpCode::if_:
        for (std::size_t i = 0; i < op->results.size(); ++i)
          for (auto& region : op->regions)
            if (i < yields(*region).size()) flow(op->results[i], of(yields(*region)[i]));
        break;
      case OpCode::while_: {
        const Block& before = *op->regions[0];
        const Block& after = *op->regions[1];
        for (std::size_t i = 0; i < in.size() && i < before.arguments.size(); ++i) {
          flow(before.arguments[i], of(in[i]));
          if (i < yields(after).size()) flow(before.arguments[i], of(yields(after)[i]));
          if (i < after.arguments.size()) flow(after.arguments[i], of(before.arguments[i]));
          if (i < op->results.size()) flow(op->results[i], of(before.arguments[i]));
        }
        break;
      }
      case OpCode::reduce:
      case OpCode::scan: {
        const Block& combine = *op->regions[0];
        const std::size_t n = in.size();
        for (std::size_t j = 0; j < n && n + j < combine.arguments.size(); ++j) {
          for (std::size_t side : {j, n + j}) {
            flow(combine.arguments[side], of(in[j]));
            if (j < yields(combine).size()) flow(combine.arguments[side], of(yields(combine)[j]));
          }
          if (j < op->results.size()) flow(op->results[j], of(combine.arguments[j]));
        }
        break;
      }
      default:
        for (Value* r : op->results) flow(r, kMixed);
    }
  }
}

}  // namespace kiln::ir
