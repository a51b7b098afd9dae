// Canonicalisation: constant folding, integer identities, shape no-ops and
// chains of shape ops, constant-condition control flow and loop-carried values
// that never change.
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

#include "kiln/ir/integer_arithmetic.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/rounding.hpp"
#include "op_traits.hpp"

namespace kiln::ir {

namespace {

using passes::ValueReplacements;

// ---- Constant values -----------------------------------------------------------

/// `x` rounded to the nearest value of the float dtype.
double round_to(DType t, double x) {
  switch (t) {
    case DType::f16: return static_cast<float>(half(round_to_odd_float(x)));
    case DType::bf16: return static_cast<float>(bfloat16(round_to_odd_float(x)));
    case DType::f32: return static_cast<float>(x);
    case DType::f8e4m3: return static_cast<float>(float8_e4m3(round_to_odd_float(x)));
    case DType::f8e5m2: return static_cast<float>(float8_e5m2(round_to_odd_float(x)));
    default: return x;
  }
}

/// int → float, rounded once: exactly through double up to 2^53; beyond that
/// only f32 and f64 (converted directly) are folded.
std::optional<double> int_to_float(DType to, std::int64_t v, bool from_unsigned) {
  const auto u = static_cast<std::uint64_t>(v);
  if (to == DType::f64) return from_unsigned ? static_cast<double>(u) : static_cast<double>(v);
  if (to == DType::f32) return from_unsigned ? static_cast<float>(u) : static_cast<float>(v);
  constexpr std::uint64_t exact = std::uint64_t{1} << 53;
  const bool fits = from_unsigned ? u < exact : (v < 0 ? 0 - u : u) < exact;
  if (!fits) return std::nullopt;
  return round_to(to, from_unsigned ? static_cast<double>(u) : static_cast<double>(v));
}

const Attribute* constant_attribute(const Value* v) {
  if (!v->def || v->def->code != OpCode::constant || v->type.is_pointer) return nullptr;
  return v->def->find_attribute("value");
}

/// The value of an integer constant (a scalar, or a tile filled with it).
std::optional<std::int64_t> int_constant(const Value* v) {
  const Attribute* a = constant_attribute(v);
  if (!a || !is_integer(v->type.dtype)) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(a)) return wrap(v->type.dtype, static_cast<std::uint64_t>(*i));
  return std::nullopt;
}

/// The value of a float constant, as the dtype holds it.
std::optional<double> float_constant(const Value* v) {
  const Attribute* a = constant_attribute(v);
  if (!a || !is_float(v->type.dtype)) return std::nullopt;
  if (const auto* d = std::get_if<double>(a)) return round_to(v->type.dtype, *d);
  if (const auto* i = std::get_if<std::int64_t>(a)) return int_to_float(v->type.dtype, *i, false);
  return std::nullopt;
}

// ---- Folding -------------------------------------------------------------------

std::optional<double> fold_float_binary(OpCode code, DType t, double a, double b) {
  switch (code) {
    case OpCode::add: return round_to(t, a + b);
    case OpCode::sub: return round_to(t, a - b);
    case OpCode::mul: return round_to(t, a * b);
    case OpCode::div: return round_to(t, a / b);
    case OpCode::rem: return round_to(t, std::fmod(a, b));
    case OpCode::minimum:
    case OpCode::maximum:
      if (std::isnan(a) || std::isnan(b)) return std::nan("");
      // min(-0, +0) is left to the target's rules.
      if (a == b && std::signbit(a) != std::signbit(b)) return std::nullopt;
      return (code == OpCode::minimum) == (a < b) ? a : b;
    default: return std::nullopt;
  }
}

bool compare(Predicate pred, double a, double b) {
  switch (pred) {
    case Predicate::eq: return a == b;
    case Predicate::ne: return a != b;
    case Predicate::lt: return a < b;
    case Predicate::le: return a <= b;
    case Predicate::gt: return a > b;
    case Predicate::ge: return a >= b;
  }
  return false;
}

std::optional<bool> fold_cmp(const Operation& op) {
  const Value* a = op.operands[0];
  const Value* b = op.operands[1];
  const std::optional<Predicate> pred = attribute_enum<Predicate>(op);
  if (!pred) return std::nullopt;
  if (auto ia = int_constant(a), ib = int_constant(b); ia && ib)
    return fold_integer_compare(*pred, a->type.dtype, *ia, *ib);
  if (auto fa = float_constant(a), fb = float_constant(b); fa && fb) return compare(*pred, *fa, *fb);
  return std::nullopt;
}

/// float → int: truncate toward zero, saturate, NaN → 0.
std::int64_t float_to_int(DType t, double x) {
  if (std::isnan(x)) return 0;
  const int width = dtype_bits(t);
  if (is_signed_int(t)) {
    const double limit = std::ldexp(1.0, width - 1);
    if (x >= limit) return wrap(t, (std::uint64_t{1} << (width - 1)) - 1);
    if (x <= -limit) return wrap(t, std::uint64_t{1} << (width - 1));
    return static_cast<std::int64_t>(std::trunc(x));
  }
  const double limit = std::ldexp(1.0, width);
  if (x >= limit) return wrap(t, ~std::uint64_t{0});
  if (x <= -1.0) return 0;
  return wrap(t, static_cast<std::uint64_t>(std::trunc(x)));
}

std::optional<Attribute> fold_cast(const Operation& op) {
  const Value* x = op.operands[0];
  const Type& to = op.result()->type;
  if (to.is_pointer) return std::nullopt;
  if (auto i = int_constant(x)) {
    if (is_bool(to.dtype)) return Attribute(std::int64_t{*i != 0});
    if (is_integer(to.dtype)) return Attribute(wrap(to.dtype, static_cast<std::uint64_t>(*i)));
    if (auto f = int_to_float(to.dtype, *i, is_unsigned_int(x->type.dtype) || is_bool(x->type.dtype)))
      return Attribute(*f);
    return std::nullopt;
  }
  if (auto f = float_constant(x)) {
    if (is_bool(to.dtype)) return Attribute(std::int64_t{*f != 0.0});  // NaN != 0
    if (is_integer(to.dtype)) return Attribute(float_to_int(to.dtype, *f));
    return Attribute(round_to(to.dtype, *f));
  }
  return std::nullopt;
}

std::optional<Attribute> fold_unary(const Operation& op) {
  const Value* x = op.operands[0];
  const DType t = x->type.dtype;
  if (auto i = int_constant(x)) {
    const std::uint64_t u = unsigned_bits(t, *i);
    switch (op.code) {
      case OpCode::neg: return Attribute(wrap(t, 0 - u));
      case OpCode::abs: return Attribute(is_signed_int(t) && *i < 0 ? wrap(t, 0 - u) : *i);
      case OpCode::not_: return Attribute(wrap(t, ~u));
      default: return std::nullopt;
    }
  }
  if (auto f = float_constant(x)) {
    switch (op.code) {
      case OpCode::neg: return Attribute(-*f);
      case OpCode::abs: return Attribute(std::fabs(*f));
      default: return std::nullopt;
    }
  }
  return std::nullopt;
}

/// The constant value of `op`'s result, when its operands are constants.
std::optional<Attribute> fold(const Operation& op) {
  switch (op.code) {
    case OpCode::add:
    case OpCode::sub:
    case OpCode::mul:
    case OpCode::div:
    case OpCode::rem:
    case OpCode::minimum:
    case OpCode::maximum:
    case OpCode::and_:
    case OpCode::or_:
    case OpCode::xor_:
    case OpCode::shl:
    case OpCode::shr:
    case OpCode::umulhi: {
      const DType t = op.result()->type.dtype;
      if (auto a = int_constant(op.operands[0]), b = int_constant(op.operands[1]); a && b)
        if (auto r = fold_integer_binary(op.code, t, *a, *b)) return Attribute(*r);
      if (auto a = float_constant(op.operands[0]), b = float_constant(op.operands[1]); a && b)
        if (auto r = fold_float_binary(op.code, t, *a, *b)) return Attribute(*r);
      return std::nullopt;
    }
    case OpCode::neg:
    case OpCode::abs:
    case OpCode::not_: return fold_unary(op);
    case OpCode::cmp:
      if (auto r = fold_cmp(op)) return Attribute(std::int64_t{*r});
      return std::nullopt;
    case OpCode::cast: return fold_cast(op);
    case OpCode::splat:
    case OpCode::broadcast:
    case OpCode::expand_dims:
    case OpCode::reshape:
    case OpCode::trans:
      // A tile filled with one value stays filled with it.
      if (const Attribute* a = constant_attribute(op.operands[0])) return *a;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// ---- Simplification to an existing value ------------------------------------

bool is_int_constant(const Value* v, std::int64_t k) {
  auto i = int_constant(v);
  return i && *i == k;
}

/// An existing value equal to `op`'s result, or null. Only integers get the
/// arithmetic identities: for floats x*0 is NaN for x = inf and x+0 turns -0 into +0.
Value* simplify_to_value(const Operation& op) {
  switch (op.code) {
    case OpCode::add:
      if (is_int_constant(op.operands[1], 0)) return op.operands[0];
      if (is_int_constant(op.operands[0], 0)) return op.operands[1];
      return nullptr;
    case OpCode::sub: return is_int_constant(op.operands[1], 0) ? op.operands[0] : nullptr;
    case OpCode::mul:
      if (is_int_constant(op.operands[1], 1)) return op.operands[0];
      if (is_int_constant(op.operands[0], 1)) return op.operands[1];
      return nullptr;
    case OpCode::broadcast:
    case OpCode::reshape: return op.operands[0]->type == op.result()->type ? op.operands[0] : nullptr;
    case OpCode::trans: {
      const auto& order = op.ints_attribute("order");
      for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i] != static_cast<std::int64_t>(i)) return nullptr;
      return op.operands[0];
    }
    case OpCode::select:
      if (op.operands[1] == op.operands[2]) return op.operands[1];
      if (auto c = int_constant(op.operands[0])) return *c ? op.operands[1] : op.operands[2];
      return nullptr;
    case OpCode::multiple_of: {
      // A constant that keeps the promise is the constant (the analysis sees
      // its divisors); one that breaks it stays, for the devices to report.
      const auto c = int_constant(op.operands[0]);
      return c && static_cast<std::uint64_t>(*c) % static_cast<std::uint64_t>(op.int_attribute("value")) == 0
                 ? op.operands[0]
                 : nullptr;
    }
    case OpCode::max_contiguous: return op.int_attribute("value") == 1 ? op.operands[0] : nullptr;  // runs of one
    default: return nullptr;
  }
}

/// x*0 and 0*x for integers: a zero of the result type.
bool is_int_multiply_by_zero(const Operation& op) {
  return op.code == OpCode::mul && (is_int_constant(op.operands[0], 0) || is_int_constant(op.operands[1], 0));
}

void turn_into_constant(Operation& op, Attribute value) {
  op.code = OpCode::constant;
  op.operands.clear();
  op.regions.clear();
  op.attributes.clear();
  op.attributes.emplace_back("value", std::move(value));
}

// ---- Chains of shape ops ---------------------------------------------------------

/// The order of trans(trans(x, inner), outer) as one trans of x: result axis
/// i is axis outer[i] of the inner result, which is axis inner[outer[i]] of x.
std::vector<std::int64_t> compose_orders(const std::vector<std::int64_t>& inner,
                                         const std::vector<std::int64_t>& outer) {
  std::vector<std::int64_t> order(outer.size());
  for (std::size_t i = 0; i < outer.size(); ++i) order[i] = inner[static_cast<std::size_t>(outer[i])];
  return order;
}

/// A trans that keeps the axes longer than 1 in their order only moves
/// size-1 axes: the elements keep their row-major order, so it is a reshape.
bool trans_moves_only_unit_axes(const Operation& op) {
  const Shape& shape = op.operands[0]->type.shape;
  std::int64_t last = -1;
  for (std::int64_t axis : op.ints_attribute("order")) {
    if (shape[static_cast<std::size_t>(axis)] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

/// Folds `op` into the shape op defining its operand, or turns a trans into a
/// reshape; true if `op` changed. reshape(reshape(x)) and
/// reshape(expand_dims(x)) read x directly (both keep the row-major order);
/// trans(trans(x)) becomes one trans of x.
bool fold_shape_chain(Operation& op, const ValueReplacements& replacements) {
  if (op.code != OpCode::reshape && op.code != OpCode::trans) return false;
  const Operation* inner = op.operands[0]->def;
  if (op.code == OpCode::reshape && inner && (inner->code == OpCode::reshape || inner->code == OpCode::expand_dims)) {
    op.operands[0] = replacements.resolve(inner->operands[0]);
    return true;
  }
  if (op.code != OpCode::trans) return false;
  if (inner && inner->code == OpCode::trans) {
    auto order = compose_orders(inner->ints_attribute("order"), op.ints_attribute("order"));
    op.operands[0] = replacements.resolve(inner->operands[0]);
    op.set_attribute("order", std::move(order));
    return true;
  }
  if (trans_moves_only_unit_axes(op)) {
    op.code = OpCode::reshape;
    op.attributes.clear();
    return true;
  }
  return false;
}

// ---- Region ops ------------------------------------------------------------------

void renumber(std::vector<Value*>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) values[i]->index = static_cast<int>(i);
}

/// The loop's first iteration does not run: lo >= hi for constant bounds.
bool for_runs_zero_times(const Operation& op) {
  auto lo = int_constant(op.operands[0]), hi = int_constant(op.operands[1]);
  if (!lo || !hi) return false;
  const DType t = op.operands[0]->type.dtype;
  return is_signed_int(t) ? *lo >= *hi : unsigned_bits(t, *lo) >= unsigned_bits(t, *hi);
}

class Canonicalizer {
 public:
  explicit Canonicalizer(Function& fn) : fn_(fn) {}

  bool run_once() {
    uses_ = passes::count_uses(fn_.body);
    changed_ = false;
    run_block(fn_.body);
    replacements_.apply(fn_.body);
    return changed_;
  }

 private:
  void run_block(Block& block) {
    for (std::size_t i = 0; i < block.ops.size();) {
      Operation& op = *block.ops[i];
      replacements_.remap_operands(op);
      if (rewrite(block, i)) {
        changed_ = true;
        continue;  // the op is gone; whatever now sits at `i` is visited next
      }
      for (auto& region : op.regions) run_block(*region);
      ++i;
    }
  }

  /// Rewrites the op at `index` of `block`; true if it was removed.
  bool rewrite(Block& block, std::size_t index) {
    Operation& op = *block.ops[index];
    if (op.code == OpCode::constant) return false;
    if (auto value = fold(op)) {
      turn_into_constant(op, std::move(*value));
      changed_ = true;
      return false;
    }
    if (is_int_multiply_by_zero(op)) {
      turn_into_constant(op, Attribute(std::int64_t{0}));
      changed_ = true;
      return false;
    }
    if (Value* same = simplify_to_value(op)) {
      replacements_.add(op.result(), same);
      passes::erase_op(block, index);
      return true;
    }
    if (fold_shape_chain(op, replacements_)) {
      changed_ = true;
      return false;
    }
    switch (op.code) {
      case OpCode::if_:
        if (auto cond = int_constant(op.operands[0])) {
          inline_region(block, index, *op.regions[*cond ? 0 : 1]);
          return true;
        }
        drop_unused_if_results(op);
        return false;
      case OpCode::for_:
        if (for_runs_zero_times(op)) {
          for (std::size_t i = 0; i < op.results.size(); ++i) replacements_.add(op.results[i], op.operands[3 + i]);
          passes::erase_op(block, index);
          return true;
        }
        drop_unchanged_carried(op, 3, {0}, 0, 1);
        return false;
      case OpCode::while_: drop_unchanged_carried(op, 0, {0, 1}, 1, 0); return false;
      default: return false;
    }
  }

  /// Moves `region`'s ops in front of the op at `index` and replaces the op's
  /// results by what the region yields.
  void inline_region(Block& block, std::size_t index, Block& region) {
    std::unique_ptr<Operation> op = std::move(block.ops[index]);
    passes::erase_op(block, index);
    if (const Operation* yield = region.terminator()) {
      for (std::size_t i = 0; i < op->results.size(); ++i)
        replacements_.add(op->results[i], replacements_.resolve(yield->operands[i]));
      region.ops.pop_back();
    }
    for (auto& moved : region.ops) moved->parent = &block;
    block.ops.insert(block.ops.begin() + static_cast<long>(index), std::make_move_iterator(region.ops.begin()),
                     std::make_move_iterator(region.ops.end()));
  }

  void drop_unused_if_results(Operation& op) {
    for (std::size_t i = op.results.size(); i-- > 0;) {
      if (uses_[op.results[i]] != 0) continue;
      op.results.erase(op.results.begin() + static_cast<long>(i));
      for (auto& region : op.regions)
        if (Operation* yield = region->terminator())
          yield->operands.erase(yield->operands.begin() + static_cast<long>(i));
      changed_ = true;
    }
    renumber(op.results);
  }

  /// Carried value i never changes when the body yields its own block argument
  /// back: the result and every block argument for it are the init.
  /// `first_init`: operand index of the first init; `arg_regions`: regions
  /// whose arguments include the carried values, from `arg_offset`;
  /// `body`: the region yielding the next values.
  void drop_unchanged_carried(Operation& op, std::size_t first_init, std::initializer_list<std::size_t> arg_regions,
                              std::size_t body, std::size_t arg_offset) {
    Block& body_block = *op.regions[body];
    Operation* yield = body_block.terminator();
    if (!yield) return;
    for (std::size_t i = op.results.size(); i-- > 0;) {
      if (replacements_.resolve(yield->operands[i]) != body_block.arguments[arg_offset + i]) continue;
      Value* init = op.operands[first_init + i];
      replacements_.add(op.results[i], init);
      for (std::size_t r : arg_regions) {
        auto& args = op.regions[r]->arguments;
        replacements_.add(args[arg_offset + i], init);
        args.erase(args.begin() + static_cast<long>(arg_offset + i));
        renumber(args);
      }
      yield->operands.erase(yield->operands.begin() + static_cast<long>(i));
      op.operands.erase(op.operands.begin() + static_cast<long>(first_init + i));
      op.results.erase(op.results.begin() + static_cast<long>(i));
      changed_ = true;
    }
    renumber(op.results);
  }

  Function& fn_;
  ValueReplacements replacements_;
  std::unordered_map<const Value*, int> uses_;
  bool changed_ = false;
};

}  // namespace

bool canonicalize(Function& fn) {
  bool changed = false;
  while (Canonicalizer(fn).run_once()) changed = true;
  return changed;
}

}  // namespace kiln::ir
