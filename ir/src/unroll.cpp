// Loop unrolling (Triton's loop_unroll_factor): a `for` loop with an
// `unroll = U` attribute over i32 bounds becomes two loops,
//
//   main = for iv = lo; iv < main_hi; iv += U*step     the body U times, at
//                                                      iv, iv+step, … iv+(U-1)*step
//   for iv = main_hi; iv < hi; iv += step              the body once (the loop
//                                                      itself, started where main ended)
//
// where main_hi = lo + trunc((hi - lo) / (U*step)) * U*step, so that main runs
// whole groups of U iterations and the second loop the fewer than U left.
// The bounds arithmetic is done in i64, where hi - lo and U*step cannot
// overflow. When hi < lo, main_hi lies between hi and lo (division truncates
// toward zero) and neither loop runs. main_hi is lo when step is not positive
// (the second loop is then the original loop, and faults where it did) or
// U*step does not fit in i32. So whenever the main loop runs, main_hi <= hi,
// and neither its induction variable nor a body copy's iv + k*step passes
// main_hi: no i32 overflow that the loop itself would not have.
//
// The main loop keeps the loop's `num_stages`; the second, which runs fewer
// than U times, gets `num_stages = 1` (pipelining it would fill rings for
// iterations that mostly do not run). Loops nested in an unrolled body are
// unrolled first, so their copies are the unrolled form.
#include <cstdint>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kiln/ir/builder.hpp"
#include "kiln/ir/passes.hpp"

namespace kiln::ir {

namespace {

using ValueMap = std::unordered_map<const Value*, Value*>;

Value* mapped(const ValueMap& map, Value* v) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

/// Appends copies of `from`'s ops (its terminator too unless `skip_terminator`)
/// to `to`, reading each operand through `map` and recording each result in it.
void copy_ops(const Block& from, Block& to, Function& fn, ValueMap& map, bool skip_terminator) {
  const Operation* terminator = from.terminator();
  for (const auto& op : from.ops) {
    if (skip_terminator && op.get() == terminator) continue;
    auto copy = std::make_unique<Operation>();
    copy->code = op->code;
    copy->attributes = op->attributes;
    copy->loc = op->loc;
    copy->parent = &to;
    for (Value* v : op->operands) copy->operands.push_back(mapped(map, v));
    for (const Value* r : op->results) {
      Value* result = fn.new_value(r->type);
      result->def = copy.get();
      result->index = r->index;
      copy->results.push_back(result);
      map[r] = result;
    }
    for (const auto& region : op->regions) {
      auto block = std::make_unique<Block>();
      block->parent = copy.get();
      for (const Value* arg : region->arguments) map[arg] = fn.add_argument(*block, arg->type);
      copy_ops(*region, *block, fn, map, false);
      copy->regions.push_back(std::move(block));
    }
    to.ops.push_back(std::move(copy));
  }
}

void erase_attribute(Operation& op, std::string_view key) {
  std::erase_if(op.attributes, [&](const auto& attribute) { return attribute.first == key; });
}

class LoopUnroller {
 public:
  LoopUnroller(Function& fn, Operation& loop)
      : fn_(fn), b_(fn), loop_(loop), factor_(static_cast<int>(loop.int_attribute("unroll"))) {}

  void run() {
    erase_attribute(loop_, "unroll");
    if (factor_ == 1) return;
    b_.set_loc(loop_.loc);
    b_.set_insertion_before(loop_.parent, position_in_block(loop_));
    const auto [main_hi, main_step] = main_bounds();
    Operation* main =
        b_.create(OpCode::for_, {loop_.operands[0], main_hi, main_step}, result_types(), loop_.attributes, 1);
    for (std::size_t i = 3; i < loop_.operands.size(); ++i) main->operands.push_back(loop_.operands[i]);
    fill_main_body(*main);

    loop_.operands[0] = main_hi;
    for (std::size_t i = 0; i < main->results.size(); ++i) loop_.operands[3 + i] = main->results[i];
    loop_.set_attribute("num_stages", std::int64_t{1});
  }

