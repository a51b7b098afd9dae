// Software pipelining of the loads that feed a `dot` in a `for` loop (OPS.md,
// "Shared buffers"), as Triton's pipeliner does for its matmul loops: each
// such load becomes an async_copy issued num_stages - 1 iterations ahead into
// a ring of num_stages shared slots (the loop's own `num_stages` attribute,
// else the kernel's), and a local_load of the slot its own iteration's copy
// landed in. With S stages and the loop `for iv = lo; iv < hi;
// iv += step`:
//
//   before the loop   ring = local_alloc
//                     for s in 0 … S-2: copy iteration lo + s*step into slot s,
//                       masked off where that iteration does not run; commit
//   each iteration    (carries the slot r it reads; it writes slot r - 1 mod S,
//                     the one the previous iteration read)
//                     async_wait {pending = S-2}; barrier
//                     x = local_load ring, r          (in place of the load)
//                     … the body, reading x …
//                     copy iteration iv + (S-1)*step into slot r - 1; commit
//   after the loop    async_wait {pending = 0}; barrier
//
// The barrier after the loop keeps the rings' memory from being written
// again (by the next run of a loop nested in another, whose local_alloc is
// the same shared memory on a GPU) while a thread still reads its last slot.
//
// The copies are issued at the end of the body rather than before it, so
// that their address arithmetic is not live across the body's dots: with
// them at the top, the library's attention at head_dim 64 spilled 16 bytes
// on sm_90a, against 8 at the end.
//
// The one barrier per iteration both makes the landed copies visible to the
// whole program and keeps the copy into slot r - 1 from overwriting it while
// another thread still reads it from the previous iteration.
//
// A load qualifies when it has no `other` or an `other` of +0 (a
// masked-off element of a copy is +0), every use of its result is operand a
// or b of a `dot` whose inputs are narrower than 4 bytes or rounded to tf32
// (the dots tensor cores run on a GPU; an f32 dot on the FMA units does a
// thousand FMAs per thread per 64 x 64 x 32 step, enough to hide its loads,
// and the rings' addressing would cost it registers: the library's f32
// matmul without alignment facts then spills on sm_90a), and its pointers and
// mask depend, inside the body, only on the induction variable and on
// carried values through speculatable ops (they are recomputed for later
// iterations, and for some that never run). A carried value it reads must be
// *advanceable*: what the body yields for it is computed by speculatable ops
// from the induction variable, loop invariants and advanceable carried
// values, like the pointers Triton's tutorial matmul advances by
// `BLOCK_K * stride` each iteration. Such values are carried S - 1
// iterations ahead as well, as Triton's pipeliner does: the prologue steps
// them through S - 1 updates, the loop carries the advanced copy beside the
// current one and updates it from the advanced induction variable, and the
// copies read the advanced copy. The current one, once its loads are gone,
// is read by nothing but its own update, and DCE drops it.
//
// A loop qualifies when nothing in it writes memory: the copies read ahead
// of the iteration that used to read.
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "kiln/ir/attribute_enums.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/passes.hpp"
#include "op_traits.hpp"

namespace kiln::ir {

namespace {

/// Shared bytes the rings of one loop may take together: the stages are cut
/// until they fit, so that pipelining never makes a kernel need more shared
/// memory than every supported GPU gives a program (99 KiB on sm_86/sm_89),
/// leaving 3 KiB for the ops' own scratch (1 KiB for the epilogue of a
/// 128 x 128 matmul tile). Three stages of a 128 x 128 x 64 matmul's 16-bit
/// tiles, 32 KiB each, fit.
constexpr std::int64_t kRingBudgetBytes = 96 * 1024;

/// The loads of one loop to pipeline, the body ops each one's pointers and
/// mask are computed by (in body order), all the body ops the copies need
/// (those, and the advanceable carried values' updates; in body order), and
/// those carried values (their indices among the loop's carried values,
/// ascending).
struct PipelinePlan {
  std::vector<Operation*> loads;
  std::vector<std::vector<Operation*>> addresses;
  std::vector<Operation*> slice;
  std::vector<std::size_t> carried;
};

/// The body ops (top level of the loop's body) the loads' pointers and masks
/// are computed by, collected load by load: a load's ops join only when all
/// of them are speculatable and every carried value they read is advanceable.
class AddressSlice {
 public:
  explicit AddressSlice(const Operation& loop) : loop_(loop), body_(*loop.regions[0]) {}

