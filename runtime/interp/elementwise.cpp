// Elementwise ops: arithmetic, bitwise, shifts, math, fma, umulhi, cmp and
// select, each a whole-tile loop specialised for its element type.

#include "arith.hpp"
#include "fault.hpp"
#include "kiln/ir/attribute_enums.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

template <class E, class Op>
KILN_ROUTINE void run_unary(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  using S = typename E::S;
  const S* a = ex.at<S>(ins.in[0]);
  S* out = ex.at<S>(ins.out[0]);
  for (std::int64_t i = 0; i < n; ++i) out[i] = E::store(Op::template apply<E>(E::load(a[i])));
}

template <class E, class Op>
KILN_ROUTINE void run_binary(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  using S = typename E::S;
  const S* a = ex.at<S>(ins.in[0]);
  const S* b = ex.at<S>(ins.in[1]);
  S* out = ex.at<S>(ins.out[0]);
  for (std::int64_t i = 0; i < n; ++i) out[i] = E::store(Op::template apply<E>(E::load(a[i]), E::load(b[i])));
}

template <class E, class Op>
KILN_ROUTINE void run_ternary(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  using S = typename E::S;
  const S* a = ex.at<S>(ins.in[0]);
  const S* b = ex.at<S>(ins.in[1]);
  const S* c = ex.at<S>(ins.in[2]);
  S* out = ex.at<S>(ins.out[0]);
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = E::store(Op::template apply<E>(E::load(a[i]), E::load(b[i]), E::load(c[i])));
}

/// Integer div/rem: a zero divisor anywhere is a fault, found before any
/// element is computed.
template <class E, class Op>
KILN_ROUTINE void run_int_divide(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  using S = typename E::S;
  const S* b = ex.at<S>(ins.in[1]);
  bool any_zero = false;
  for (std::int64_t i = 0; i < n; ++i) any_zero |= b[i] == 0;
  if (any_zero) {
    std::int64_t i = 0;
    while (b[i] != 0) ++i;
    fault(ex, "integer division by zero in " + std::string(ir::op_info(ins.code).name) + at_line(ins) + ": element " +
                  std::to_string(i) + " of the divisor is 0 (" + program_string(ex) + ")");
  }
  run_binary<E, Op>(ins, ex);
}

enum class Pred { eq, ne, lt, le, gt, ge };

/// C++'s comparison operators are exactly the IR's: signedness from the
/// type, floats ordered except `!=`.
template <class E, Pred P>
KILN_ROUTINE void run_cmp(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  using S = typename E::S;
  const S* a = ex.at<S>(ins.in[0]);
  const S* b = ex.at<S>(ins.in[1]);
  std::uint8_t* out = ex.at<std::uint8_t>(ins.out[0]);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto x = E::load(a[i]);
    const auto y = E::load(b[i]);
    bool r;
    if constexpr (P == Pred::eq) r = x == y;
    else if constexpr (P == Pred::ne) r = x != y;
    else if constexpr (P == Pred::lt) r = x < y;
    else if constexpr (P == Pred::le) r = x <= y;
    else if constexpr (P == Pred::gt) r = x > y;
    else r = x >= y;
    out[i] = r;
  }
}

/// param[0]: 1 when the condition is one scalar for the whole tile.
template <class U>
KILN_ROUTINE void run_select(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  const std::uint8_t* cond = ex.at<std::uint8_t>(ins.in[0]);
  const U* a = ex.at<U>(ins.in[1]);
  const U* b = ex.at<U>(ins.in[2]);
  U* out = ex.at<U>(ins.out[0]);
  if (ins.param[0]) {
    const U* pick = *cond ? a : b;
    for (std::int64_t i = 0; i < n; ++i) out[i] = pick[i];
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = cond[i] ? a[i] : b[i];
  }
}

/// The routine `make(E{})` for the element type of `type`, if Op is defined on it.
template <class Op, class Make>
Routine pick(const ir::Operation& op, const ir::Type& type, Make make) {
  return with_element(type, [&](auto e) -> Routine {
    if constexpr (Op::template valid<decltype(e)>)
      return make(e);
    else
      unsupported(op, "not defined for " + ir::to_string(type.element()));
  });
}
template <class Op>
Routine unary(const ir::Operation& op, const ir::Type& t) {
  return pick<Op>(op, t, [](auto e) -> Routine { return &run_unary<decltype(e), Op>; });
}
template <class Op>
Routine binary(const ir::Operation& op, const ir::Type& t) {
  return pick<Op>(op, t, [](auto e) -> Routine { return &run_binary<decltype(e), Op>; });
}
template <class Op>
Routine ternary(const ir::Operation& op, const ir::Type& t) {
  return pick<Op>(op, t, [](auto e) -> Routine { return &run_ternary<decltype(e), Op>; });
}
template <class Op>
Routine int_divide(const ir::Operation& op, const ir::Type& t) {
  return pick<Op>(op, t, [](auto e) -> Routine { return &run_int_divide<decltype(e), Op>; });
}

template <Pred P>
Routine pick_cmp(const ir::Type& type) {
  return with_element(type, [](auto e) -> Routine { return &run_cmp<decltype(e), P>; });
}

