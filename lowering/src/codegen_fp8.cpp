// LLVM code generation for the fp8 formats (OCP e4m3 "fn" and e5m2): an fp8
// value lives in an i8 register as its bit pattern and converts to and from
// f32 in integer arithmetic, with the interpreter's semantics
// (ir/numeric.hpp): widening is exact; narrowing rounds to nearest even and
// saturates like the GPU's `cvt.rn.satfinite` (an infinity, or a value that
// rounds past the largest finite one, gives that largest value with the
// input's sign), and NaN stays NaN with its sign. Integer arithmetic rather
// than `cvt` keeps sm_80 (which has no fp8 `cvt`) and the emu on the same bits.
#include <cmath>

#include "codegen.hpp"

namespace kiln::lowering {

namespace {

/// The encoding of one fp8 format.
struct Fp8Format {
  int exponent_bits;
  int mantissa_bits;
  bool finite_only;  ///< e4m3: no infinities, one NaN pattern per sign (all ones)

  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  std::uint32_t exponent_all_ones() const { return (1u << exponent_bits) - 1; }
  std::uint32_t mantissa_mask() const { return (1u << mantissa_bits) - 1; }
  std::uint32_t nan_bits() const {
    return (exponent_all_ones() << mantissa_bits) | (finite_only ? mantissa_mask() : 1u << (mantissa_bits - 1));
  }
  /// The largest finite value's bits.
  std::uint32_t max_bits() const {
    const std::uint32_t top_exponent = finite_only ? exponent_all_ones() : exponent_all_ones() - 1;
    return (top_exponent << mantissa_bits) | (finite_only ? mantissa_mask() - 1 : mantissa_mask());
  }
};

Fp8Format format_of(ir::DType dtype) {
  if (dtype == ir::DType::f8e4m3) return {4, 3, true};
  if (dtype == ir::DType::f8e5m2) return {5, 2, false};
  throw InternalError("fp8 conversion of " + std::string(ir::dtype_name(dtype)) + ", which is not an fp8 format");
}

/// `kept` (the bits above a cut of `cut_bits` bits `rest`) rounded to nearest even.
llvm::Value* round_nearest_even(llvm::IRBuilder<>& b, llvm::Value* kept, llvm::Value* rest, llvm::Value* half) {
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(kept, 1), b.getInt32(0));
  llvm::Value* up = b.CreateOr(b.CreateICmpUGT(rest, half), b.CreateAnd(b.CreateICmpEQ(rest, half), odd));
  return b.CreateAdd(kept, b.CreateZExt(up, b.getInt32Ty()));
}

}  // namespace

bool is_fp8(ir::DType dtype) { return dtype == ir::DType::f8e4m3 || dtype == ir::DType::f8e5m2; }

llvm::Value* fp8_to_float(KernelCodegen& cg, llvm::Value* bits, ir::DType dtype) {
  const Fp8Format f = format_of(dtype);
  llvm::IRBuilder<>& b = cg.builder;
  auto constant = [&](std::uint32_t value) { return b.getInt32(value); };
  llvm::Value* word = b.CreateZExt(bits, b.getInt32Ty());
  llvm::Value* sign = b.CreateShl(b.CreateAnd(word, 0x80u), 24);
  llvm::Value* exponent = b.CreateAnd(b.CreateLShr(word, f.mantissa_bits), f.exponent_all_ones());
  llvm::Value* mantissa = b.CreateAnd(word, f.mantissa_mask());
  llvm::Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(exponent, constant(127 - f.bias())), 23),
                                   b.CreateShl(mantissa, 23 - f.mantissa_bits));
  // A subnormal (or zero) is mantissa * 2^(1 - bias - mantissa_bits), exact in f32.
  llvm::Value* subnormal = b.CreateBitCast(
      b.CreateFMul(b.CreateUIToFP(mantissa, b.getFloatTy()),
                   llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, 1 - f.bias() - f.mantissa_bits))),
      b.getInt32Ty());
  llvm::Value* top_exponent = b.CreateICmpEQ(exponent, constant(f.exponent_all_ones()));
  llvm::Value* special =
      f.finite_only ? b.CreateAnd(top_exponent, b.CreateICmpEQ(mantissa, constant(f.mantissa_mask()))) : top_exponent;
  // e4m3 has only a NaN there; e5m2 an infinity (mantissa 0) or a NaN.
  llvm::Value* nan = constant(0x7fc00000u);
  llvm::Value* special_bits =
      f.finite_only ? nan : b.CreateSelect(b.CreateICmpEQ(mantissa, constant(0)), constant(0x7f800000u), nan);
  llvm::Value* magnitude =
      b.CreateSelect(special, special_bits, b.CreateSelect(b.CreateICmpEQ(exponent, constant(0)), subnormal, normal));
  return b.CreateBitCast(b.CreateOr(magnitude, sign), b.getFloatTy());
}