  /// The ops computing `roots` (in body order), added to the slice with the
  /// updates of the carried values they read; none (and nothing added) when
  /// one of them is not speculatable.
  std::optional<std::vector<Operation*>> add(const std::vector<Value*>& roots) {
    std::unordered_set<std::size_t> carried = carried_;
    std::vector<const Value*> updates;
    std::unordered_set<const Operation*> own;
    if (!reach({roots.begin(), roots.end()}, own, carried, updates)) return std::nullopt;
    std::unordered_set<const Operation*> advanced;
    while (!updates.empty()) {
      std::vector<const Value*> work = std::move(updates);
      updates.clear();
      if (!reach(std::move(work), advanced, carried, updates)) return std::nullopt;
    }
    ops_.insert(own.begin(), own.end());
    ops_.insert(advanced.begin(), advanced.end());
    carried_ = std::move(carried);
    return in_body_order(own);
  }

  std::vector<Operation*> ops() const { return in_body_order(ops_); }

  std::vector<std::size_t> carried() const {
    std::vector<std::size_t> sorted(carried_.begin(), carried_.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  }

 private:
  /// Adds the body ops `work` depends on to `ops`, stopping at carried values
  /// (each new one goes into `carried`, what the body yields for it into
  /// `updates`); false when one of the ops is not speculatable.
  bool reach(std::vector<const Value*> work, std::unordered_set<const Operation*>& ops,
             std::unordered_set<std::size_t>& carried, std::vector<const Value*>& updates) const {
    while (!work.empty()) {
      const Value* v = work.back();
      work.pop_back();
      if (!passes::is_defined_inside(*v, loop_)) continue;
      if (v->owner == &body_) {
        const auto index = static_cast<std::size_t>(v->index);
        if (index > 0 && carried.insert(index - 1).second)
          updates.push_back(body_.terminator()->operands.at(index - 1));
        continue;
      }
      if (!v->def || v->def->parent != &body_ || !is_speculatable(*v->def)) return false;
      if (!ops.insert(v->def).second) continue;
      work.insert(work.end(), v->def->operands.begin(), v->def->operands.end());
    }
    return true;
  }

  std::vector<Operation*> in_body_order(const std::unordered_set<const Operation*>& ops) const {
    std::vector<Operation*> ordered;
    for (auto& op : body_.ops)
      if (ops.count(op.get())) ordered.push_back(op.get());
    return ordered;
  }

  const Operation& loop_;
  const Block& body_;
  std::unordered_set<const Operation*> ops_;
  std::unordered_set<std::size_t> carried_;
};

/// Whether `dot`'s inputs are narrower than 4 bytes or rounded to tf32.
bool is_low_precision(const Operation& dot) {
  const std::optional<Precision> precision = attribute_enum<Precision>(dot);
  return dtype_bytes(dot.operands[0]->type.dtype) < 4 || (precision && *precision != Precision::ieee);
}

/// Whether every use of `value` is operand a or b of a low-precision dot.
bool feeds_only_dots(const Value& value, const Block& body) {
  bool any = false, only = true;
  walk(body, [&](Operation& op) {
    for (std::size_t i = 0; i < op.operands.size(); ++i) {
      if (op.operands[i] != &value) continue;
      any = true;
      only &= op.code == OpCode::dot && i < 2 && is_low_precision(op);
    }
  });
  return any && only;
}

/// Whether `v` is a constant +0 (what a masked-off element of a copy is).
bool is_positive_zero(const Value& v) {
  if (!v.def || v.def->code != OpCode::constant) return false;
  const Attribute* value = v.def->find_attribute("value");
  if (!value) return false;
  if (const auto* i = std::get_if<std::int64_t>(value)) return *i == 0;
  if (const auto* d = std::get_if<double>(value)) return *d == 0.0 && !std::signbit(*d);
  return false;
}

PipelinePlan plan_loads(const Operation& loop) {
  const Block& body = *loop.regions[0];
  AddressSlice slice(loop);
  PipelinePlan plan;
  for (auto& op : body.ops) {
    if (op->code != OpCode::load || !feeds_only_dots(*op->result(), body)) continue;
    if (op->operands.size() > 2 && !is_positive_zero(*op->operands[2])) continue;
    const std::vector<Value*> roots(
        op->operands.begin(), op->operands.begin() + static_cast<long>(std::min<std::size_t>(2, op->operands.size())));
    if (auto addresses = slice.add(roots)) {
      plan.loads.push_back(op.get());
      plan.addresses.push_back(std::move(*addresses));
    }
  }
  plan.slice = slice.ops();
  plan.carried = slice.carried();
  return plan;
}

std::int64_t tile_bytes(const Type& type) { return type.numel() * dtype_bytes(type.dtype); }

class LoopPipeliner {
 public:
  LoopPipeliner(Function& fn, Operation& loop, PipelinePlan plan, int stages)
      : fn_(fn), b_(fn), loop_(loop), body_(*loop.regions[0]), plan_(std::move(plan)), stages_(stages) {}

