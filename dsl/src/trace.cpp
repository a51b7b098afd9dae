// The tracer's state and the non-template emission helpers.
#include "kiln/dsl/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace kiln::detail {

namespace {
thread_local TraceContext* current_trace = nullptr;

std::string op_location(const std::source_location& loc) { return ir::to_string(to_ir(loc)); }

// Whether `v` is visible at the insertion point: defined in `block` or in a
// block enclosing it.
bool visible_from(const ir::Value* v, const ir::Block* block) {
  const ir::Block* home = v->def ? v->def->parent : v->owner;
  for (const ir::Block* b = block; b; b = b->parent ? b->parent->parent : nullptr)
    if (b == home) return true;
  return false;
}
}  // namespace

TraceContext::TraceContext(std::string kernel_name)
    : fn_(std::make_unique<ir::Function>()), builder_(*fn_), previous_(current_trace) {
  fn_->name = std::move(kernel_name);
  current_trace = this;
}

TraceContext::~TraceContext() { current_trace = previous_; }

TraceContext& TraceContext::current(const char* what) {
  if (!current_trace)
    throw TraceError(std::string("kiln: '") + what +
                     "' used outside a kernel being traced; call it from a kernel passed to kiln::compile");
  return *current_trace;
}

bool TraceContext::active() { return current_trace != nullptr; }

std::unique_ptr<ir::Function> TraceContext::take_function() { return std::move(fn_); }

bool TraceContext::same_level(const ir::Block* here, const ir::Block* home) const {
  while (here != home && std::find(continuations_.begin(), continuations_.end(), here) != continuations_.end())
    here = here->parent->parent;
  return here == home;
}

void TraceContext::continue_in(ir::Block* rest) {
  continuations_.push_back(rest);
  builder_.set_insertion_end(rest);
}

void TraceContext::fail(const std::string& what, const std::source_location& loc) const { fail(what, to_ir(loc)); }

std::string traced_type(const ir::Value* v) { return ir::to_string(v->type); }