 private:
  std::vector<Type> result_types() const {
    std::vector<Type> types;
    for (const Value* r : loop_.results) types.push_back(r->type);
    return types;
  }

  Value* op(OpCode code, std::vector<Value*> operands, const Type& type) {
    return b_.create(code, std::move(operands), {type})->result();
  }
  Value* compare(const char* predicate, Value* a, Value* b) {
    return b_.create(OpCode::cmp, {a, b}, {Type::scalar(DType::i1)}, {{"pred", Symbol{predicate}}})->result();
  }

  /// main_hi and U*step (i32), computed in front of the loop.
  std::pair<Value*, Value*> main_bounds() {
    const Type i32 = Type::scalar(DType::i32), i64 = Type::scalar(DType::i64);
    Value* lo = op(OpCode::cast, {loop_.operands[0]}, i64);
    Value* hi = op(OpCode::cast, {loop_.operands[1]}, i64);
    Value* step = op(OpCode::cast, {loop_.operands[2]}, i64);
    Value* chunk = op(OpCode::mul, {step, b_.constant_int(i64, factor_)}, i64);
    Value* fits = op(OpCode::and_,
                     {compare("gt", step, b_.constant_int(i64, 0)),
                      compare("le", chunk, b_.constant_int(i64, std::numeric_limits<std::int32_t>::max()))},
                     Type::scalar(DType::i1));
    Value* safe_chunk = op(OpCode::select, {fits, chunk, b_.constant_int(i64, 1)}, i64);
    Value* span = op(OpCode::sub, {hi, lo}, i64);
    Value* whole = op(OpCode::mul, {op(OpCode::div, {span, safe_chunk}, i64), safe_chunk}, i64);
    Value* main_span = op(OpCode::select, {fits, whole, b_.constant_int(i64, 0)}, i64);
    return {op(OpCode::cast, {op(OpCode::add, {lo, main_span}, i64)}, i32), op(OpCode::cast, {safe_chunk}, i32)};
  }

  /// The body U times: copy k runs at iv + k*step on the values copy k-1 yields.
  void fill_main_body(Operation& main) {
    const Block& body = *loop_.regions[0];
    Block& into = *main.regions[0];
    Value* iv = fn_.add_argument(into, body.arguments[0]->type);
    std::vector<Value*> carried;
    for (std::size_t i = 1; i < body.arguments.size(); ++i)
      carried.push_back(fn_.add_argument(into, body.arguments[i]->type));
    const Operation* yield = body.terminator();
    for (int k = 0; k < factor_; ++k) {
      ValueMap map;
      if (k == 0) {
        map[body.arguments[0]] = iv;
      } else {
        b_.set_insertion_end(&into);
        Value* offset = op(OpCode::mul, {loop_.operands[2], b_.constant_int(iv->type, k)}, iv->type);
        map[body.arguments[0]] = op(OpCode::add, {iv, offset}, iv->type);
      }
      for (std::size_t i = 0; i < carried.size(); ++i) map[body.arguments[1 + i]] = carried[i];
      copy_ops(body, into, fn_, map, true);
      if (yield)
        for (std::size_t i = 0; i < carried.size(); ++i) carried[i] = mapped(map, yield->operands[i]);
    }
    b_.set_insertion_end(&into);
    b_.create(OpCode::yield, carried, {});
  }

  Function& fn_;
  Builder b_;
  Operation& loop_;
  int factor_;
};

}  // namespace

bool unroll_loops(Function& fn) {
  std::vector<Operation*> loops;
  walk(fn.body, [&](Operation& op) {
    if (op.code == OpCode::for_ && op.has_attribute("unroll")) loops.push_back(&op);
  });
  // A walk lists a loop before the loops nested in it: backwards, inner loops
  // are unrolled before the bodies holding them are copied.
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) LoopUnroller(fn, **it).run();
  return !loops.empty();
}

}  // namespace kiln::ir
