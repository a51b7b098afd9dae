// Axis analysis: contiguity, divisibility and constancy of every integer and
// pointer value, one forward walk with a fixed point for loop-carried values.
// The rules follow Triton's AxisInfo; each says in a line why it holds.
#include "kiln/lowering/axis_analysis.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "kiln/ir/integer_arithmetic.hpp"
#include "kiln/ir/op_schema.hpp"

namespace kiln::lowering {

namespace {

using ir::DType;
using ir::fold_integer_binary;
using ir::fold_integer_compare;
using ir::OpCode;
using ir::Operation;
using ir::Value;
using ir::wrap;

// Divisibility of 0 (it is a multiple of everything); kept below 2^63 so
// products of divisors saturate instead of overflowing.
constexpr std::int64_t kMaxDivisor = std::int64_t{1} << 62;

std::int64_t power_of_two_divisor(std::int64_t value) {
  if (value == 0) return kMaxDivisor;
  return std::min(kMaxDivisor, std::int64_t{1} << std::countr_zero(static_cast<std::uint64_t>(value)));
}

std::int64_t multiply_divisors(std::int64_t a, std::int64_t b) {
  const int bits = std::countr_zero(static_cast<std::uint64_t>(a)) + std::countr_zero(static_cast<std::uint64_t>(b));
  return bits >= 62 ? kMaxDivisor : std::int64_t{1} << bits;
}

bool tracked(const ir::Type& type) { return type.is_pointer || ir::is_integer(type.dtype); }

/// The value's shape, a scalar counting as [1].
std::vector<std::int64_t> shape_of(const Value& value) {
  return value.type.is_scalar() ? std::vector<std::int64_t>{1} : value.type.shape;
}

AxisInfo unknown(std::size_t rank) {
  return {std::vector<std::int64_t>(rank, 1), std::vector<std::int64_t>(rank, 1), std::vector<std::int64_t>(rank, 1),
          std::nullopt};
}

AxisInfo constant_info(const std::vector<std::int64_t>& shape, std::int64_t value) {
  return {std::vector<std::int64_t>(shape.size(), 1),
          std::vector<std::int64_t>(shape.size(), power_of_two_divisor(value)), shape, value};
}

/// What holds for both: the smaller power of two of each property.
AxisInfo meet(const AxisInfo& a, const AxisInfo& b) {
  AxisInfo result = a;
  for (int d = 0; d < a.rank(); ++d) {
    result.contiguity[d] = std::min(a.contiguity[d], b.contiguity[d]);
    result.divisibility[d] = std::min(a.divisibility[d], b.divisibility[d]);
    result.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  if (a.constant != b.constant) result.constant.reset();
  return result;
}

/// A power of two dividing every element (not only the first of each run).
std::int64_t element_divisibility(const AxisInfo& info) {
  if (info.constant) return power_of_two_divisor(*info.constant);
  std::int64_t divisor = 1;
  for (int d = 0; d < info.rank(); ++d)
    if (info.contiguity[d] == 1) divisor = std::max(divisor, info.divisibility[d]);
  return divisor;
}

/// The divisibility of the first element of each run of `run` along d: when
/// the runs are shorter than the operand's own, they start inside its runs.
std::int64_t divisibility_at_runs(const AxisInfo& info, int d, std::int64_t run) {
  return info.contiguity[d] > run ? std::min(info.divisibility[d], run) : info.divisibility[d];
}

bool is_constant(const AxisInfo& info, std::int64_t value) { return info.constant && *info.constant == value; }

/// A value constant along d in blocks of `block` whose first elements are
/// multiples of `divisor`, divided (or compared) by one constant over those
/// blocks: quotients stay equal within aligned blocks of their gcd.
std::int64_t aligned_block(const AxisInfo& runs, const AxisInfo& bound, int d) {
  return std::min({runs.contiguity[d], runs.divisibility[d], bound.divisibility[d], bound.constancy[d]});
}

AxisInfo add_like(const AxisInfo& a, const AxisInfo& b, bool subtract, std::int64_t b_scale) {
  AxisInfo result = unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    // Contiguous plus constant is contiguous; constant minus contiguous is not.
    std::int64_t run = std::min(a.contiguity[d], b.constancy[d]);
    if (!subtract) run = std::max(run, std::min(a.constancy[d], b.contiguity[d]));
    result.contiguity[d] = run;
    result.divisibility[d] =
        std::min(divisibility_at_runs(a, d, run), multiply_divisors(divisibility_at_runs(b, d, run), b_scale));
    result.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  return result;
}

AxisInfo multiply(const AxisInfo& a, const AxisInfo& b) {
  AxisInfo result = unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    // x * 1 keeps x's runs; any other factor spreads them apart.
    result.contiguity[d] = std::max(is_constant(b, 1) ? a.contiguity[d] : 1, is_constant(a, 1) ? b.contiguity[d] : 1);
    // In a run [2^n, 2^n + 1, …] only the first element has the divisor.
    const std::int64_t da = a.contiguity[d] > 1 && !is_constant(b, 1) ? 1 : a.divisibility[d];
    const std::int64_t db = b.contiguity[d] > 1 && !is_constant(a, 1) ? 1 : b.divisibility[d];
    result.divisibility[d] = multiply_divisors(da, db);
    result.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  return result;
}

/// x / b and x >> log2(b) for a non-negative x.
AxisInfo divide(const AxisInfo& a, const AxisInfo& b) {
  AxisInfo result = unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    result.contiguity[d] = is_constant(b, 1) ? a.contiguity[d] : 1;
    // Blocks aligned to a power of two dividing the divisor never straddle a
    // multiple of it, so their quotients are equal.
    result.constancy[d] = std::max(std::min(a.constancy[d], b.constancy[d]), aligned_block(a, b, d));
    if (is_constant(a, 0) || is_constant(b, 1)) result.divisibility[d] = a.divisibility[d];
    else if (b.constant && *b.constant > 0 && std::has_single_bit(static_cast<std::uint64_t>(*b.constant)) &&
             a.contiguity[d] == 1 && a.divisibility[d] >= *b.constant)
      result.divisibility[d] = a.divisibility[d] / *b.constant;  // an exact division
  }
  return result;
}

/// x % b for a non-negative x (x & (2^k - 1) for any x).
AxisInfo remainder(const AxisInfo& a, const AxisInfo& b, const std::vector<std::int64_t>& shape) {
  if (is_constant(b, 1)) return constant_info(shape, 0);
  AxisInfo result = unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    // With x = g·k and b = g·p, x mod b is a multiple of g (g their common
    // power of two), so a run aligned to g never wraps around.
    const std::int64_t common = std::min(a.divisibility[d], b.divisibility[d]);
    const std::int64_t run = std::min({a.contiguity[d], common, b.constancy[d]});
    result.contiguity[d] = run;
    result.divisibility[d] = run < a.contiguity[d] ? std::min(common, run) : common;
    result.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  return result;
}

/// Bitwise and/or/xor, and `and` with a low mask 2^k - 1 (x mod 2^k) or a
/// high mask -2^k (x rounded down to a multiple of 2^k).
AxisInfo bitwise(OpCode code, const AxisInfo& a, const AxisInfo& b, DType type,
                 const std::vector<std::int64_t>& shape) {
  if (code == OpCode::and_ && b.constant) {
    const int width = ir::dtype_bits(type);
    const std::uint64_t ones = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
    const std::uint64_t mask = static_cast<std::uint64_t>(*b.constant) & ones;
    const std::uint64_t inverse = ~mask & ones;
    if (mask == ones) return a;
    if ((mask & (mask + 1)) == 0 && std::popcount(mask) < 62)  // x & (2^k - 1) == x mod 2^k, for any sign
      return remainder(a, constant_info(shape, static_cast<std::int64_t>(mask + 1)), shape);
    if ((inverse & (inverse + 1)) == 0 && std::popcount(inverse) < 62) {
      // x & -2^k rounds x down to a multiple of 2^k: like x / 2^k, but scaled back.
      const auto step = static_cast<std::int64_t>(inverse + 1);
      AxisInfo result = divide(a, constant_info(shape, step));
      for (int d = 0; d < a.rank(); ++d) {
        result.contiguity[d] = 1;
        result.divisibility[d] = std::max(step, a.contiguity[d] == 1 ? a.divisibility[d] : 1);
      }
      return result;
    }
  }
  if (code == OpCode::or_ && b.constant && *b.constant >= 0 && *b.constant < element_divisibility(a) &&
      std::all_of(a.contiguity.begin(), a.contiguity.end(), [](std::int64_t c) { return c == 1; }))
    return add_like(a, b, false, 1);  // the bits are disjoint: x | m == x + m
  AxisInfo result = unknown(a.rank());
  const std::int64_t da = element_divisibility(a), db = element_divisibility(b);
  for (int d = 0; d < a.rank(); ++d) {
    // Trailing zero bits common to both survive and/or/xor; `and` keeps either's.
    result.divisibility[d] = code == OpCode::and_ ? std::max(da, db) : std::min(da, db);
    result.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  return result;
}

AxisInfo compare(std::optional<ir::Predicate> pred, const AxisInfo& a, const AxisInfo& b) {
  using ir::Predicate;
  AxisInfo result = unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    std::int64_t constancy = std::min(a.constancy[d], b.constancy[d]);
    // A run compared with a bound flips only where the run crosses the bound;
    // lt/ge flip between bound - 1 and bound, aligned like the bound, while
    // le/gt flip after the bound, at an unaligned place.
    if (pred == Predicate::lt || pred == Predicate::ge) constancy = std::max(constancy, aligned_block(a, b, d));
    if (pred == Predicate::gt || pred == Predicate::le) constancy = std::max(constancy, aligned_block(b, a, d));
    result.constancy[d] = constancy;
  }
  return result;
}

AxisInfo select(const AxisInfo& cond, const AxisInfo& a, const AxisInfo& b) {
  if (cond.constant) return *cond.constant ? a : b;
  AxisInfo result = unknown(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    // Where the condition is constant the result is a piece of one operand.
    const std::int64_t run = std::min({cond.constancy[d], a.contiguity[d], b.contiguity[d]});
    result.contiguity[d] = run;
    result.divisibility[d] = std::min(divisibility_at_runs(a, d, run), divisibility_at_runs(b, d, run));
    result.constancy[d] = std::min({cond.constancy[d], a.constancy[d], b.constancy[d]});
  }
  if (a.constant && a.constant == b.constant) result.constant = a.constant;
  return result;
}

AxisInfo reshape(const AxisInfo& x, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to) {
  if (x.constant) return constant_info(to, *x.constant);
  // Only dimensions of size 1 inserted or removed: the others keep their facts.
  std::vector<int> kept_from, kept_to;
  for (std::size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1) kept_from.push_back(static_cast<int>(d));
  for (std::size_t d = 0; d < to.size(); ++d)
    if (to[d] != 1) kept_to.push_back(static_cast<int>(d));
  AxisInfo result = unknown(to.size());
  const std::int64_t every = element_divisibility(x);
  std::fill(result.divisibility.begin(), result.divisibility.end(), every);
  bool same = kept_from.size() == kept_to.size();
  for (std::size_t i = 0; same && i < kept_from.size(); ++i) same = from[kept_from[i]] == to[kept_to[i]];
  if (same) {
    for (std::size_t i = 0; i < kept_from.size(); ++i) {
      result.contiguity[kept_to[i]] = x.contiguity[kept_from[i]];
      result.divisibility[kept_to[i]] = x.divisibility[kept_from[i]];
      result.constancy[kept_to[i]] = x.constancy[kept_from[i]];
    }
    return result;
  }
  // Otherwise only the fastest dimension is followed: row-major order keeps
  // runs along it, cut at the new row length.
  const std::size_t last_from = from.size() - 1, last_to = to.size() - 1;
  const std::int64_t row = to[last_to];
  result.contiguity[last_to] = std::min(x.contiguity[last_from], row);
  result.divisibility[last_to] = std::max(every, divisibility_at_runs(x, static_cast<int>(last_from), row));
  result.constancy[last_to] = std::min(x.constancy[last_from], row);
  return result;
}

class AxisAnalysis {
 public:
  explicit AxisAnalysis(AxisInfoMap& infos) : infos_(infos) {}

