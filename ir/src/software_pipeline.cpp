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
// A load qualifies when it has no `other` (a masked-off element of a copy is
// 0), every use of its result is operand a or b of a `dot` whose inputs are
// narrower than 4 bytes or rounded to tf32 (the dots tensor cores run on a
// GPU; an f32 dot on the FMA units does a thousand FMAs per thread per 64 x
// 64 x 32 step, enough to hide its loads, and the rings' addressing would
// cost it registers: the library's f32 matmul without alignment facts then
// spills on sm_90a), and its pointers
// and mask depend, inside the body, only on the induction variable through
// speculatable ops (they are recomputed for later iterations, and for some
// that never run). A loop qualifies when nothing in it writes memory: the
// copies read ahead of the iteration that used to read.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/attribute_enums.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/passes.hpp"
#include "op_traits.hpp"

namespace kiln::ir {

namespace {

/// Shared bytes the rings of one loop may take together: the stages are cut
/// until they fit, so that pipelining never makes a kernel need more shared
/// memory than every supported GPU has (99 KiB on sm_86/sm_89) beside the
/// ops' own scratch.
constexpr std::int64_t kRingBudgetBytes = 64 * 1024;

/// A load to pipeline and the body ops its pointers and mask are computed by,
/// in body order.
struct PipelinedLoad {
  Operation* load;
  std::vector<Operation*> slice;
};

/// The body ops (top level of `body`) that `roots` depend on, in body order;
/// empty optional when one of them is not speculatable or reads a carried value.
std::optional<std::vector<Operation*>> address_slice(const Operation& loop, const Block& body,
                                                     const std::vector<Value*>& roots) {
  std::unordered_set<const Operation*> in_slice;
  std::vector<const Value*> work(roots.begin(), roots.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (!passes::is_defined_inside(*v, loop)) continue;
    if (v == body.arguments[0]) continue;
    if (!v->def || v->def->parent != &body || !is_speculatable(*v->def)) return std::nullopt;
    if (!in_slice.insert(v->def).second) continue;
    work.insert(work.end(), v->def->operands.begin(), v->def->operands.end());
  }
  std::vector<Operation*> slice;
  for (auto& op : body.ops)
    if (in_slice.count(op.get())) slice.push_back(op.get());
  return slice;
}

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

std::vector<PipelinedLoad> pipelined_loads(const Operation& loop) {
  const Block& body = *loop.regions[0];
  std::vector<PipelinedLoad> loads;
  for (auto& op : body.ops) {
    if (op->code != OpCode::load || op->operands.size() > 2 || !feeds_only_dots(*op->result(), body)) continue;
    if (auto slice = address_slice(loop, body, op->operands)) loads.push_back({op.get(), std::move(*slice)});
  }
  return loads;
}

std::int64_t tile_bytes(const Type& type) { return type.numel() * dtype_bytes(type.dtype); }

class LoopPipeliner {
 public:
  LoopPipeliner(Function& fn, Operation& loop, std::vector<PipelinedLoad> loads, int stages)
      : fn_(fn), b_(fn), loop_(loop), body_(*loop.regions[0]), loads_(std::move(loads)), stages_(stages) {}

