// Prepares a kernel for the interpreter: assigns every value a frame slot
// (reusing memory of dead values), reads pointer provenance, and binds each
// op to its typed routine.
#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "fault.hpp"
#include "kiln/ir/op_schema.hpp"
#include "kiln/ir/parameter_label.hpp"
#include "kiln/ir/provenance.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

constexpr std::size_t kAlignment = 64;

std::size_t value_bytes(const ir::Type& t) {
  if (t.is_shared)
    return RingView::frame_bytes(t.shape[0], static_cast<std::size_t>(t.numel() / t.shape[0]) * t.element_bytes());
  return static_cast<std::size_t>(t.numel()) * t.element_bytes();
}

/// Ops that compute the same value in every program of a launch:
/// speculatable (pure and unable to fault), not the program's own position,
/// and reading only arguments, constants and other such values. They run once
/// per frame instead of once per program. A dot stays in the body: its
/// scratch is allocated at its place in the program.
std::unordered_set<const ir::Operation*> program_invariant_ops(const ir::Function& fn) {
  std::unordered_set<const ir::Value*> invariant(fn.body.arguments.begin(), fn.body.arguments.end());
  std::unordered_set<const ir::Operation*> ops;
  walk(fn.body, [&](ir::Operation& op) {
    if (!ir::is_speculatable(op) || op.code == ir::OpCode::program_id || op.code == ir::OpCode::dot) return;
    for (const ir::Value* v : op.operands)
      if (!invariant.count(v)) return;
    ops.insert(&op);
    invariant.insert(op.results.begin(), op.results.end());
  });
  return ops;
}

/// addptr(splat(p), offsets) reads p itself (see run_addptr_scalar_base):
/// the scalar, or null when the op is not such an addptr.
const ir::Value* splat_base(const ir::Operation& op) {
  if (op.code != ir::OpCode::addptr) return nullptr;
  const ir::Operation* def = op.operands[0]->def;
  return def && def->code == ir::OpCode::splat ? def->operands[0] : nullptr;
}

/// Splats read only through splat_base: they need not run at all.
std::unordered_set<const ir::Operation*> unneeded_splats(const ir::Function& fn) {
  std::unordered_map<const ir::Operation*, bool> only_bases;
  walk(fn.body, [&](ir::Operation& op) {
    if (op.code == ir::OpCode::splat) only_bases.emplace(&op, true);
  });
  walk(fn.body, [&](ir::Operation& op) {
    for (std::size_t i = 0; i < op.operands.size(); ++i) {
      const ir::Operation* def = op.operands[i]->def;
      if (def && def->code == ir::OpCode::splat && !(i == 0 && splat_base(op))) only_bases[def] = false;
    }
  });
  std::unordered_set<const ir::Operation*> out;
  for (auto [op, unneeded] : only_bases)
    if (unneeded) out.insert(op);
  return out;
}

/// Live ranges in a pre-order numbering of ops: a value lives from its
/// defining op to its last use, where a use inside a region that the value
/// is defined outside of counts as a use at the end of that region's op (it
/// is read again on every iteration).
class Liveness {
 public:
  Liveness(const ir::Function& fn, const std::unordered_set<const ir::Operation*>& once)
      : once_(once), def_(fn.value_count(), -1), end_(fn.value_count(), -1) {
    for (ir::Value* arg : fn.body.arguments) pin(arg);
    number(fn.body);
    std::vector<const ir::Operation*> enclosing;
    record_uses(fn.body, enclosing);
  }

  int def(const ir::Value* v) const { return def_[v->id]; }
  int end(const ir::Value* v) const { return end_[v->id]; }
  int position(const ir::Operation* op) const { return span_.at(op).first; }

 private:
  void pin(const ir::Value* v) {
    def_[v->id] = -1;
    end_[v->id] = INT_MAX;
  }

  void number(const ir::Block& block) {
    for (auto& op : block.ops) {
      const int start = clock_++;
      for (ir::Value* r : op->results) {
        def_[r->id] = start;
        end_[r->id] = start;
        if (once_.count(op.get())) pin(r);
      }
      for (auto& region : op->regions) {
        for (ir::Value* arg : region->arguments) def_[arg->id] = end_[arg->id] = start;
        number(*region);
      }
      span_[op.get()] = {start, op->regions.empty() ? start : clock_++};
    }
  }