  void run_block(const ir::Block& block) {
    for (const auto& op : block.ops) run_op(*op);
  }

 private:
  const AxisInfo* info(const Value* value) const { return infos_.find(*value); }

  void set_unknown(const Value& value) {
    if (tracked(value.type)) infos_.set(value, unknown(shape_of(value).size()));
  }

  /// Sets `value`'s info; a known constant is wrapped to the type's width and
  /// fixes the other facts (pointers carry no constant).
  void set(const Value& value, AxisInfo result) {
    if (!tracked(value.type)) return;
    if (result.constant) {
      if (value.type.is_pointer) {
        result.constant.reset();
      } else {
        result.constant = wrap(value.type.dtype, static_cast<std::uint64_t>(*result.constant));
        const std::int64_t divisor = power_of_two_divisor(*result.constant);
        result.contiguity.assign(result.rank(), 1);
        result.divisibility.assign(result.rank(), divisor);
        result.constancy = shape_of(value);
      }
    }
    infos_.set(value, std::move(result));
  }

  void run_op(const Operation& op) {
    switch (op.code) {
      case OpCode::for_: return run_for(op);
      case OpCode::while_: return run_while(op);
      case OpCode::if_: return run_if(op);
      default: break;
    }
    // Region arguments of reduce/scan combine functions: anything.
    for (const auto& region : op.regions) {
      for (const Value* arg : region->arguments) set_unknown(*arg);
      run_block(*region);
    }
    for (const Value* result : op.results) set_unknown(*result);
    if (op.results.empty() || !tracked(op.result()->type)) return;
    if (op.code == OpCode::split) {
      if (const AxisInfo* x = info(op.operands[0])) {
        for (const Value* result : op.results) set(*result, split_half(*x, *result));
      }
      return;
    }
    if (auto result = visit(op)) set(*op.result(), std::move(*result));
  }

