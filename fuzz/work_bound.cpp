// The work bound: value ranges of integer scalars known before the launch,
// loop trip counts from them, element counts of every op.
#include "work_bound.hpp"

#include <algorithm>
#include <unordered_map>

#include "kiln/ir/integer_arithmetic.hpp"

namespace kiln::fuzz {

namespace {

using Wide = __int128;

/// The values an integer scalar may take at run time.
struct Range {
  Wide lo;
  Wide hi;
};

constexpr Wide kUnbounded = Wide{1} << 100;

/// Elements of `t`, saturated at kUnbounded.
Wide elements(const ir::Type& t) {
  Wide n = 1;
  for (std::int64_t d : t.shape) n = std::min<Wide>(n * std::max<std::int64_t>(d, 0), kUnbounded);
  return n;
}

Range dtype_range(ir::DType t) {
  if (t == ir::DType::i1) return {0, 1};
  const int bits = ir::dtype_bits(t);
  if (ir::is_unsigned_int(t)) return {0, (Wide{1} << bits) - 1};
  return {-(Wide{1} << (bits - 1)), (Wide{1} << (bits - 1)) - 1};
}

class Estimate {
 public:
  Estimate(const ir::Function& fn, runtime::Grid grid, std::span<const runtime::KernelArgument> args) : grid_(grid) {
    for (std::size_t i = 0; i < fn.body.arguments.size() && i < args.size(); ++i) {
      const ir::Value* arg = fn.body.arguments[i];
      if (is_integer_scalar(arg)) {
        const std::int64_t v = ir::wrap(arg->type.dtype, args[i].bits);
        ranges_[arg] = {v, v};
      }
    }
  }

  /// Element operations of one program running `block` once, or nullopt.
  std::optional<Wide> block(const ir::Block& b) {
    Wide total = 0;
    for (const auto& op : b.ops) {
      const std::optional<Wide> cost = operation(*op);
      if (!cost) return std::nullopt;
      total += *cost;
      if (total > kMaxWork) return std::nullopt;
      record_ranges(*op);
    }
    return total;
  }

 private:
  static bool is_integer_scalar(const ir::Value* v) {
    return !v->type.is_pointer && v->type.is_scalar() && ir::is_integer(v->type.dtype);
  }

  std::optional<Range> range_of(const ir::Value* v) const {
    const auto it = ranges_.find(v);
    if (it == ranges_.end()) return std::nullopt;
    return it->second;
  }

  std::optional<Wide> operation(const ir::Operation& op) {
    Wide widest = 1;
    for (const ir::Value* v : op.operands) widest = std::max(widest, elements(v->type));
    for (const ir::Value* v : op.results) widest = std::max(widest, elements(v->type));
    if (widest > kMaxElements) return std::nullopt;
    switch (op.code) {
      case ir::OpCode::while_: return std::nullopt;
      case ir::OpCode::for_: return loop(op);
      case ir::OpCode::if_: {
        Wide total = 1;
        for (const auto& region : op.regions) {
          const std::optional<Wide> cost = block(*region);
          if (!cost) return std::nullopt;
          total += *cost;
        }
        return total;
      }
      case ir::OpCode::reduce:
      case ir::OpCode::scan: {
        const std::optional<Wide> combine = block(*op.regions.at(0));
        if (!combine) return std::nullopt;
        return widest * (1 + *combine);
      }
      case ir::OpCode::dot: {
        const ir::Shape& a = op.operands.at(0)->type.shape;
        return widest * (a.empty() ? 1 : std::max<std::int64_t>(a.back(), 1));
      }
      default: return widest;
    }
  }