  void run() {
    Block& parent = *loop_.parent;
    b_.set_loc(loop_.loc);
    if (!body_.terminator()) {  // a loop carrying nothing may have no yield
      b_.set_insertion_end(&body_);
      b_.create(OpCode::yield, {}, {});
    }
    Value* lo = loop_.operands[0];
    Value* hi = loop_.operands[1];
    Value* step = loop_.operands[2];
    b_.set_loc(loop_.loc);
    b_.set_insertion_before(&parent, position_in_block(loop_));
    for (const Operation* load : plan_.loads) {
      Shape shape = load->result()->type.shape;
      shape.insert(shape.begin(), stages_);
      rings_.push_back(b_.create(OpCode::local_alloc, {}, {Type::shared(load->result()->type.dtype, shape)})->result());
    }
    // The carried values of iteration lo + s*step, stepped through their updates.
    std::vector<Value*> advanced;
    for (std::size_t c : plan_.carried) advanced.push_back(loop_.operands[3 + c]);
    for (int s = 0; s + 1 < stages_; ++s) {
      Value* iv = lo;
      if (s > 0) iv = add(iv, multiple_of(step, s));
      advanced = issue_copies(iv, advanced, hi, b_.constant_int(Type::scalar(DType::i32), s));
    }

    Value* read_slot = carry_read_slot();
    const std::vector<Value*> advanced_in_body = carry_advanced(advanced);
    b_.set_loc(loop_.loc);
    b_.set_insertion_before(&body_, 0);
    b_.create(OpCode::async_wait, {}, {}, {{"pending", std::int64_t{stages_ - 2}}});
    b_.create(OpCode::barrier, {}, {});
    std::vector<Value*> staged;
    for (std::size_t j = 0; j < plan_.loads.size(); ++j) {
      b_.set_loc(plan_.loads[j]->loc);
      staged.push_back(
          b_.create(OpCode::local_load, {rings_[j], read_slot}, {plan_.loads[j]->result()->type})->result());
    }
    b_.set_loc(loop_.loc);
    Operation* yield = body_.terminator();
    b_.set_insertion_before(&body_, body_.ops.size() - 1);
    const Type slot_type = Type::scalar(DType::i32);
    Value* zero = b_.constant_int(slot_type, 0);
    Value* write_slot =
        b_.create(OpCode::select,
                  {compare(read_slot, zero, "eq"), b_.constant_int(slot_type, stages_ - 1),
                   b_.create(OpCode::sub, {read_slot, b_.constant_int(slot_type, 1)}, {slot_type})->result()},
                  {slot_type})
            ->result();
    const std::vector<Value*> next =
        issue_copies(add(body_.arguments[0], multiple_of(step, stages_ - 1)), advanced_in_body, hi, write_slot);
    yield->operands.insert(yield->operands.end(), next.begin(), next.end());

    passes::ValueReplacements replacements;
    for (std::size_t j = 0; j < plan_.loads.size(); ++j) replacements.add(plan_.loads[j]->result(), staged[j]);
    replacements.apply(body_);
    for (const Operation* load : plan_.loads) passes::erase_op(body_, position_in_block(*load));

    b_.set_insertion_before(&parent, position_in_block(loop_) + 1);
    b_.create(OpCode::async_wait, {}, {}, {{"pending", std::int64_t{0}}});
    b_.create(OpCode::barrier, {}, {});
  }

 private:
  Value* add(Value* a, Value* b) { return b_.create(OpCode::add, {a, b}, {a->type})->result(); }
  Value* multiple_of(Value* step, int times) {
    return b_.create(OpCode::mul, {step, b_.constant_int(step->type, times)}, {step->type})->result();
  }
  Value* compare(Value* a, Value* b, const char* predicate) {
    return b_.create(OpCode::cmp, {a, b}, {Type::scalar(DType::i1)}, {{"pred", Symbol{predicate}}})->result();
  }