  static AxisInfo split_half(const AxisInfo& x, const Value& result) {
    if (result.type.is_scalar()) return {{1}, {element_divisibility(x)}, {1}, x.constant};
    AxisInfo half = x;
    half.contiguity.pop_back();
    half.divisibility.pop_back();
    half.constancy.pop_back();
    return half;
  }

  /// The infos of an op's operands, null where unknown.
  struct Operands {
    std::vector<const AxisInfo*> infos;
    /// The first `n` are known.
    bool known(std::size_t n) const {
      return infos.size() >= n && std::all_of(infos.begin(), infos.begin() + n, [](const AxisInfo* i) { return i; });
    }
    const AxisInfo& operator[](std::size_t i) const { return *infos[i]; }
  };

  /// The rule for a single-result op, or nullopt when its operands are not
  /// all known or no rule knows more than nothing; one visitor per family.
  std::optional<AxisInfo> visit(const Operation& op) const {
    Operands in;
    for (const Value* operand : op.operands) in.infos.push_back(info(operand));
    switch (ir::family_of(op.code)) {
      case ir::OpFamily::creation: return visit_creation(op);
      case ir::OpFamily::shape: return visit_shape(op, in);
      case ir::OpFamily::rearrange: return visit_rearrange(op, in);
      case ir::OpFamily::elementwise: return visit_elementwise(op, in);
      case ir::OpFamily::cast:
        if (!in.known(1)) return std::nullopt;
        return cast(in[0], *op.operands[0], *op.result(), op.code == OpCode::bitcast);
      case ir::OpFamily::memory:
        if (op.code != OpCode::addptr || !in.known(2)) return std::nullopt;
        return add_like(in[0], in[1], false, ir::dtype_bytes(op.result()->type.dtype));
      case ir::OpFamily::hint: {
        const AxisInfo x = in.known(1) ? in[0] : unknown(shape_of(*op.result()).size());
        if (op.code == OpCode::max_contiguous) return max_contiguous(x, op.int_attribute("value"));
        const ir::Attribute* group = op.find_attribute("group");
        return multiple_of(x, op.int_attribute("value"), group ? std::get<std::int64_t>(*group) : 1);
      }
      case ir::OpFamily::atomic:
      case ir::OpFamily::dot:
      case ir::OpFamily::reduce:
      case ir::OpFamily::scan:
      case ir::OpFamily::control:
      case ir::OpFamily::terminator:
      case ir::OpFamily::debug:
      case ir::OpFamily::shared_buffer:
      case ir::OpFamily::inline_asm: return std::nullopt;
    }
    return std::nullopt;
  }

