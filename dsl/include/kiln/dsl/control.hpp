// Runtime control flow: for (auto k : kl::range(lo, hi, step)), kl::if_ and
// kl::while_, with kl::Var for values carried across iterations and branches.
//
// Plain C++ loops and ifs run while tracing (they unroll). These constructs
// instead create IR regions: their body is traced once, and every kl::Var
// alive when the construct starts becomes a loop-carried value or a result of
// the branch (the optimizer drops those the body leaves unchanged).
#pragma once

#include <exception>
#include <optional>
#include <source_location>
#include <type_traits>
#include <vector>

#include "kiln/dsl/arith.hpp"

namespace kiln {

namespace detail {

/// The untyped face of a kl::Var, for the control-flow constructs.
class VarBase {
 public:
  virtual ir::Value* get() const = 0;
  virtual void set(ir::Value* v) = 0;

 protected:
  VarBase() = default;
  ~VarBase() = default;
};

/// The Var's value type must stay the same across assignments.
template <class Declared, class Assigned>
struct var_type_check {
  static_assert(std::is_same_v<Declared, Assigned>,
                "kiln: a kl::Var keeps its type (dtype and shape) for its whole life; cast or reshape the new value");
  static constexpr bool value = true;
};

std::vector<ir::Value*> current_values(const std::vector<VarBase*>& vars);
std::vector<ir::Type> value_types(const std::vector<VarBase*>& vars);
void rebind_all(const std::vector<VarBase*>& vars, const std::vector<ir::Value*>& values, std::size_t first = 0);
/// Fails unless `cond` is a scalar i1.
void check_condition(const char* construct, ir::Value* cond, const std::source_location& loc);

}  // namespace detail

/// A variable that may be reassigned inside runtime loops and branches; its
/// value is carried across iterations and out of branches. Its type is fixed.
///
///   kl::Var acc = kl::zeros<kl::f32, 64>();
///   for (auto k : kl::range(0, n, 64)) acc += kl::load(x + k + kl::arange<64>());
template <class T>
class Var : public T, public detail::VarBase {
 public:
  Var(const T& init) : T(init) {
    this->home_ = nullptr;
    detail::TraceContext::current("kl::Var").live_vars().push_back(this);
  }
  /// `kl::Var b = a;`: a new variable holding a's current value; the two
  /// change independently from then on.
  Var(const Var& other) : Var(static_cast<const T&>(other)) {}
  Var& operator=(const Var& other) {
    this->value_ = other.value_;
    return *this;
  }
  ~Var() {
    if (!detail::TraceContext::active()) return;
    auto& vars = detail::TraceContext::current("kl::Var").live_vars();
    std::erase(vars, static_cast<detail::VarBase*>(this));
  }

  template <Value U>
  Var& operator=(const U& other) {
    static_assert(detail::var_type_check<T, plain_t<U>>::value);
    this->value_ = other.value();
    return *this;
  }

  ir::Value* get() const override { return this->value_; }
  void set(ir::Value* v) override { this->value_ = v; }
};

template <class T>
Var(T) -> Var<plain_t<T>>;

/// How one kl::range loop is compiled (Triton's tl.range arguments); the
/// results are the same whatever they say. Passed by name:
///   for (auto k : kl::range(0, n, 64, {.num_stages = 2, .unroll = 4}))
struct LoopOptions {
  /// Software-pipelining depth of this loop, in place of the kernel's
  /// CompileOptions::num_stages: 1 keeps its loads as they are, N > 1
  /// issues the copies of loads feeding `dot` N - 1 iterations ahead into
  /// rings of N shared slots. Unset: the kernel's.
  std::optional<int> num_stages{};
  /// Copies of the body per iteration of the loop that runs first (it steps
  /// by unroll * step); the iterations left over (fewer than `unroll`) run in
  /// a second loop with the body once. 1 to 128; 1 leaves the loop as it is.
  int unroll = 1;
};

/// A runtime loop: for (auto k : kl::range(lo, hi, step)) runs the body with
/// k = lo, lo+step, … while k < hi (step > 0). lo, hi and step are i32 values
/// or C++ integers; k is an i32. `options` pipelines or unrolls this loop.
class range {
 public:
  template <class Lo, class Hi, class Step = int>
    requires((Numeric<Lo> || Literal<Lo>) && (Numeric<Hi> || Literal<Hi>) && (Numeric<Step> || Literal<Step>))
  range(const Lo& lo, const Hi& hi, const Step& step = 1, LoopOptions options = {},
        std::source_location loc = std::source_location::current())
      : loc_(loc) {
    check_bound<Lo>();
    check_bound<Hi>();
    check_bound<Step>();
    check_options(options);
    constexpr ir::DType d = ir::DType::i32;
    bounds_ = {detail::materialize(lo, d, {}, loc), detail::materialize(hi, d, {}, loc),
               detail::materialize(step, d, {}, loc)};
  }
  range(const range&) = delete;
  range& operator=(const range&) = delete;
  ~range();