  /// The copies of iteration `iv`, whose advanceable carried values are
  /// `carried` (plan_.carried's order), masked off where `iv` >= `hi`, into
  /// `slot` of each ring, then a commit: each load's pointers and mask
  /// computed again for `iv` at the builder's position just before its copy
  /// (ops two loads share, once), then the carried values' updates. Returns
  /// the carried values of the iteration after `iv`.
  std::vector<Value*> issue_copies(Value* iv, const std::vector<Value*>& carried, Value* hi, Value* slot) {
    std::unordered_map<const Value*, Value*> map{{body_.arguments[0], iv}};
    for (std::size_t c = 0; c < carried.size(); ++c) map[body_.arguments[1 + plan_.carried[c]]] = carried[c];
    auto mapped = [&](Value* v) {
      auto it = map.find(v);
      return it == map.end() ? v : it->second;
    };
    std::unordered_set<const Operation*> cloned;
    auto clone = [&](const Operation* op) {
      if (!cloned.insert(op).second) return;
      std::vector<Value*> operands;
      for (Value* v : op->operands) operands.push_back(mapped(v));
      std::vector<Type> types;
      for (const Value* r : op->results) types.push_back(r->type);
      b_.set_loc(op->loc);
      const Operation* copy = b_.create(op->code, operands, types, op->attributes);
      for (std::size_t r = 0; r < op->results.size(); ++r) map[op->results[r]] = copy->results[r];
    };
    Value* runs = compare(iv, hi, "lt");
    for (std::size_t j = 0; j < plan_.loads.size(); ++j) {
      const Operation* load = plan_.loads[j];
      for (const Operation* op : plan_.addresses[j]) clone(op);
      b_.set_loc(load->loc);
      const Type mask_type = Type::tile(DType::i1, load->operands[0]->type.shape);
      Value* mask = b_.create(OpCode::splat, {runs}, {mask_type})->result();
      if (load->operands.size() > 1)
        mask = b_.create(OpCode::and_, {mapped(load->operands[1]), mask}, {mask_type})->result();
      b_.create(OpCode::async_copy, {rings_[j], slot, mapped(load->operands[0]), mask}, {});
    }
    b_.set_loc(loop_.loc);
    b_.create(OpCode::async_commit, {}, {});
    for (const Operation* op : plan_.slice) clone(op);  // the advanceable carried values' updates
    std::vector<Value*> next;
    for (std::size_t c : plan_.carried) next.push_back(mapped(body_.terminator()->operands[c]));
    return next;
  }

  /// Adds a carried value to the loop (`init` at entry) and returns its block argument.
  Value* add_carried(Value* init) {
    loop_.operands.push_back(init);
    Value* result = fn_.new_value(init->type);
    result->def = &loop_;
    result->index = static_cast<int>(loop_.results.size());
    loop_.results.push_back(result);
    return fn_.add_argument(body_, init->type);
  }

  /// Adds the advanced copies of the advanceable carried values to the
  /// loop's carried values (`advanced` at entry) and returns their block
  /// arguments; the body's yield gets their next values in run().
  std::vector<Value*> carry_advanced(const std::vector<Value*>& advanced) {
    std::vector<Value*> arguments;
    for (Value* init : advanced) arguments.push_back(add_carried(init));
    return arguments;
  }

  /// Adds the read slot to the loop's carried values (0 at entry, then
  /// r + 1 mod S) and returns its block argument.
  Value* carry_read_slot() {
    const Type slot_type = Type::scalar(DType::i32);
    b_.set_insertion_before(loop_.parent, position_in_block(loop_));
    Value* read_slot = add_carried(b_.constant_int(slot_type, 0));
    Operation* yield = body_.terminator();
    b_.set_insertion_before(&body_, body_.ops.size() - 1);
    Value* next = b_.create(OpCode::add, {read_slot, b_.constant_int(slot_type, 1)}, {slot_type})->result();
    Value* wraps = compare(next, b_.constant_int(slot_type, stages_), "lt");
    next = b_.create(OpCode::select, {wraps, next, b_.constant_int(slot_type, 0)}, {slot_type})->result();
    yield->operands.push_back(next);
    return read_slot;
  }

  Function& fn_;
  Builder b_;
  Operation& loop_;
  Block& body_;
  PipelinePlan plan_;
  int stages_;
  std::vector<Value*> rings_;
};

/// The stages the rings of `loads` fit in the budget with (at most `stages`), or < 2.
int stages_that_fit(const std::vector<Operation*>& loads, int stages) {
  std::int64_t per_stage = 0;
  for (const Operation* load : loads) per_stage += tile_bytes(load->result()->type);
  while (stages >= 2 && per_stage * stages > kRingBudgetBytes) --stages;
  return stages;
}

}  // namespace

bool pipeline_dot_loads(Function& fn, int num_stages) {
  std::vector<Operation*> loops;
  walk(fn.body, [&](Operation& op) {
    if (op.code == OpCode::for_ && !writes_memory(op)) loops.push_back(&op);
  });
  bool changed = false;
  for (Operation* loop : loops) {
    const int asked =
        loop->has_attribute("num_stages") ? static_cast<int>(loop->int_attribute("num_stages")) : num_stages;
    if (asked < 2) continue;
    PipelinePlan plan = plan_loads(*loop);
    const int stages = stages_that_fit(plan.loads, asked);
    if (plan.loads.empty() || stages < 2) continue;
    LoopPipeliner(fn, *loop, std::move(plan), stages).run();
    changed = true;
  }
  return changed;
}

}  // namespace kiln::ir