  /// The user's word that every element is a multiple of `divisor` (the
  /// devices that check hints fault otherwise): then no two neighbours are
  /// consecutive unless the divisor is 1, and each element is its own run.
  /// With a group, only the first element of each aligned group along the
  /// last dimension is promised: runs as long as the group (or longer) start
  /// at such elements, so they gain the divisor; shorter runs learn nothing.
  static AxisInfo multiple_of(const AxisInfo& x, std::int64_t divisor, std::int64_t group) {
    if (divisor == 1) return x;
    AxisInfo result = x;
    if (group > 1) {
      const int last = x.rank() - 1;
      if (x.contiguity[last] >= group) result.divisibility[last] = std::max(x.divisibility[last], divisor);
      return result;
    }
    const std::int64_t known = element_divisibility(x);
    result.contiguity.assign(x.rank(), 1);
    result.divisibility.assign(x.rank(), std::max(known, divisor));
    return result;
  }

  /// The user's word that along the last dimension the values come in
  /// aligned runs of `run` consecutive integers (checked like multiple_of).
  /// Where the known runs are longer they stay; else the divisibility of
  /// the run starts stays, as every `run`-th element starts a known run too.
  static AxisInfo max_contiguous(const AxisInfo& x, std::int64_t run) {
    AxisInfo result = x;
    const int last = x.rank() - 1;
    if (run <= x.contiguity[last]) return result;
    result.contiguity[last] = run;
    result.constancy[last] = 1;
    result.constant.reset();
    return result;
  }