  void run() {
    Block& parent = *loop_.parent;
    Value* lo = loop_.operands[0];
    Value* hi = loop_.operands[1];
    Value* step = loop_.operands[2];
    b_.set_loc(loop_.loc);
    b_.set_insertion_before(&parent, position_in_block(loop_));
    for (const PipelinedLoad& load : loads_) {
      Shape shape = load.load->result()->type.shape;
      shape.insert(shape.begin(), stages_);
      rings_.push_back(
          b_.create(OpCode::local_alloc, {}, {Type::shared(load.load->result()->type.dtype, shape)})->result());
    }
    for (int s = 0; s + 1 < stages_; ++s) {
      Value* iv = lo;
      if (s > 0) iv = add(iv, multiple_of(step, s));
      issue_copies(iv, hi, b_.constant_int(Type::scalar(DType::i32), s));
    }

    Value* read_slot = carry_read_slot();
    b_.set_loc(loop_.loc);
    b_.set_insertion_before(&body_, 0);
    b_.create(OpCode::async_wait, {}, {}, {{"pending", std::int64_t{stages_ - 2}}});
    b_.create(OpCode::barrier, {}, {});
    std::vector<Value*> staged;
    for (std::size_t j = 0; j < loads_.size(); ++j) {
      b_.set_loc(loads_[j].load->loc);
      staged.push_back(
          b_.create(OpCode::local_load, {rings_[j], read_slot}, {loads_[j].load->result()->type})->result());
    }
    b_.set_loc(loop_.loc);
    b_.set_insertion_before(&body_, body_.ops.size() - 1);
    const Type slot_type = Type::scalar(DType::i32);
    Value* zero = b_.constant_int(slot_type, 0);
    Value* write_slot =
        b_.create(OpCode::select,
                  {compare(read_slot, zero, "eq"), b_.constant_int(slot_type, stages_ - 1),
                   b_.create(OpCode::sub, {read_slot, b_.constant_int(slot_type, 1)}, {slot_type})->result()},
                  {slot_type})
            ->result();
    issue_copies(add(body_.arguments[0], multiple_of(step, stages_ - 1)), hi, write_slot);

    passes::ValueReplacements replacements;
    for (std::size_t j = 0; j < loads_.size(); ++j) replacements.add(loads_[j].load->result(), staged[j]);
    replacements.apply(body_);
    for (const PipelinedLoad& load : loads_) passes::erase_op(body_, position_in_block(*load.load));

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

  /// The copies of iteration `iv` (masked off where `iv` >= `hi`) into `slot`
  /// of each ring, then a commit: each load's pointer and mask computed again
  /// for `iv` at the builder's position.
  void issue_copies(Value* iv, Value* hi, Value* slot) {
    Value* runs = compare(iv, hi, "lt");
    for (std::size_t j = 0; j < loads_.size(); ++j) {
      const PipelinedLoad& load = loads_[j];
      std::unordered_map<const Value*, Value*> map{{body_.arguments[0], iv}};
      auto mapped = [&](Value* v) {
        auto it = map.find(v);
        return it == map.end() ? v : it->second;
      };
      for (const Operation* op : load.slice) {
        std::vector<Value*> operands;
        for (Value* v : op->operands) operands.push_back(mapped(v));
        std::vector<Type> types;
        for (const Value* r : op->results) types.push_back(r->type);
        b_.set_loc(op->loc);
        const Operation* copy = b_.create(op->code, operands, types, op->attributes);
        for (std::size_t r = 0; r < op->results.size(); ++r) map[op->results[r]] = copy->results[r];
      }
      b_.set_loc(load.load->loc);
      const Type mask_type = Type::tile(DType::i1, load.load->operands[0]->type.shape);
      Value* mask = b_.create(OpCode::splat, {runs}, {mask_type})->result();
      if (load.load->operands.size() > 1)
        mask = b_.create(OpCode::and_, {mapped(load.load->operands[1]), mask}, {mask_type})->result();
      b_.create(OpCode::async_copy, {rings_[j], slot, mapped(load.load->operands[0]), mask}, {});
    }
    b_.set_loc(loop_.loc);
    b_.create(OpCode::async_commit, {}, {});
  }

  /// Adds the read slot to the loop's carried values (0 at entry, then
  /// r + 1 mod S) and returns its block argument.
  Value* carry_read_slot() {
    const Type slot_type = Type::scalar(DType::i32);
    b_.set_insertion_before(loop_.parent, position_in_block(loop_));
    loop_.operands.push_back(b_.constant_int(slot_type, 0));
    Value* result = fn_.new_value(slot_type);
    result->def = &loop_;
    result->index = static_cast<int>(loop_.results.size());
    loop_.results.push_back(result);
    Value* read_slot = fn_.add_argument(body_, slot_type);

    Operation* yield = body_.terminator();
    if (!yield) {
      b_.set_insertion_end(&body_);
      yield = b_.create(OpCode::yield, {}, {});
    }
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
  std::vector<PipelinedLoad> loads_;
  int stages_;
  std::vector<Value*> rings_;
};

/// The stages the rings of `loads` fit in the budget with (at most `stages`), or < 2.
int stages_that_fit(const std::vector<PipelinedLoad>& loads, int stages) {
  std::int64_t per_stage = 0;
  for (const PipelinedLoad& load : loads) per_stage += tile_bytes(load.load->result()->type);
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
    std::vector<PipelinedLoad> loads = pipelined_loads(*loop);
    const int stages = stages_that_fit(loads, asked);
    if (loads.empty() || stages < 2) continue;
    LoopPipeliner(fn, *loop, std::move(loads), stages).run();
    changed = true;
  }
  return changed;
}

}  // namespace kiln::ir