  struct sentinel {};
  class iterator {
   public:
    explicit iterator(range* r) : r_(r) {}
    Scalar<std::int32_t> operator*() const;
    iterator& operator++();
    bool operator!=(sentinel) const;

   private:
    range* r_;
  };

  iterator begin();
  sentinel end() { return {}; }

 private:
  template <class B>
  static constexpr void check_bound() {
    if constexpr (Literal<B>) {
      static_assert(std::is_integral_v<B>, "kiln: range bounds must be integers");
    } else {
      static_assert(shape_t<B>::rank == 0, "kiln: range bounds must be scalars");
      static_assert(ir::is_integer(dtype_of<B>) && ir::dtype_bits(dtype_of<B>) <= 32,
                    "kiln: range bounds must be integers of at most 32 bits (cast i64 bounds to i32)");
    }
  }
  /// Fails naming the loop's line unless num_stages >= 1 and 1 <= unroll <= 128.
  void check_options(const LoopOptions& options);
  void close();

  std::source_location loc_;
  std::vector<std::pair<std::string, ir::Attribute>> attributes_;
  std::vector<ir::Value*> bounds_;
  std::vector<detail::VarBase*> vars_;
  ir::Operation* op_ = nullptr;
  ir::Block* outer_ = nullptr;
  bool open_ = false;
  int exceptions_at_begin_ = 0;
};

/// A runtime branch on a scalar i1: runs then_fn's ops where cond is true and
/// else_fn's where it is false. If both return a value (of one type), if_
/// returns it.
template <Numeric C, class Then, class Else>
auto if_(const C& cond, Then then_fn, Else else_fn, std::source_location loc = std::source_location::current()) {
  using R = std::invoke_result_t<Then>;
  static_assert(std::is_same_v<R, std::invoke_result_t<Else>>,
                "kiln: both branches of kl::if_ must return the same type");
  detail::check_condition("if_", cond.value(), loc);
  auto& ctx = detail::TraceContext::current("if_");
  std::vector<detail::VarBase*> vars = ctx.live_vars();
  std::vector<ir::Value*> before = detail::current_values(vars);
  std::vector<ir::Type> types = detail::value_types(vars);
  constexpr bool returns_value = !std::is_void_v<R>;
  if constexpr (returns_value) types.insert(types.begin(), ir_type<R>());
  ir::Operation* op = detail::emit_op(ir::OpCode::if_, {cond.value()}, types, {}, 2, loc);
  auto trace_branch = [&](ir::Block* region, auto& fn) {
    detail::InsertionScope scope(region);
    detail::rebind_all(vars, before);
    std::vector<ir::Value*> yielded;
    if constexpr (returns_value) yielded.push_back(fn().value());
    else fn();
    for (ir::Value* v : detail::current_values(vars)) yielded.push_back(v);
    detail::emit_yield(yielded, loc);
  };
  trace_branch(op->regions[0].get(), then_fn);
  trace_branch(op->regions[1].get(), else_fn);
  detail::rebind_all(vars, op->results, returns_value ? 1 : 0);
  if constexpr (returns_value) return R(op->result(0));
}

/// A runtime branch without else.
template <Numeric C, class Then>
void if_(const C& cond, Then then_fn, std::source_location loc = std::source_location::current()) {
  if_(cond, then_fn, [] {}, loc);
}

namespace detail {
void return_if(ir::Value* cond, const std::source_location& loc);
}  // namespace detail

/// Ends the program early where `cond` (a scalar i1) is true, as `if cond:
/// return` does in a Triton kernel: the rest of the kernel runs only where
/// it is false. Only at the kernel's top level, not inside a kl::range,
/// kl::if_ or kl::while_ body.
template <Numeric C>
void return_if(const C& cond, std::source_location loc = std::source_location::current()) {
  detail::return_if(cond.value(), loc);
}

/// A runtime loop: while cond_fn() (a scalar i1) is true, run body_fn().
template <class Cond, class Body>
void while_(Cond cond_fn, Body body_fn, std::source_location loc = std::source_location::current()) {
  auto& ctx = detail::TraceContext::current("while_");
  std::vector<detail::VarBase*> vars = ctx.live_vars();
  std::vector<ir::Type> types = detail::value_types(vars);
  ir::Operation* op = detail::emit_op(ir::OpCode::while_, detail::current_values(vars), types, {}, 2, loc);
  auto enter = [&](ir::Block* region) {
    std::vector<ir::Value*> args;
    for (const ir::Type& t : types) args.push_back(ctx.function().add_argument(*region, t));
    detail::rebind_all(vars, args);
  };
  {
    ir::Block* region = op->regions[0].get();
    detail::InsertionScope scope(region);
    enter(region);
    auto cond = cond_fn();
    detail::check_condition("while_", cond.value(), loc);
    detail::emit_yield({cond.value()}, loc);
  }
  {
    ir::Block* region = op->regions[1].get();
    detail::InsertionScope scope(region);
    enter(region);
    body_fn();
    detail::emit_yield(detail::current_values(vars), loc);
  }
  detail::rebind_all(vars, op->results);
}

}  // namespace kiln