  void record_uses(const ir::Block& block, std::vector<const ir::Operation*>& enclosing) {
    for (auto& op : block.ops) {
      std::vector<const ir::Value*> reads(op->operands.begin(), op->operands.end());
      if (const ir::Value* base = splat_base(*op)) reads.push_back(base);
      for (const ir::Value* v : reads) {
        int use = span_.at(op.get()).first;
        for (auto it = enclosing.rbegin(); it != enclosing.rend(); ++it) {
          auto [start, end] = span_.at(*it);
          if (def_[v->id] >= start && def_[v->id] <= end) break;
          use = end;
        }
        end_[v->id] = std::max(end_[v->id], use);
      }
      for (auto& region : op->regions) {
        // Block arguments are written at the op's start and read until its end.
        for (const ir::Value* arg : region->arguments) end_[arg->id] = span_.at(op.get()).second;
        enclosing.push_back(op.get());
        record_uses(*region, enclosing);
        enclosing.pop_back();
      }
      for (const ir::Value* r : op->results) end_[r->id] = std::max(end_[r->id], span_.at(op.get()).second);
    }
  }

  const std::unordered_set<const ir::Operation*>& once_;
  std::vector<int> def_, end_;
  std::unordered_map<const ir::Operation*, std::pair<int, int>> span_;
  int clock_ = 0;
};

/// Gives each live range a frame offset; ranges that do not overlap share
/// memory when their sizes match.
class SlotAllocator {
 public:
  int add(int def, int end, std::size_t bytes) {
    ranges_.push_back({def, end, (bytes + kAlignment - 1) / kAlignment * kAlignment});
    return static_cast<int>(ranges_.size()) - 1;
  }

  /// Returns the frame size; offsets are then available.
  std::size_t allocate() {
    std::vector<int> order(ranges_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ranges_[a].def < ranges_[b].def; });
    using Live = std::pair<int, int>;  // end, range index
    std::priority_queue<Live, std::vector<Live>, std::greater<>> live;
    std::map<std::size_t, std::vector<std::size_t>> free;
    offsets_.assign(ranges_.size(), 0);
    std::size_t top = 0;
    for (int i : order) {
      const Range& r = ranges_[i];
      while (!live.empty() && live.top().first < r.def) {
        const int done = live.top().second;
        live.pop();
        free[ranges_[done].bytes].push_back(offsets_[done]);
      }
      auto& pool = free[r.bytes];
      if (!pool.empty()) {
        offsets_[i] = pool.back();
        pool.pop_back();
      } else {
        offsets_[i] = top;
        top += r.bytes;
      }
      live.push({r.end, i});
    }
    return top;
  }

  std::size_t offset(int range) const { return offsets_[range]; }

 private:
  struct Range {
    int def, end;
    std::size_t bytes;
  };
  std::vector<Range> ranges_;
  std::vector<std::size_t> offsets_;
};

/// The pointer sources the kernel both loads and stores through: only
/// accesses to those need the hazard check. A mixed source may be any
/// buffer, so it meets every source of the other kind.
class SharedBuffers {
 public:
  SharedBuffers(const ir::Function& fn, const ir::Provenance& provenance) {
    walk(fn.body, [&](ir::Operation& op) {
      if (op.code == ir::OpCode::load || op.code == ir::OpCode::async_copy)
        loaded_.insert(provenance.source(ir::pointer_operand(op)));
      if (op.code == ir::OpCode::store) stored_.insert(provenance.source(op.operands[0]));
    });
  }

  /// Whether a `code` (load or store) through `source` may touch memory that
  /// the kernel accesses the other way too.
  bool may_meet(ir::OpCode code, int source) const {
    const std::unordered_set<int>& other = code == ir::OpCode::load ? stored_ : loaded_;
    if (other.empty()) return false;
    return source == kMixedSource || other.count(source) || other.count(kMixedSource);
  }

 private:
  std::unordered_set<int> loaded_, stored_;
};

class Compiler {
 public:
  explicit Compiler(const ir::Function& fn)
      : fn_(fn),
        once_(program_invariant_ops(fn)),
        unneeded_(unneeded_splats(fn)),
        liveness_(fn, once_),
        provenance_(fn),
        shared_buffers_(fn, provenance_) {
    slot_range_.assign(fn.value_count(), -1);
    assign(fn.body.arguments);
    walk(fn.body, [&](ir::Operation& op) {
      assign(op.results);
      for (auto& region : op.regions) assign(region->arguments);
      if (op.code == ir::OpCode::dot) {
        const int at = liveness_.position(&op);
        scratch_range_[&op] = allocator_.add(at, at, dot_scratch_bytes(op));
      }
    });
    frame_bytes_ = allocator_.allocate();
  }