  /// constant and arange; the grid queries are unknown.
  static std::optional<AxisInfo> visit_creation(const Operation& op) {
    const std::vector<std::int64_t> shape = shape_of(*op.result());
    if (op.code == OpCode::constant) {
      const auto* value = std::get_if<std::int64_t>(op.find_attribute("value"));
      if (!value) return std::nullopt;
      return constant_info(shape, *value);
    }
    if (op.code != OpCode::arange) return std::nullopt;
    const std::int64_t start = op.int_attribute("start");
    return AxisInfo{
        {shape[0]}, {power_of_two_divisor(start)}, {1}, shape[0] == 1 ? std::optional(start) : std::nullopt};
  }

  /// splat, broadcast, expand_dims.
  static std::optional<AxisInfo> visit_shape(const Operation& op, const Operands& in) {
    if (!in.known(1)) return std::nullopt;
    const std::vector<std::int64_t> shape = shape_of(*op.result());
    const std::size_t rank = shape.size();
    if (op.code == OpCode::splat)
      return AxisInfo{std::vector<std::int64_t>(rank, 1), std::vector<std::int64_t>(rank, element_divisibility(in[0])),
                      shape, in[0].constant};
    if (op.code == OpCode::broadcast) {
      AxisInfo x = in[0];
      const std::vector<std::int64_t> from = shape_of(*op.operands[0]);
      for (std::size_t d = 0; d < rank; ++d)
        if (from[d] == 1 && shape[d] != 1) {
          x.contiguity[d] = 1;
          x.divisibility[d] = element_divisibility(in[0]);
          x.constancy[d] = shape[d];
        }
      return x;
    }
    const auto axis = static_cast<std::size_t>(op.int_attribute("axis"));
    // A scalar's [1] is only a stand-in: expanding it gives shape [1].
    AxisInfo x = op.operands[0]->type.is_scalar() ? AxisInfo{{}, {}, {}, in[0].constant} : in[0];
    x.contiguity.insert(x.contiguity.begin() + axis, 1);
    x.divisibility.insert(x.divisibility.begin() + axis, element_divisibility(in[0]));
    x.constancy.insert(x.constancy.begin() + axis, 1);
    return x;
  }

  /// reshape, trans, join (split has two results: run_op).
  static std::optional<AxisInfo> visit_rearrange(const Operation& op, const Operands& in) {
    const std::vector<std::int64_t> shape = shape_of(*op.result());
    if (op.code == OpCode::reshape) {
      if (!in.known(1)) return std::nullopt;
      return reshape(in[0], shape_of(*op.operands[0]), shape);
    }
    if (op.code == OpCode::trans) {
      if (!in.known(1)) return std::nullopt;
      AxisInfo x = unknown(shape.size());
      x.constant = in[0].constant;
      const auto& order = op.ints_attribute("order");
      for (std::size_t d = 0; d < shape.size(); ++d) {
        x.contiguity[d] = in[0].contiguity[order[d]];
        x.divisibility[d] = in[0].divisibility[order[d]];
        x.constancy[d] = in[0].constancy[order[d]];
      }
      return x;
    }
    if (op.code != OpCode::join || !in.known(2)) return std::nullopt;
    AxisInfo x = meet(in[0], in[1]);
    if (op.operands[0]->type.is_scalar()) x = {{}, {}, {}, x.constant};
    x.contiguity.push_back(1);
    x.divisibility.push_back(std::min(element_divisibility(in[0]), element_divisibility(in[1])));
    x.constancy.push_back(x.constant ? 2 : 1);
    return x;
  }

