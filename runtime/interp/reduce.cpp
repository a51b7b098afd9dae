// reduce and scan along one axis. The combine region runs per element pair
// in general; a region that just yields add/mul/maximum/minimum/and/or/xor of
// its two arguments runs as a specialised loop instead (the softmax hot path):
// float sums and products keep index order, ops that are exactly associative
// (max, min, bitwise, integer add/mul) are regrouped to vectorise.

#include <algorithm>
#include <cstring>

#include "arith.hpp"
#include "fault.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

// param: [outer, length, inner, reverse]: the operand viewed as
// [outer, length, inner] with the axis in the middle.

template <class E, class Op>
typename E::C step(typename E::C acc, typename E::S x) {
  return E::load(E::store(Op::template apply<E>(acc, E::load(x))));
}

/// One row reduced as sixteen interleaved partial results combined at the
/// end: exact only for ops that are associative and commutative.
template <class E, class Op>
typename E::C reduce_row_regrouped(const typename E::S* row, std::int64_t length) {
  using C = typename E::C;
  constexpr std::int64_t kLanes = 16;
  C acc[kLanes]{};
  const std::int64_t lanes = std::min(length, kLanes);
  for (std::int64_t j = 0; j < lanes; ++j) acc[j] = E::load(row[j]);
  std::int64_t k = lanes;
  if (lanes == kLanes)
    for (; k + kLanes <= length; k += kLanes)
      for (std::int64_t j = 0; j < kLanes; ++j) acc[j] = step<E, Op>(acc[j], row[k + j]);
  for (; k < length; ++k) acc[0] = step<E, Op>(acc[0], row[k]);
  for (std::int64_t j = 1; j < lanes; ++j) acc[0] = E::load(E::store(Op::template apply<E>(acc[0], acc[j])));
  return acc[0];
}

template <class E, class Op>
KILN_ROUTINE void run_reduce_fast(const Instr& ins, Exec& ex) {
  using S = typename E::S;
  using C = typename E::C;
  const S* x = ex.at<S>(ins.in[0]);
  S* out = ex.at<S>(ins.out[0]);
  const std::int64_t outer = ins.param[0], length = ins.param[1], inner = ins.param[2];
  if (inner == 1 && Op::template associative<E>) {
    for (std::int64_t o = 0; o < outer; ++o) out[o] = E::store(reduce_row_regrouped<E, Op>(x + o * length, length));
    return;
  }
  if (inner == 1) {
    // Rows reduce in index order each; eight rows at a time keep eight
    // independent dependency chains in flight.
    constexpr std::int64_t kRows = 8;
    std::int64_t o = 0;
    for (; o + kRows <= outer; o += kRows) {
      const S* base = x + o * length;
      C acc[kRows];
      for (std::int64_t r = 0; r < kRows; ++r) acc[r] = E::load(base[r * length]);
      for (std::int64_t k = 1; k < length; ++k)
        for (std::int64_t r = 0; r < kRows; ++r) acc[r] = step<E, Op>(acc[r], base[r * length + k]);
      for (std::int64_t r = 0; r < kRows; ++r) out[o + r] = E::store(acc[r]);
    }
    for (; o < outer; ++o) {
      const S* row = x + o * length;
      C acc = E::load(row[0]);
      for (std::int64_t k = 1; k < length; ++k) acc = step<E, Op>(acc, row[k]);
      out[o] = E::store(acc);
    }
    return;
  }
  for (std::int64_t o = 0; o < outer; ++o) {
    const S* src = x + o * length * inner;
    S* dst = out + o * inner;
    std::memcpy(dst, src, inner * sizeof(S));
    for (std::int64_t k = 1; k < length; ++k)
      for (std::int64_t i = 0; i < inner; ++i) dst[i] = E::store(step<E, Op>(E::load(dst[i]), src[k * inner + i]));
  }
}

template <class E, class Op>
KILN_ROUTINE void run_scan_fast(const Instr& ins, Exec& ex) {
  using S = typename E::S;
  const S* x = ex.at<S>(ins.in[0]);
  S* out = ex.at<S>(ins.out[0]);
  const std::int64_t outer = ins.param[0], length = ins.param[1], inner = ins.param[2];
  const bool reverse = ins.param[3] != 0;
  for (std::int64_t o = 0; o < outer; ++o) {
    const S* src = x + o * length * inner;
    S* dst = out + o * length * inner;
    const std::int64_t first = reverse ? length - 1 : 0;
    const std::int64_t dir = reverse ? -1 : 1;
    std::memcpy(dst + first * inner, src + first * inner, inner * sizeof(S));
    for (std::int64_t s = 1; s < length; ++s) {
      const std::int64_t k = first + dir * s;
      const S* prev = dst + (k - dir) * inner;
      S* cur = dst + k * inner;
      const S* in = src + k * inner;
      for (std::int64_t i = 0; i < inner; ++i) cur[i] = E::store(step<E, Op>(E::load(prev[i]), in[i]));
    }
  }
}

void copy_element(std::byte* to, const std::byte* from, int bytes) {
  switch (bytes) {
    case 1: std::memcpy(to, from, 1); return;
    case 2: std::memcpy(to, from, 2); return;
    case 4: std::memcpy(to, from, 4); return;
    default: std::memcpy(to, from, 8); return;
  }
}