llvm::Value* float_to_fp8(KernelCodegen& cg, llvm::Value* value, ir::DType dtype) {
  const Fp8Format f = format_of(dtype);
  llvm::IRBuilder<>& b = cg.builder;
  auto constant = [&](std::uint32_t v) { return b.getInt32(v); };
  const std::uint32_t cut = 23 - static_cast<std::uint32_t>(f.mantissa_bits);
  llvm::Value* word = b.CreateBitCast(value, b.getInt32Ty());
  llvm::Value* sign = b.CreateAnd(b.CreateLShr(word, 24), 0x80u);
  llvm::Value* magnitude = b.CreateAnd(word, 0x7fffffffu);
  llvm::Value* biased_exponent = b.CreateLShr(magnitude, 23);

  // Normal in fp8: drop `cut` mantissa bits, round, rebias the exponent.
  llvm::Value* rounded = round_nearest_even(b, b.CreateLShr(magnitude, cut), b.CreateAnd(magnitude, (1u << cut) - 1),
                                            constant(1u << (cut - 1)));
  llvm::Value* normal = b.CreateSub(rounded, constant(static_cast<std::uint32_t>(127 - f.bias()) << f.mantissa_bits));
  llvm::Value* overflows = b.CreateICmpUGT(normal, constant(f.max_bits()));

  // Subnormal in fp8: align the significand to the fixed subnormal step (a
  // shift of 31 or more leaves nothing but a rounding that gives 0).
  llvm::Value* is_f32_subnormal = b.CreateICmpEQ(biased_exponent, constant(0));
  llvm::Value* exponent = b.CreateSelect(is_f32_subnormal, constant(1), biased_exponent);
  llvm::Value* significand =
      b.CreateOr(b.CreateAnd(magnitude, 0x7fffffu), b.CreateSelect(is_f32_subnormal, constant(0), constant(0x800000u)));
  // shift = (1 - bias) - (exponent - 127): how far below the smallest normal exponent.
  llvm::Value* shift = b.CreateSub(constant(static_cast<std::uint32_t>(128 - f.bias())), exponent);
  llvm::Value* total = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b.CreateAdd(shift, constant(cut)), constant(31));
  llvm::Value* subnormal =
      round_nearest_even(b, b.CreateLShr(significand, total),
                         b.CreateAnd(significand, b.CreateSub(b.CreateShl(constant(1), total), constant(1))),
                         b.CreateShl(constant(1), b.CreateSub(total, constant(1))));
  llvm::Value* is_subnormal = b.CreateICmpULT(biased_exponent, constant(static_cast<std::uint32_t>(128 - f.bias())));

  // An overflow or an infinity saturates.
  llvm::Value* result = b.CreateSelect(overflows, constant(f.max_bits()), normal);
  result = b.CreateSelect(is_subnormal, subnormal, result);
  result = b.CreateSelect(b.CreateICmpEQ(magnitude, constant(0x7f800000u)), constant(f.max_bits()), result);
  result = b.CreateSelect(b.CreateICmpUGT(magnitude, constant(0x7f800000u)), constant(f.nan_bits()), result);
  return b.CreateTrunc(b.CreateOr(result, sign), b.getInt8Ty());
}

llvm::Value* round_to_odd_float(KernelCodegen& cg, llvm::Value* value) {
  llvm::IRBuilder<>& b = cg.builder;
  llvm::Value* nearest = b.CreateFPTrunc(value, b.getFloatTy());
  llvm::Value* widened = b.CreateFPExt(nearest, value->getType());
  // Exact, or NaN: nothing was dropped.
  llvm::Value* keep = b.CreateOr(b.CreateFCmpOEQ(widened, value), b.CreateFCmpUNO(value, value));
  llvm::Value* rounded_away = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, widened),
                                              b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value));
  llvm::Value* bits = b.CreateBitCast(nearest, b.getInt32Ty());
  llvm::Value* toward_zero = b.CreateSelect(rounded_away, b.CreateSub(bits, b.getInt32(1)), bits);
  llvm::Value* odd = b.CreateBitCast(b.CreateOr(toward_zero, 1), b.getFloatTy());
  return b.CreateSelect(keep, nearest, odd);
}

llvm::Value* integer_round_to_odd_float(KernelCodegen& cg, llvm::Value* value, bool is_signed) {
  llvm::IRBuilder<>& b = cg.builder;
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* wide = b.CreateIntCast(value, i64, is_signed);
  llvm::Value* negative = is_signed ? b.CreateICmpSLT(wide, b.getInt64(0)) : b.getFalse();
  llvm::Value* magnitude = b.CreateSelect(negative, b.CreateSub(b.getInt64(0), wide), wide);
  // Keep the top 24 significant bits, the bits below them folded into a
  // sticky lowest kept bit; then the conversion to f32 is exact.
  llvm::Value* leading_zeros = b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, magnitude, b.getTrue());
  llvm::Value* drop = b.CreateSelect(b.CreateICmpULT(magnitude, b.getInt64(1ull << 24)), b.getInt64(0),
                                     b.CreateSub(b.getInt64(40), leading_zeros));
  llvm::Value* dropped_mask = b.CreateSub(b.CreateShl(b.getInt64(1), drop), b.getInt64(1));
  llvm::Value* sticky = b.CreateICmpNE(b.CreateAnd(magnitude, dropped_mask), b.getInt64(0));
  llvm::Value* kept =
      b.CreateOr(b.CreateAnd(magnitude, b.CreateNot(dropped_mask)), b.CreateShl(b.CreateZExt(sticky, i64), drop));
  llvm::Value* rounded = b.CreateUIToFP(kept, b.getFloatTy());
  return b.CreateSelect(negative, b.CreateFNeg(rounded), rounded);
}

}  // namespace kiln::lowering