  /// select, the unaries that keep constancy (neg, abs, not) and the integer
  /// binaries; the float math is unknown.
  static std::optional<AxisInfo> visit_elementwise(const Operation& op, const Operands& in) {
    if (op.code == OpCode::select) {
      if (!in.known(3)) return std::nullopt;
      return select(in[0], in[1], in[2]);
    }
    if (op.code == OpCode::neg || op.code == OpCode::abs || op.code == OpCode::not_) {
      if (!in.known(1)) return std::nullopt;
      const std::size_t rank = shape_of(*op.result()).size();
      AxisInfo x = unknown(rank);
      x.constancy = in[0].constancy;
      if (op.code != OpCode::not_) x.divisibility.assign(rank, element_divisibility(in[0]));
      if (in[0].constant) {
        const std::int64_t v = *in[0].constant;
        const std::int64_t negated = wrap(op.operands[0]->type.dtype, 0 - static_cast<std::uint64_t>(v));
        x.constant = op.code == OpCode::not_ ? ~v : op.code == OpCode::neg || v < 0 ? negated : v;
      }
      return x;
    }
    if (op.operands.size() != 2 || !in.known(2)) return std::nullopt;
    return visit_binary(op, in[0], in[1]);
  }

  static std::optional<AxisInfo> visit_binary(const Operation& op, const AxisInfo& a, const AxisInfo& b) {
    const std::vector<std::int64_t> shape = shape_of(*op.result());
    const DType dtype = op.operands[0]->type.dtype;
    AxisInfo x = unknown(shape.size());
    switch (op.code) {
      case OpCode::add: x = add_like(a, b, false, 1); break;
      case OpCode::sub: x = add_like(a, b, true, 1); break;
      case OpCode::mul: x = multiply(a, b); break;
      case OpCode::div:
        if (is_constant(b, 0)) return std::nullopt;
        x = divide(a, b);
        break;
      case OpCode::rem:
        if (is_constant(b, 0)) return std::nullopt;
        x = remainder(a, b, shape);
        break;
      case OpCode::shl:
      case OpCode::shr: x = shift(op.code, a, b, dtype, shape); break;
      case OpCode::and_:
      case OpCode::or_:
      case OpCode::xor_:
        // The constant mask may be either operand.
        x = b.constant || !a.constant ? bitwise(op.code, a, b, dtype, shape) : bitwise(op.code, b, a, dtype, shape);
        break;
      case OpCode::cmp: x = compare(ir::attribute_enum<ir::Predicate>(op), a, b); break;
      case OpCode::minimum:
      case OpCode::maximum:
        for (std::size_t d = 0; d < shape.size(); ++d) {
          x.divisibility[d] = std::min(element_divisibility(a), element_divisibility(b));
          x.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
        }
        break;
      case OpCode::umulhi:
        for (std::size_t d = 0; d < shape.size(); ++d) x.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
        break;
      default: return std::nullopt;
    }
    if (a.constant && b.constant) {
      if (op.code != OpCode::cmp) x.constant = fold_integer_binary(op.code, dtype, *a.constant, *b.constant);
      else if (const std::optional<ir::Predicate> pred = ir::attribute_enum<ir::Predicate>(op))
        x.constant = fold_integer_compare(*pred, dtype, *a.constant, *b.constant);
    }
    return x;
  }

