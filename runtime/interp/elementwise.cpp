// Elementwise ops: arithmetic, bitwise, shifts, math, fma, umulhi, cmp,
// isnan/isinf and select, each a whole-tile loop specialised for its element
// type.

#include "arith.hpp"
#include "fault.hpp"
#include "kiln/ir/attribute_enums.hpp"
#include "kiln/ir/op_schema.hpp"
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

enum class FloatClass { nan, inf };

/// isnan, isinf: an i1 element per float element (narrow floats widen exactly).
template <class E, FloatClass K>
KILN_ROUTINE void run_float_class(const Instr& ins, Exec& ex) {
  const std::int64_t n = ins.n;
  using S = typename E::S;
  const S* a = ex.at<S>(ins.in[0]);
  std::uint8_t* out = ex.at<std::uint8_t>(ins.out[0]);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto x = E::load(a[i]);
    if constexpr (K == FloatClass::nan) out[i] = x != x;
    else out[i] = std::isinf(x);
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
    if constexpr (Op::template valid<decltype(e)>) return make(e);
    else unsupported(op, "not defined for " + ir::to_string(type.element()));
  });
}

const ir::Type& operand_type(const ir::Operation& op) { return op.operands.at(0)->type; }
bool is_integer_tile(const ir::Type& t) { return t.is_pointer || !is_float(t.dtype); }

/// Binds the routine of one elementwise op: sets `ins.run` (and any params).
using Binder = void (*)(const ir::Operation& op, Instr& ins);

