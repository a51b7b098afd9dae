// Integer arithmetic on constants (integer_arithmetic.hpp): each op computed
// in 64-bit unsigned arithmetic, whose low bits are the dtype's result.
#include "kiln/ir/integer_arithmetic.hpp"

namespace kiln::ir {

std::int64_t wrap(DType dtype, std::uint64_t bits) {
  const int width = dtype_bits(dtype);
  if (width == 64) return static_cast<std::int64_t>(bits);
  const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
  bits &= mask;
  if (is_signed_int(dtype) && ((bits >> (width - 1)) & 1)) bits |= ~mask;
  return static_cast<std::int64_t>(bits);
}

std::uint64_t unsigned_bits(DType dtype, std::int64_t value) {
  const int width = dtype_bits(dtype);
  const auto bits = static_cast<std::uint64_t>(value);
  return width == 64 ? bits : bits & ((std::uint64_t{1} << width) - 1);
}

std::optional<std::int64_t> fold_integer_binary(OpCode code, DType dtype, std::int64_t a, std::int64_t b) {
  const bool is_signed = is_signed_int(dtype);
  const int width = dtype_bits(dtype);
  a = wrap(dtype, static_cast<std::uint64_t>(a));
  b = wrap(dtype, static_cast<std::uint64_t>(b));
  const std::uint64_t ua = unsigned_bits(dtype, a), ub = unsigned_bits(dtype, b);
  switch (code) {
    case OpCode::add: return wrap(dtype, ua + ub);
    case OpCode::sub: return wrap(dtype, ua - ub);
    case OpCode::mul: return wrap(dtype, ua * ub);
    case OpCode::div:
    case OpCode::rem:
      if (b == 0) return std::nullopt;
      // MIN / -1: the quotient's negation wraps; no 64-bit division overflows.
      if (is_signed && b == -1) return code == OpCode::div ? wrap(dtype, 0 - ua) : 0;
      if (is_signed) return wrap(dtype, static_cast<std::uint64_t>(code == OpCode::div ? a / b : a % b));
      return wrap(dtype, code == OpCode::div ? ua / ub : ua % ub);
    case OpCode::minimum: return (is_signed ? a < b : ua < ub) ? a : b;
    case OpCode::maximum: return (is_signed ? a > b : ua > ub) ? a : b;
    case OpCode::and_: return wrap(dtype, ua & ub);
    case OpCode::or_: return wrap(dtype, ua | ub);
    case OpCode::xor_: return wrap(dtype, ua ^ ub);
    // The amount is unsigned: a negative one is past the width.
    case OpCode::shl: return ub >= static_cast<std::uint64_t>(width) ? 0 : wrap(dtype, ua << ub);
    case OpCode::shr:
      if (is_signed) return ub >= static_cast<std::uint64_t>(width) ? (a < 0 ? -1 : 0) : a >> ub;
      return ub >= static_cast<std::uint64_t>(width) ? 0 : wrap(dtype, ua >> ub);
    case OpCode::umulhi:
      if (width == 64) return wrap(dtype, static_cast<std::uint64_t>((static_cast<unsigned __int128>(ua) * ub) >> 64));
      return wrap(dtype, (ua * ub) >> width);
    default: return std::nullopt;
  }
}

bool fold_integer_compare(Predicate pred, DType dtype, std::int64_t a, std::int64_t b) {
  a = wrap(dtype, static_cast<std::uint64_t>(a));
  b = wrap(dtype, static_cast<std::uint64_t>(b));
  const bool is_signed = is_signed_int(dtype);
  const std::uint64_t ua = unsigned_bits(dtype, a), ub = unsigned_bits(dtype, b);
  const bool less = is_signed ? a < b : ua < ub;
  const bool greater = is_signed ? a > b : ua > ub;
  switch (pred) {
    case Predicate::eq: return a == b;
    case Predicate::ne: return a != b;
    case Predicate::lt: return less;
    case Predicate::le: return !greater;
    case Predicate::gt: return greater;
    case Predicate::ge: return !less;
  }
  return false;
}

}  // namespace kiln::ir