  Program compile() {
    Program p;
    p.name = fn_.name;
    for (std::size_t i = 0; i < fn_.body.arguments.size(); ++i) {
      const ir::Value* arg = fn_.body.arguments[i];
      p.arg_types.push_back(arg->type);
      p.arg_names.push_back(ir::parameter_label(fn_, i));
      // A launch passes 64 bits per argument: a tile's slot could not be filled.
      if (arg->type.is_tile())
        throw std::invalid_argument("interpreter: kernel " + fn_.name + ": " + p.arg_names.back() +
                                    " is a tile; kernel parameters are scalars or pointers");
      p.arg_slots.push_back(slot(arg));
    }
    p.body = compile_block(fn_.body, p.init);
    p.frame_bytes = frame_bytes_;
    return p;
  }

 private:
  void assign(const std::vector<ir::Value*>& values) {
    for (const ir::Value* v : values)
      slot_range_[v->id] = allocator_.add(liveness_.def(v), liveness_.end(v), value_bytes(v->type));
  }

  SlotRef slot(const ir::Value* v) const {
    return {allocator_.offset(slot_range_[v->id]), value_bytes(v->type), v->type.element_bytes()};
  }

  std::vector<SlotRef> slots(const std::vector<ir::Value*>& values) const {
    std::vector<SlotRef> out;
    for (const ir::Value* v : values) out.push_back(slot(v));
    return out;
  }

  Body compile_block(const ir::Block& block, std::vector<Instr>& init) {
    Body body;
    body.args = slots(block.arguments);
    const ir::Operation* terminator = block.parent ? block.terminator() : nullptr;
    if (terminator) body.yields = slots(terminator->operands);
    for (auto& op : block.ops) {
      if (op.get() == terminator || unneeded_.count(op.get())) continue;
      Instr ins = compile_op(*op, init);
      (once_.count(op.get()) ? init : body.code).push_back(std::move(ins));
    }
    return body;
  }

  Instr compile_op(const ir::Operation& op, std::vector<Instr>& init) {
    Instr ins;
    ins.code = op.code;
    ins.loc = ir::to_string(op.loc);
    ins.in = slots(op.operands);
    ins.out = slots(op.results);
    ins.n = op.results.empty() ? 0 : op.results[0]->type.numel();
    if (const ir::Value* pointers = ir::pointer_operand(op)) {
      ins.source = provenance_.source(pointers);
      ins.dtype = pointers->type.dtype;
    }
    if (op.code == ir::OpCode::load || op.code == ir::OpCode::store || op.code == ir::OpCode::async_copy) {
      ins.check_hazards =
          shared_buffers_.may_meet(op.code == ir::OpCode::store ? op.code : ir::OpCode::load, ins.source);
      ins.access_shape = ir::pointer_operand(op)->type.shape;
    }
    if (const ir::Value* base = splat_base(op)) {
      ins.in[0] = slot(base);
      ins.scalar_base = true;
    }
    if (auto it = scratch_range_.find(&op); it != scratch_range_.end())
      ins.scratch = {allocator_.offset(it->second), dot_scratch_bytes(op), 1};
    for (auto& region : op.regions) ins.regions.push_back(compile_block(*region, init));
    switch (ir::family_of(op.code)) {
      case ir::OpFamily::creation:
      case ir::OpFamily::shape:
      case ir::OpFamily::rearrange: bind_shape(op, ins); break;
      case ir::OpFamily::elementwise: bind_elementwise(op, ins); break;
      case ir::OpFamily::cast: bind_cast(op, ins); break;
      case ir::OpFamily::memory: bind_memory(op, ins); break;
      case ir::OpFamily::atomic: bind_atomic(op, ins); break;
      case ir::OpFamily::dot: bind_dot(op, ins); break;
      case ir::OpFamily::reduce:
      case ir::OpFamily::scan: bind_reduce(op, ins); break;
      case ir::OpFamily::control: bind_control(op, ins); break;
      case ir::OpFamily::debug: bind_debug(op, ins); break;
      case ir::OpFamily::hint: bind_hint(op, ins); break;
      case ir::OpFamily::shared_buffer: bind_shared_buffer(op, ins); break;
      case ir::OpFamily::inline_asm: bind_inline_asm(op, ins); break;
      case ir::OpFamily::terminator: unsupported(op, "a yield must end a region");
    }
    return ins;
  }

  const ir::Function& fn_;
  std::unordered_set<const ir::Operation*> once_;      // run once per frame
  std::unordered_set<const ir::Operation*> unneeded_;  // never run
  Liveness liveness_;
  ir::Provenance provenance_;
  SharedBuffers shared_buffers_;
  SlotAllocator allocator_;
  std::vector<int> slot_range_;
  std::unordered_map<const ir::Operation*, int> scratch_range_;
  std::size_t frame_bytes_ = 0;
};

}  // namespace

Program build_program(const ir::Function& fn) { return Compiler(fn).compile(); }

}  // namespace kiln::runtime::interp