  static AxisInfo shift(OpCode code, const AxisInfo& a, const AxisInfo& b, DType type,
                        const std::vector<std::int64_t>& shape) {
    const int width = ir::dtype_bits(type);
    if (!b.constant || *b.constant < 0 || *b.constant >= std::min(width, 62)) {
      AxisInfo x = unknown(a.rank());
      for (int d = 0; d < a.rank(); ++d) {
        x.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
        // x << s is a multiple of whatever x is.
        if (code == OpCode::shl) x.divisibility[d] = element_divisibility(a);
      }
      return x;
    }
    const std::int64_t factor = std::int64_t{1} << *b.constant;
    if (code == OpCode::shr) return divide(a, constant_info(shape, factor));
    return multiply(a, constant_info(shape, factor));
  }

  static AxisInfo cast(const AxisInfo& x, const Value& from, const Value& to, bool bits_only) {
    const ir::Type& source = from.type;
    const ir::Type& target = to.type;
    if (!tracked(source)) return unknown(x.rank());
    if (source.is_pointer || target.is_pointer) {
      // Addresses are kept; a step of one element is one byte only for bytes.
      const int source_step = source.is_pointer ? ir::dtype_bytes(source.dtype) : 1;
      const int target_step = target.is_pointer ? ir::dtype_bytes(target.dtype) : 1;
      AxisInfo result = x;
      result.constant.reset();
      if (source_step != 1 || target_step != 1) result.contiguity.assign(x.rank(), 1);
      return result;
    }
    if (ir::is_bool(target.dtype) && !bits_only) {
      AxisInfo result = unknown(x.rank());
      result.constancy = x.constancy;
      if (x.constant) result.constant = *x.constant != 0;
      return result;
    }
    // Integer widening and narrowing keep runs of (non-negative, in-range)
    // indices and their low zero bits.
    return x;
  }

  void run_for(const Operation& op) {
    const ir::Block& body = *op.regions[0];
    const AxisInfo* lo = info(op.operands[0]);
    const AxisInfo* step = info(op.operands[2]);
    if (lo && step) {
      infos_.set(*body.arguments[0],
                 {{1}, {std::min(element_divisibility(*lo), element_divisibility(*step))}, {1}, std::nullopt});
    } else {
      set_unknown(*body.arguments[0]);
    }
    const std::vector<const Value*> inits(op.operands.begin() + 3, op.operands.end());
    const std::vector<const Value*> carried(body.arguments.begin() + 1, body.arguments.end());
    run_loop(op, inits, {&body}, {carried}, body);
  }

  void run_while(const Operation& op) {
    const std::vector<const Value*> inits(op.operands.begin(), op.operands.end());
    const std::vector<const Value*> before(op.regions[0]->arguments.begin(), op.regions[0]->arguments.end());
    const std::vector<const Value*> after(op.regions[1]->arguments.begin(), op.regions[1]->arguments.end());
    run_loop(op, inits, {op.regions[0].get(), op.regions[1].get()}, {before, after}, *op.regions[1]);
  }

  /// Iterates the loop regions from the initial values until the meet of the
  /// carried values and the yielded next values stops changing. Every meet
  /// only lowers powers of two, so this ends; the result holds on entry and
  /// after every iteration.
  void run_loop(const Operation& op, const std::vector<const Value*>& inits,
                const std::vector<const ir::Block*>& regions, const std::vector<std::vector<const Value*>>& arguments,
                const ir::Block& next_block) {
    std::vector<std::optional<AxisInfo>> carried;
    for (const Value* init : inits) carried.push_back(info(init) ? std::optional(*info(init)) : std::nullopt);
    while (true) {
      for (const auto& args : arguments)
        for (std::size_t i = 0; i < args.size(); ++i) {
          if (carried[i]) set(*args[i], *carried[i]);
          else set_unknown(*args[i]);
        }
      for (const ir::Block* region : regions) run_block(*region);
      const Operation* yield = next_block.terminator();
      bool changed = false;
      for (std::size_t i = 0; i < carried.size(); ++i) {
        if (!carried[i]) continue;
        const AxisInfo* next = yield ? info(yield->operands[i]) : nullptr;
        AxisInfo merged = next ? meet(*carried[i], *next) : unknown(carried[i]->rank());
        if (merged != *carried[i]) {
          carried[i] = std::move(merged);
          changed = true;
        }
      }
      if (!changed) break;
    }
    for (std::size_t i = 0; i < op.results.size(); ++i) {
      if (carried[i]) set(*op.results[i], *carried[i]);
      else set_unknown(*op.results[i]);
    }
  }

