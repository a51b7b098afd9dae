// Runtime loops and branches: the non-template parts of range, if_ and while_.
#include "kiln/dsl/control.hpp"

#include <string>

#include "kiln/ir/passes.hpp"

namespace kiln {

namespace detail {

std::vector<ir::Value*> current_values(const std::vector<VarBase*>& vars) {
  std::vector<ir::Value*> out;
  for (VarBase* v : vars) out.push_back(v->get());
  return out;
}

std::vector<ir::Type> value_types(const std::vector<VarBase*>& vars) {
  std::vector<ir::Type> out;
  for (VarBase* v : vars) out.push_back(v->get()->type);
  return out;
}

void rebind_all(const std::vector<VarBase*>& vars, const std::vector<ir::Value*>& values, std::size_t first) {
  for (std::size_t i = 0; i < vars.size(); ++i) vars[i]->set(values[first + i]);
}

void check_condition(const char* construct, ir::Value* cond, const std::source_location& loc) {
  if (cond->type.is_scalar() && !cond->type.is_pointer && cond->type.dtype == ir::DType::i1) return;
  TraceContext::current(construct).fail(std::string(construct) + ": the condition must be a scalar i1, got " +
                                            ir::to_string(cond->type) + "; reduce it first (e.g. kl::max of the mask)",
                                        loc);
}

void return_if(ir::Value* cond, const std::source_location& loc) {
  check_condition("return_if", cond, loc);
  TraceContext& ctx = TraceContext::current("return_if");
  if (!ctx.at_top_level())
    ctx.fail(
        "return_if: only at the kernel's top level, not inside a kl::range, kl::if_ or kl::while_ body; "
        "carry a kl::Var flag out of the construct and test it after",
        loc);
  // if cond { } else { the rest of the kernel }: the else region stays open
  // until the trace ends, and needs no yield as it yields nothing.
  ir::Operation* op = emit_op(ir::OpCode::if_, {cond}, {}, {}, 2, loc);
  {
    InsertionScope then_scope(op->regions[0].get());
    emit_yield({}, loc);
  }
  ctx.continue_in(op->regions[1].get());
}

}  // namespace detail

void range::check_options(const LoopOptions& options) {
  auto& ctx = detail::TraceContext::current("range");
  if (options.num_stages && *options.num_stages < 1)
    ctx.fail(
        "kl::range: num_stages must be at least 1 (1 turns pipelining off), got " + std::to_string(*options.num_stages),
        loc_);
  if (options.unroll < 1 || options.unroll > ir::kMaxLoopUnroll)
    ctx.fail("kl::range: unroll must be from 1 to " + std::to_string(ir::kMaxLoopUnroll) + ", got " +
                 std::to_string(options.unroll),
             loc_);
  if (options.num_stages) attributes_.emplace_back("num_stages", std::int64_t{*options.num_stages});
  if (options.unroll > 1) attributes_.emplace_back("unroll", std::int64_t{options.unroll});
}

range::iterator range::begin() {
  auto& ctx = detail::TraceContext::current("range");
  vars_ = ctx.live_vars();
  std::vector<ir::Value*> operands = bounds_;
  for (ir::Value* v : detail::current_values(vars_)) operands.push_back(v);
  op_ = detail::emit_op(ir::OpCode::for_, operands, detail::value_types(vars_), attributes_, 1, loc_);
  ir::Block* body = op_->regions[0].get();
  ctx.function().add_argument(*body, bounds_[0]->type);
  std::vector<ir::Value*> args;
  for (ir::Value* v : detail::current_values(vars_)) args.push_back(ctx.function().add_argument(*body, v->type));
  detail::rebind_all(vars_, args);
  outer_ = ctx.block();
  ctx.builder().set_insertion_end(body);
  open_ = true;
  exceptions_at_begin_ = std::uncaught_exceptions();
  return iterator(this);
}

void range::close() {
  detail::emit_yield(detail::current_values(vars_), loc_);
  detail::TraceContext::current("range").builder().set_insertion_end(outer_);
  detail::rebind_all(vars_, op_->results);
  open_ = false;
}

range::~range() {
  if (!open_ || !detail::TraceContext::active()) return;
  auto& ctx = detail::TraceContext::current("range");
  ctx.builder().set_insertion_end(outer_);
  if (std::uncaught_exceptions() == exceptions_at_begin_)
    ctx.defer_failure(
        "the body of a kl::range loop was left early (break, return or goto); use kl::while_ for loops that stop early",
        loc_);
}

Scalar<std::int32_t> range::iterator::operator*() const {
  return Scalar<std::int32_t>(r_->op_->regions[0]->arguments[0]);
}

range::iterator& range::iterator::operator++() {
  r_->close();
  return *this;
}

bool range::iterator::operator!=(sentinel) const { return r_->open_; }

}  // namespace kiln