  /// The trip count bound times the body's cost.
  std::optional<Wide> loop(const ir::Operation& op) {
    if (op.operands.size() < 3 || op.regions.empty() || op.regions[0]->arguments.empty()) return std::nullopt;
    const std::optional<Range> lo = range_of(op.operands[0]);
    const std::optional<Range> hi = range_of(op.operands[1]);
    const std::optional<Range> step = range_of(op.operands[2]);
    if (!lo || !hi || !step) return std::nullopt;
    // A step of at most 0 faults before the first iteration; any other is at least 1.
    const Wide trips =
        hi->hi <= lo->lo ? 0 : (hi->hi - lo->lo + std::max<Wide>(step->lo, 1) - 1) / std::max<Wide>(step->lo, 1);
    if (trips > kMaxWork) return std::nullopt;
    const ir::Value* iv = op.regions[0]->arguments[0];
    if (is_integer_scalar(iv)) ranges_[iv] = {lo->lo, std::max(lo->lo, hi->hi - 1)};
    const std::optional<Wide> body = block(*op.regions[0]);
    if (!body) return std::nullopt;
    return 1 + trips * *body;
  }

  /// The ranges of `op`'s integer scalar results that are known.
  void record_ranges(const ir::Operation& op) {
    if (op.results.size() != 1 || !is_integer_scalar(op.results[0])) return;
    const ir::Value* result = op.results[0];
    const std::optional<Range> range = result_range(op);
    if (!range) return;
    const Range limits = dtype_range(result->type.dtype);
    // A range the dtype cannot hold may wrap at run time: then nothing is known.
    if (range->lo >= limits.lo && range->hi <= limits.hi) ranges_[result] = *range;
  }

  std::optional<Range> result_range(const ir::Operation& op) const {
    const ir::DType dtype = op.results[0]->type.dtype;
    switch (op.code) {
      case ir::OpCode::constant: {
        const ir::Attribute* value = op.find_attribute("value");
        const auto* i = value ? std::get_if<std::int64_t>(value) : nullptr;
        if (!i) return std::nullopt;
        const std::int64_t v = ir::wrap(dtype, static_cast<std::uint64_t>(*i));
        return Range{v, v};
      }
      case ir::OpCode::program_id:
      case ir::OpCode::num_programs: {
        const ir::Attribute* axis = op.find_attribute("axis");
        const auto* a = axis ? std::get_if<std::int64_t>(axis) : nullptr;
        if (!a || *a < 0 || *a > 2) return std::nullopt;
        const int size = grid_[static_cast<std::size_t>(*a)];
        return op.code == ir::OpCode::program_id ? Range{0, size - 1} : Range{size, size};
      }
      default: break;
    }
    if (op.operands.size() != 2) return std::nullopt;
    const std::optional<Range> a = range_of(op.operands[0]);
    const std::optional<Range> b = range_of(op.operands[1]);
    // Bounds up to 2^62 keep every product below 2^126, inside Wide.
    constexpr Wide kLargest = Wide{1} << 62;
    if (!a || !b || std::max({-a->lo, a->hi, -b->lo, b->hi}) > kLargest) return std::nullopt;
    switch (op.code) {
      case ir::OpCode::add: return Range{a->lo + b->lo, a->hi + b->hi};
      case ir::OpCode::sub: return Range{a->lo - b->hi, a->hi - b->lo};
      case ir::OpCode::mul: {
        const Wide corners[] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
        return Range{*std::min_element(std::begin(corners), std::end(corners)),
                     *std::max_element(std::begin(corners), std::end(corners))};
      }
      case ir::OpCode::div:
        // Division truncates toward zero, so a positive divisor keeps the order.
        if (b->lo != b->hi || b->lo <= 0) return std::nullopt;
        return Range{a->lo / b->lo, a->hi / b->lo};
      default: return std::nullopt;
    }
  }

  runtime::Grid grid_;
  std::unordered_map<const ir::Value*, Range> ranges_;
};

}  // namespace

std::optional<std::int64_t> interpretation_work(const ir::Function& fn, runtime::Grid grid,
                                                std::span<const runtime::KernelArgument> args) {
  Estimate estimate(fn, grid, args);
  const std::optional<Wide> program = estimate.block(fn.body);
  if (!program) return std::nullopt;
  const Wide launch = *program * grid[0] * grid[1] * grid[2];
  if (launch > kMaxWork) return std::nullopt;
  return static_cast<std::int64_t>(launch);
}

}  // namespace kiln::fuzz