template <class Op>
void unary(const ir::Operation& op, Instr& ins) {
  ins.run = pick<Op>(op, operand_type(op), [](auto e) -> Routine { return &run_unary<decltype(e), Op>; });
}
template <class Op>
void binary(const ir::Operation& op, Instr& ins) {
  ins.run = pick<Op>(op, operand_type(op), [](auto e) -> Routine { return &run_binary<decltype(e), Op>; });
}
template <class Op>
void ternary(const ir::Operation& op, Instr& ins) {
  ins.run = pick<Op>(op, operand_type(op), [](auto e) -> Routine { return &run_ternary<decltype(e), Op>; });
}
/// Integer division faults on a zero divisor; float division follows IEEE.
template <class IntOp, class FloatOp>
void divide(const ir::Operation& op, Instr& ins) {
  if (!is_integer_tile(operand_type(op))) return binary<FloatOp>(op, ins);
  ins.run = pick<IntOp>(op, operand_type(op), [](auto e) -> Routine { return &run_int_divide<decltype(e), IntOp>; });
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

/// umulhi's high half is that of the unsigned product.
void multiply_high(const ir::Operation& op, Instr& ins) {
  const ir::Type& t = operand_type(op);
  const ir::Type as_unsigned = is_signed_int(t.dtype) ? ir::Type::scalar(unsigned_of(t.dtype)) : t;
  ins.run = pick<ops::Umulhi>(op, as_unsigned, [](auto e) -> Routine { return &run_binary<decltype(e), ops::Umulhi>; });
}

template <Pred P>
Routine pick_cmp(const ir::Type& type) {
  return with_element(type, [](auto e) -> Routine { return &run_cmp<decltype(e), P>; });
}

void compare(const ir::Operation& op, Instr& ins) {
  const std::optional<ir::Predicate> pred = ir::attribute_enum<ir::Predicate>(op);
  if (!pred) unsupported(op, "unknown predicate '" + op.symbol_attribute("pred") + "'");
  const ir::Type& type = operand_type(op);
  switch (*pred) {
    case ir::Predicate::eq: ins.run = pick_cmp<Pred::eq>(type); return;
    case ir::Predicate::ne: ins.run = pick_cmp<Pred::ne>(type); return;
    case ir::Predicate::lt: ins.run = pick_cmp<Pred::lt>(type); return;
    case ir::Predicate::le: ins.run = pick_cmp<Pred::le>(type); return;
    case ir::Predicate::gt: ins.run = pick_cmp<Pred::gt>(type); return;
    case ir::Predicate::ge: ins.run = pick_cmp<Pred::ge>(type); return;
  }
}

template <FloatClass K>
void classify(const ir::Operation& op, Instr& ins) {
  ins.run = with_element(operand_type(op), [&](auto e) -> Routine {
    if constexpr (decltype(e)::is_float) return &run_float_class<decltype(e), K>;
    else unsupported(op, "not defined for " + ir::to_string(operand_type(op).element()));
  });
}

void select(const ir::Operation& op, Instr& ins) {
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
}

/// The binder of each elementwise op of ops.def; null for the other families.
constexpr Binder elementwise_binder(ir::OpCode code) {
  using namespace ops;
  switch (code) {
    case ir::OpCode::add: return &binary<Add>;
    case ir::OpCode::sub: return &binary<Sub>;
    case ir::OpCode::mul: return &binary<Mul>;
    case ir::OpCode::div: return &divide<IntDiv, FloatDiv>;
    case ir::OpCode::rem: return &divide<IntRem, FloatRem>;
    case ir::OpCode::minimum: return &binary<Minimum>;
    case ir::OpCode::maximum: return &binary<Maximum>;
    case ir::OpCode::and_: return &binary<And>;
    case ir::OpCode::or_: return &binary<Or>;
    case ir::OpCode::xor_: return &binary<Xor>;
    case ir::OpCode::shl: return &binary<Shl>;
    case ir::OpCode::shr: return &binary<Shr>;
    case ir::OpCode::umulhi: return &multiply_high;
    case ir::OpCode::neg: return &unary<Neg>;
    case ir::OpCode::not_: return &unary<Not>;
    case ir::OpCode::popc: return &unary<Popc>;
    case ir::OpCode::clz: return &unary<Clz>;
    case ir::OpCode::abs: return &unary<Abs>;
    case ir::OpCode::exp: return &unary<Exp>;
    case ir::OpCode::exp2: return &unary<Exp2>;
    case ir::OpCode::fast_exp: return &unary<FastExp>;
    case ir::OpCode::fast_exp2: return &unary<FastExp2>;
    case ir::OpCode::log: return &unary<Log>;
    case ir::OpCode::log2: return &unary<Log2>;
    case ir::OpCode::log1p: return &unary<Log1p>;
    case ir::OpCode::sqrt: return &unary<Sqrt>;
    case ir::OpCode::rsqrt: return &unary<Rsqrt>;
    case ir::OpCode::sin: return &unary<Sin>;
    case ir::OpCode::cos: return &unary<Cos>;
    case ir::OpCode::tanh: return &unary<Tanh>;
    case ir::OpCode::erf: return &unary<Erf>;
    case ir::OpCode::floor: return &unary<Floor>;
    case ir::OpCode::ceil: return &unary<Ceil>;
    case ir::OpCode::expm1: return &unary<Expm1>;
    case ir::OpCode::tan: return &unary<Tan>;
    case ir::OpCode::atan: return &unary<Atan>;
    case ir::OpCode::asin: return &unary<Asin>;
    case ir::OpCode::acos: return &unary<Acos>;
    case ir::OpCode::sinh: return &unary<Sinh>;
    case ir::OpCode::cosh: return &unary<Cosh>;
    case ir::OpCode::trunc: return &unary<Trunc>;
    case ir::OpCode::round: return &unary<Round>;
    case ir::OpCode::rint: return &unary<Rint>;
    case ir::OpCode::asinh: return &unary<Asinh>;
    case ir::OpCode::acosh: return &unary<Acosh>;
    case ir::OpCode::atanh: return &unary<Atanh>;
    case ir::OpCode::log10: return &unary<Log10>;
    case ir::OpCode::exp10: return &unary<Exp10>;
    case ir::OpCode::cbrt: return &unary<Cbrt>;
    case ir::OpCode::erfc: return &unary<Erfc>;
    case ir::OpCode::erfinv: return &unary<Erfinv>;
    case ir::OpCode::lgamma: return &unary<Lgamma>;
    case ir::OpCode::pow: return &binary<Pow>;
    case ir::OpCode::atan2: return &binary<Atan2>;
    case ir::OpCode::hypot: return &binary<Hypot>;
    case ir::OpCode::copysign: return &binary<Copysign>;
    case ir::OpCode::isnan: return &classify<FloatClass::nan>;
    case ir::OpCode::isinf: return &classify<FloatClass::inf>;
    case ir::OpCode::fma: return &ternary<Fma>;
    case ir::OpCode::cmp: return &compare;
    case ir::OpCode::select: return &select;
    default: return nullptr;
  }
}

static_assert(ir::first_op_missing(ir::OpFamily::elementwise,
                                   [](ir::OpCode code) { return elementwise_binder(code) != nullptr; }) == ir::kOpCount,
              "an elementwise op of ops.def has no interpreter routine in elementwise_binder");

}  // namespace

void bind_elementwise(const ir::Operation& op, Instr& ins) {
  for (std::size_t i = 1; i < ins.in.size(); ++i)
    if (op.code != ir::OpCode::select && ins.in[i].bytes != ins.in[0].bytes)
      unsupported(op, "operand types differ: " + ir::to_string(op.operands[0]->type) + " and " +
                          ir::to_string(op.operands[i]->type));
  const Binder bind = elementwise_binder(op.code);
  if (!bind)
    throw std::logic_error("internal error in kiln: " + std::string(op.name()) +
                           " is not an elementwise op (please report)");
  bind(op, ins);
}

}  // namespace kiln::runtime::interp