void static_print(const std::string& prefix, const std::vector<std::string>& parts, const std::source_location& loc) {
  std::string line = "kernel " + TraceContext::current("static_print").function().name + ": static_print at " +
                     ir::to_string(to_ir(loc)) + ": " + prefix;
  for (const std::string& part : parts) line += " " + part;
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void TraceContext::fail(const std::string& what, const ir::SourceLoc& loc) const {
  std::string where = ir::to_string(loc);
  throw TraceError("kernel " + fn_->name + ": " + what + (where.empty() ? "" : " (" + where + ")"));
}

void TraceContext::defer_failure(const std::string& what, const std::source_location& loc) {
  if (!deferred_.empty()) return;
  std::string where = op_location(loc);
  deferred_ = "kernel " + fn_->name + ": " + what + (where.empty() ? "" : " (" + where + ")");
}

void TraceContext::check_deferred() const {
  if (!deferred_.empty()) throw TraceError(deferred_);
}

ir::SourceLoc to_ir(const std::source_location& loc) {
  return ir::SourceLoc{loc.file_name(), static_cast<int>(loc.line())};
}

ir::Operation* emit_op(ir::OpCode code, const std::vector<ir::Value*>& operands, const std::vector<ir::Type>& results,
                       std::vector<std::pair<std::string, ir::Attribute>> attributes, int num_regions,
                       const std::source_location& loc) {
  TraceContext& ctx = TraceContext::current(ir::op_info(code).name.data());
  for (ir::Value* v : operands)
    if (!visible_from(v, ctx.block()))
      ctx.fail(std::string(ir::op_info(code).name) +
                   ": uses a value computed inside a runtime loop or branch outside of it; "
                   "declare the variable before the loop as kl::Var to carry it out",
               loc);
  ctx.builder().set_loc(to_ir(loc));
  return ctx.builder().create(code, operands, results, std::move(attributes), num_regions);
}

ir::Value* emit(ir::OpCode code, const std::vector<ir::Value*>& operands, const ir::Type& result,
                std::vector<std::pair<std::string, ir::Attribute>> attributes, const std::source_location& loc) {
  return emit_op(code, operands, {result}, std::move(attributes), 0, loc)->result();
}

ir::Value* emit_cast(ir::Value* v, ir::DType to, const std::source_location& loc) {
  if (v->type.dtype == to && !v->type.is_pointer) return v;
  ir::Type t = v->type;
  t.dtype = to;
  t.is_pointer = false;
  return emit(ir::OpCode::cast, {v}, t, {}, loc);
}

ir::Value* emit_broadcast(ir::Value* v, const ir::Shape& shape, const std::source_location& loc) {
  const ir::Shape& from = v->type.shape;
  if (from == shape) return v;
  if (from.empty()) return emit(ir::OpCode::splat, {v}, v->type.with_shape(shape), {}, loc);
  // Right-align: add leading dims of size 1, then broadcast those of size 1.
  ir::Value* x = v;
  while (x->type.shape.size() < shape.size()) {
    ir::Shape s = x->type.shape;
    s.insert(s.begin(), 1);
    x = emit(ir::OpCode::expand_dims, {x}, x->type.with_shape(s), {{"axis", std::int64_t{0}}}, loc);
  }
  if (x->type.shape == shape) return x;
  return emit(ir::OpCode::broadcast, {x}, x->type.with_shape(shape), {}, loc);
}

ir::Value* emit_constant(const ir::Type& type, double value, const std::source_location& loc) {
  if (ir::is_float(type.dtype)) return emit(ir::OpCode::constant, {}, type, {{"value", value}}, loc);
  // Outside [-2^63, 2^63) (2^64 for u64) the conversion to an integer is
  // undefined; narrower types are range-checked by the verifier.
  const bool unsigned64 = type.dtype == ir::DType::u64;
  if (!(value >= (unsigned64 ? 0.0 : -0x1p63) && value < (unsigned64 ? 0x1p64 : 0x1p63))) {
    std::ostringstream shown;
    shown << std::setprecision(17) << value;
    TraceContext::current("constant")
        .fail("constant " + shown.str() + " is outside the range of " + std::string(ir::dtype_name(type.dtype)) +
                  " (a double holds integers exactly only up to 2^53: give an integer, such as INT64_MAX, for a wide "
                  "one)",
              loc);
  }
  // A u64 value of 2^63 or more keeps its bits in the IR's int64.
  return emit_int_constant(
      type,
      unsigned64 ? static_cast<std::int64_t>(static_cast<std::uint64_t>(value)) : static_cast<std::int64_t>(value),
      loc);
}

ir::Value* emit_int_constant(const ir::Type& type, std::int64_t value, const std::source_location& loc) {
  if (ir::is_float(type.dtype))
    return emit(ir::OpCode::constant, {}, type, {{"value", static_cast<double>(value)}}, loc);
  return emit(ir::OpCode::constant, {}, type, {{"value", value}}, loc);
}

InsertionScope::InsertionScope(ir::Block* block) {
  ir::Builder& b = TraceContext::current("region").builder();
  previous_ = b.block();
  b.set_insertion_end(block);
}

InsertionScope::~InsertionScope() { TraceContext::current("region").builder().set_insertion_end(previous_); }

void emit_yield(const std::vector<ir::Value*>& values, const std::source_location& loc) {
  emit_op(ir::OpCode::yield, values, {}, {}, 0, loc);
}

namespace {
void check_assignment_at(const ir::Block* home, const ir::SourceLoc& loc) {
  if (!home || !TraceContext::active()) return;
  TraceContext& ctx = TraceContext::current("assignment");
  if (!ctx.same_level(ctx.block(), home))
    ctx.fail(
        "assignment inside a runtime loop or branch to a value declared outside it; "
        "declare it as kl::Var to carry it across iterations and branches",
        loc);
}
}  // namespace

void check_assignment(const ir::Block* home, const std::source_location& loc) { check_assignment_at(home, to_ir(loc)); }

void check_assignment(const ir::Block* home, const ir::Value* assigned) {
  check_assignment_at(home, assigned->def ? assigned->def->loc : ir::SourceLoc{});
}

}  // namespace kiln::detail