Routine bind_cmp(const ir::Operation& op, const ir::Type& type) {
  const std::optional<ir::Predicate> pred = ir::attribute_enum<ir::Predicate>(op);
  if (!pred) unsupported(op, "unknown predicate '" + op.symbol_attribute("pred") + "'");
  switch (*pred) {
    case ir::Predicate::eq: return pick_cmp<Pred::eq>(type);
    case ir::Predicate::ne: return pick_cmp<Pred::ne>(type);
    case ir::Predicate::lt: return pick_cmp<Pred::lt>(type);
    case ir::Predicate::le: return pick_cmp<Pred::le>(type);
    case ir::Predicate::gt: return pick_cmp<Pred::gt>(type);
    case ir::Predicate::ge: return pick_cmp<Pred::ge>(type);
  }
  unsupported(op, "unknown predicate");
}

ir::DType unsigned_of(ir::DType t) {
  switch (t) {
    case ir::DType::i8: return ir::DType::u8;
    case ir::DType::i16: return ir::DType::u16;
    case ir::DType::i32: return ir::DType::u32;
    case ir::DType::i64: return ir::DType::u64;
    default: return t;
  }
}

}  // namespace

void bind_elementwise(const ir::Operation& op, Instr& ins) {
  for (std::size_t i = 1; i < ins.in.size(); ++i)
    if (op.code != ir::OpCode::select && ins.in[i].bytes != ins.in[0].bytes)
      unsupported(op, "operand types differ: " + ir::to_string(op.operands[0]->type) + " and " +
                          ir::to_string(op.operands[i]->type));
  const ir::Type& t = op.operands.at(0)->type;
  using namespace ops;
  switch (op.code) {
    case ir::OpCode::add: ins.run = binary<Add>(op, t); return;
    case ir::OpCode::sub: ins.run = binary<Sub>(op, t); return;
    case ir::OpCode::mul: ins.run = binary<Mul>(op, t); return;
    case ir::OpCode::div:
      ins.run = t.is_pointer || !is_float(t.dtype) ? int_divide<IntDiv>(op, t) : binary<FloatDiv>(op, t);
      return;
    case ir::OpCode::rem:
      ins.run = t.is_pointer || !is_float(t.dtype) ? int_divide<IntRem>(op, t) : binary<FloatRem>(op, t);
      return;
    case ir::OpCode::minimum: ins.run = binary<Minimum>(op, t); return;
    case ir::OpCode::maximum: ins.run = binary<Maximum>(op, t); return;
    case ir::OpCode::and_: ins.run = binary<And>(op, t); return;
    case ir::OpCode::or_: ins.run = binary<Or>(op, t); return;
    case ir::OpCode::xor_: ins.run = binary<Xor>(op, t); return;
    case ir::OpCode::shl: ins.run = binary<Shl>(op, t); return;
    case ir::OpCode::shr: ins.run = binary<Shr>(op, t); return;
    case ir::OpCode::umulhi:
      ins.run = binary<Umulhi>(op, is_signed_int(t.dtype) ? ir::Type::scalar(unsigned_of(t.dtype)) : t);
      return;
    case ir::OpCode::neg: ins.run = unary<Neg>(op, t); return;
    case ir::OpCode::not_: ins.run = unary<Not>(op, t); return;
    case ir::OpCode::abs: ins.run = unary<Abs>(op, t); return;
    case ir::OpCode::exp: ins.run = unary<Exp>(op, t); return;
    case ir::OpCode::exp2: ins.run = unary<Exp2>(op, t); return;
    case ir::OpCode::log: ins.run = unary<Log>(op, t); return;
    case ir::OpCode::log2: ins.run = unary<Log2>(op, t); return;
    case ir::OpCode::sqrt: ins.run = unary<Sqrt>(op, t); return;
    case ir::OpCode::rsqrt: ins.run = unary<Rsqrt>(op, t); return;
    case ir::OpCode::sin: ins.run = unary<Sin>(op, t); return;
    case ir::OpCode::cos: ins.run = unary<Cos>(op, t); return;
    case ir::OpCode::tanh: ins.run = unary<Tanh>(op, t); return;
    case ir::OpCode::erf: ins.run = unary<Erf>(op, t); return;
    case ir::OpCode::floor: ins.run = unary<Floor>(op, t); return;
    case ir::OpCode::ceil: ins.run = unary<Ceil>(op, t); return;
    case ir::OpCode::fma: ins.run = ternary<Fma>(op, t); return;
    case ir::OpCode::cmp: ins.run = bind_cmp(op, t); return;
    case ir::OpCode::select: {
      if (op.operands.size() != 3) unsupported(op, "takes a condition and two values");
      if (ins.in[1].bytes != ins.in[2].bytes || ins.in[1].bytes != ins.out[0].bytes)
        unsupported(op, "value types differ: " + ir::to_string(op.operands[1]->type) + " and " +
                            ir::to_string(op.operands[2]->type));
      const std::int64_t cond = ins.in[0].numel();
      if (cond != ins.n && cond != 1)
        unsupported(op, "condition " + ir::to_string(op.operands[0]->type) + " does not match " +
                            ir::to_string(op.operands[1]->type));
      ins.param[0] = cond != ins.n;
      ins.run = with_width(ins.out[0].element_bytes, [](auto u) -> Routine { return &run_select<decltype(u)>; });
      return;
    }
    default:
      unsupported(op, "the interpreter has no routine for this op");
  }
}

}  // namespace kiln::runtime::interp
