// Integer arithmetic on constants as the IR defines it (OPS.md): wrapping
// two's complement, C division with MIN / -1 wrapping to MIN (remainder 0),
// shifts clamped as PTX clamps them. One definition for every pass that
// computes with integer constants (the canonicaliser's folding, the GPU
// lowering's axis analysis), so that they cannot disagree.
#pragma once

#include <cstdint>
#include <optional>

#include "kiln/ir/attribute_enums.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/ir.hpp"

namespace kiln::ir {

/// `bits` truncated to `dtype`'s width, sign- or zero-extended back to 64 bits.
std::int64_t wrap(DType dtype, std::uint64_t bits);
/// `dtype`'s bits of `value` as an unsigned number.
std::uint64_t unsigned_bits(DType dtype, std::int64_t value);

/// `a code b` in integer `dtype` (operands taken modulo its width) for add,
/// sub, mul, div, rem, minimum, maximum, and, or, xor, shl, shr and umulhi;
/// nullopt for another op and for a zero divisor, which faults at run time.
std::optional<std::int64_t> fold_integer_binary(OpCode code, DType dtype, std::int64_t a, std::int64_t b);
/// `a pred b` in integer `dtype` (signedness from it).
bool fold_integer_compare(Predicate pred, DType dtype, std::int64_t a, std::int64_t b);

}  // namespace kiln::ir
