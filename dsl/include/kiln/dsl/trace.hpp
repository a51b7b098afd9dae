// The tracer: while a kernel function runs under compile(), every DSL
// operation appends an op to the kernel being built. This header is the
// non-template core the value types call into (implemented in dsl/src/trace.cpp).
#pragma once

#include <memory>
#include <source_location>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/ir/builder.hpp"
#include "kiln/ir/ir.hpp"

namespace kiln {

/// A mistake found while tracing a kernel; the message names the kernel and
/// the source line.
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {

class VarBase;

/// The state of one trace: the kernel under construction, the insertion
/// point, and the loop-carried variables alive right now.
class TraceContext {
 public:
  explicit TraceContext(std::string kernel_name);
  ~TraceContext();
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  /// The trace running on this thread; throws TraceError naming `what` when none is.
  static TraceContext& current(const char* what);
  static bool active();

  ir::Function& function() { return *fn_; }
  ir::Builder& builder() { return builder_; }
  std::unique_ptr<ir::Function> take_function();

  /// The block new ops go into; DSL values remember the block they were
  /// declared in to catch assignments across runtime control flow.
  ir::Block* block() const { return builder_.block(); }

  std::vector<VarBase*>& live_vars() { return vars_; }

  /// True when ops in `here` run at the level of `home`: it is `home`, or
  /// the rest of the kernel after kl::return_ifs made there.
  bool same_level(const ir::Block* here, const ir::Block* home) const;
  /// True where new ops go into the kernel's top level.
  bool at_top_level() const { return same_level(block(), &fn_->body); }
  /// From now on new ops go into `rest`, the region that runs the rest of
  /// the kernel when a kl::return_if does not return.
  void continue_in(ir::Block* rest);

  /// "kernel softmax: <what> (softmax.hpp:41)".
  [[noreturn]] void fail(const std::string& what, const std::source_location& loc) const;
  [[noreturn]] void fail(const std::string& what, const ir::SourceLoc& loc) const;
  /// Records a problem to report when the trace ends (used from destructors).
  void defer_failure(const std::string& what, const std::source_location& loc);
  void check_deferred() const;

 private:
  std::unique_ptr<ir::Function> fn_;
  ir::Builder builder_;
  std::vector<VarBase*> vars_;
  std::vector<const ir::Block*> continuations_;
  std::string deferred_;
  TraceContext* previous_;
};

ir::SourceLoc to_ir(const std::source_location& loc);

/// Appends one op at the current insertion point and returns its first result.
/// Operands defined in a region that does not enclose the insertion point are
/// rejected with a message telling the author to carry them with kl::Var.
ir::Value* emit(ir::OpCode code, const std::vector<ir::Value*>& operands, const ir::Type& result,
                std::vector<std::pair<std::string, ir::Attribute>> attributes, const std::source_location& loc);
/// As emit(), for ops with several (or no) results and regions.
ir::Operation* emit_op(ir::OpCode code, const std::vector<ir::Value*>& operands, const std::vector<ir::Type>& results,
                       std::vector<std::pair<std::string, ir::Attribute>> attributes, int num_regions,
                       const std::source_location& loc);

/// Converts `v` to dtype `to` (no-op when equal).
ir::Value* emit_cast(ir::Value* v, ir::DType to, const std::source_location& loc);
/// Broadcasts `v` (scalar or tile of lower or equal rank) to `shape`.
ir::Value* emit_broadcast(ir::Value* v, const ir::Shape& shape, const std::source_location& loc);
/// A constant of the given type (scalar, or a tile filled with it).
ir::Value* emit_constant(const ir::Type& type, double value, const std::source_location& loc);
ir::Value* emit_int_constant(const ir::Type& type, std::int64_t value, const std::source_location& loc);

/// While alive, new ops go to the end of `block`; restores the previous
/// insertion point when destroyed.
class InsertionScope {
 public:
  explicit InsertionScope(ir::Block* block);
  ~InsertionScope();
  InsertionScope(const InsertionScope&) = delete;
  InsertionScope& operator=(const InsertionScope&) = delete;

 private:
  ir::Block* previous_;
};

/// Ends a region with `yield values`.
void emit_yield(const std::vector<ir::Value*>& values, const std::source_location& loc);

/// Checks that assigning to a DSL value declared in `home` is allowed here.
void check_assignment(const ir::Block* home, const std::source_location& loc);
/// As above, located at the op that computed `assigned`.
void check_assignment(const ir::Block* home, const ir::Value* assigned);

}  // namespace detail
}  // namespace kiln