/// Any combine region, any number of operands: the region runs per pair with
/// the accumulated values as its left arguments and the next element's as
/// its right ones. The output slot holds the accumulator between steps, so a
/// region that yields its own arguments in another order stays correct.
KILN_ROUTINE void run_reduce_generic(const Instr& ins, Exec& ex) {
  const Body& combine = ins.regions[0];
  const std::size_t n = ins.in.size();
  const std::int64_t outer = ins.param[0], length = ins.param[1], inner = ins.param[2];
  const bool scan = ins.code == ir::OpCode::scan;
  const bool reverse = ins.param[3] != 0;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const auto in_at = [&](std::size_t j, std::int64_t k) {
        return ex.frame + ins.in[j].offset + ((o * length + k) * inner + i) * ins.in[j].element_bytes;
      };
      const auto out_at = [&](std::size_t j, std::int64_t k) {
        const std::int64_t index = scan ? (o * length + k) * inner + i : o * inner + i;
        return ex.frame + ins.out[j].offset + index * ins.out[j].element_bytes;
      };
      const std::int64_t first = reverse ? length - 1 : 0;
      const std::int64_t dir = reverse ? -1 : 1;
      for (std::size_t j = 0; j < n; ++j) {
        copy_element(out_at(j, first), in_at(j, first), ins.in[j].element_bytes);
        copy_element(ex.frame + combine.args[j].offset, in_at(j, first), ins.in[j].element_bytes);
      }
      for (std::int64_t s = 1; s < length; ++s) {
        const std::int64_t k = first + dir * s;
        for (std::size_t j = 0; j < n; ++j)
          copy_element(ex.frame + combine.args[n + j].offset, in_at(j, k), ins.in[j].element_bytes);
        run_code(combine.code, ex);
        for (std::size_t j = 0; j < n; ++j)
          copy_element(out_at(j, k), ex.frame + combine.yields[j].offset, ins.out[j].element_bytes);
        for (std::size_t j = 0; j < n; ++j)
          copy_element(ex.frame + combine.args[j].offset, out_at(j, k), ins.out[j].element_bytes);
      }
    }
  }
}

/// The op of a combine region `{^(a, b): r = op a, b; yield r}`, if it is one.
const ir::Operation* simple_combine(const ir::Operation& op) {
  if (op.operands.size() != 1) return nullptr;
  const ir::Block& region = *op.regions[0];
  if (region.ops.size() != 2 || region.arguments.size() != 2) return nullptr;
  const ir::Operation& body = *region.ops[0];
  const ir::Operation* yield = region.terminator();
  if (!yield || yield->operands.size() != 1 || body.results.size() != 1 || yield->operands[0] != body.results[0])
    return nullptr;
  if (body.operands.size() != 2) return nullptr;
  const ir::Value* a = region.arguments[0];
  const ir::Value* b = region.arguments[1];
  const bool uses_both =
      (body.operands[0] == a && body.operands[1] == b) || (body.operands[0] == b && body.operands[1] == a);
  return uses_both ? &body : nullptr;
}

template <class Op>
Routine pick_fast(const ir::Type& type, bool scan) {
  return with_element(type, [&](auto e) -> Routine {
    using E = decltype(e);
    if constexpr (Op::template valid<E>) return scan ? &run_scan_fast<E, Op> : &run_reduce_fast<E, Op>;
    else return nullptr;
  });
}

Routine fast_routine(const ir::Operation& op) {
  const ir::Operation* combine = simple_combine(op);
  if (!combine) return nullptr;
  const ir::Type& type = op.operands[0]->type;
  if (combine->operands[0]->type != type.element()) return nullptr;
  const bool scan = op.code == ir::OpCode::scan;
  switch (combine->code) {
    case ir::OpCode::add: return pick_fast<ops::Add>(type, scan);
    case ir::OpCode::mul: return pick_fast<ops::Mul>(type, scan);
    case ir::OpCode::maximum: return pick_fast<ops::Maximum>(type, scan);
    case ir::OpCode::minimum: return pick_fast<ops::Minimum>(type, scan);
    case ir::OpCode::and_: return pick_fast<ops::And>(type, scan);
    case ir::OpCode::or_: return pick_fast<ops::Or>(type, scan);
    case ir::OpCode::xor_: return pick_fast<ops::Xor>(type, scan);
    default: return nullptr;
  }
}

}  // namespace

void bind_reduce(const ir::Operation& op, Instr& ins) {
  const std::size_t n = op.operands.size();
  if (n == 0 || op.results.size() != n) unsupported(op, "needs as many results as operands, and at least one");
  const ir::Shape& shape = op.operands[0]->type.shape;
  for (const ir::Value* v : op.operands)
    if (v->type.shape != shape)
      unsupported(op,
                  "operand shapes differ: " + ir::to_string(op.operands[0]->type) + " and " + ir::to_string(v->type));
  const std::int64_t axis = op.int_attribute("axis");
  if (axis < 0 || axis >= static_cast<std::int64_t>(shape.size()))
    unsupported(op, "axis " + std::to_string(axis) + " is out of range for " + ir::to_string(op.operands[0]->type));
  const Body& combine = ins.regions.at(0);
  if (combine.args.size() != 2 * n || combine.yields.size() != n)
    unsupported(op,
                "the combine region must take " + std::to_string(2 * n) + " arguments and yield " + std::to_string(n));
  for (std::size_t j = 0; j < n; ++j)
    if (combine.args[j].bytes != static_cast<std::size_t>(ins.in[j].element_bytes) ||
        combine.args[n + j].bytes != combine.args[j].bytes || combine.yields[j].bytes != combine.args[j].bytes ||
        ins.out[j].element_bytes != ins.in[j].element_bytes)
      unsupported(op, "combine region types do not match the operands");
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (std::size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  ins.param = {outer, shape[axis], inner, op.code == ir::OpCode::scan ? op.int_attribute("reverse") : 0};
  Routine fast = fast_routine(op);
  ins.run = fast ? fast : &run_reduce_generic;
}

}  // namespace kiln::runtime::interp