  void run_if(const Operation& op) {
    run_block(*op.regions[0]);
    run_block(*op.regions[1]);
    const Operation* then_yield = op.regions[0]->terminator();
    const Operation* else_yield = op.regions[1]->terminator();
    for (std::size_t i = 0; i < op.results.size(); ++i) {
      const AxisInfo* a = then_yield ? info(then_yield->operands[i]) : nullptr;
      const AxisInfo* b = else_yield ? info(else_yield->operands[i]) : nullptr;
      if (a && b) set(*op.results[i], meet(*a, *b));
      else set_unknown(*op.results[i]);
    }
  }

  AxisInfoMap& infos_;
};

std::string list_string(const std::vector<std::int64_t>& values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

}  // namespace

std::string to_string(const AxisInfo& info) {
  std::string s = "contiguity " + list_string(info.contiguity) + " divisibility " + list_string(info.divisibility) +
                  " constancy " + list_string(info.constancy);
  if (info.constant) s += " constant " + std::to_string(*info.constant);
  return s;
}

const AxisInfo* AxisInfoMap::find(const ir::Value& value) const {
  const auto it = infos_.find(&value);
  return it == infos_.end() ? nullptr : &it->second;
}

const AxisInfo& AxisInfoMap::at(const ir::Value& value) const {
  if (const AxisInfo* info = find(value)) return *info;
  throw std::invalid_argument("axis analysis: %" + std::to_string(value.id) + " (" + ir::to_string(value.type) +
                              ") was not analysed");
}

AxisInfoMap analyze_axes(const ir::Function& fn) {
  AxisInfoMap infos;
  for (std::size_t i = 0; i < fn.body.arguments.size(); ++i) {
    const Value& arg = *fn.body.arguments[i];
    if (!tracked(arg.type)) continue;
    const ir::ArgumentFacts facts = i < fn.argument_facts.size() ? fn.argument_facts[i] : ir::ArgumentFacts{};
    AxisInfo seed = unknown(shape_of(arg).size());
    seed.divisibility.assign(seed.rank(), std::min(facts.divisibility, kMaxDivisor));
    if (facts.equal_to_1 && !arg.type.is_pointer) seed = constant_info(shape_of(arg), 1);
    infos.set(arg, std::move(seed));
  }
  AxisAnalysis(infos).run_block(fn.body);
  return infos;
}

int fastest_dimension(const AxisInfo& pointers) {
  int fastest = 0;
  for (int d = 0; d < pointers.rank(); ++d)
    if (pointers.contiguity[d] >= pointers.contiguity[fastest]) fastest = d;
  return fastest;
}

std::int64_t access_vector_width(const AxisInfoMap& infos, const ir::Value& pointers, const ir::Value* mask) {
  if (!pointers.type.is_pointer)
    throw std::invalid_argument("access_vector_width: %" + std::to_string(pointers.id) + " is " +
                                ir::to_string(pointers.type) + ", not a pointer");
  const AxisInfo& info = infos.at(pointers);
  const int d = fastest_dimension(info);
  const std::int64_t element_bytes = ir::dtype_bytes(pointers.type.dtype);
  constexpr std::int64_t kMaxAccessBytes = 16;
  std::int64_t width = std::min({info.contiguity[d], std::max<std::int64_t>(1, info.divisibility[d] / element_bytes),
                                 std::max<std::int64_t>(1, kMaxAccessBytes / element_bytes)});
  if (mask) width = std::min(width, infos.at(*mask).constancy[d]);
  return std::max<std::int64_t>(1, width);
}

std::int64_t access_vector_width(const AxisInfoMap& infos, const ir::Operation& access) {
  if (access.code == OpCode::load)
    return access_vector_width(infos, *access.operands[0], access.operands.size() > 1 ? access.operands[1] : nullptr);
  if (access.code == OpCode::store)
    return access_vector_width(infos, *access.operands[0], access.operands.size() > 2 ? access.operands[2] : nullptr);
  if (access.code == OpCode::async_copy)
    return access_vector_width(infos, *access.operands[2], access.operands.size() > 3 ? access.operands[3] : nullptr);
  throw std::invalid_argument("access_vector_width: '" + std::string(access.name()) +
                              "' is not a load, store or async_copy");
}

}  // namespace kiln::lowering
