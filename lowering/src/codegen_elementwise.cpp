// LLVM code generation for element-wise ops: each register of the result is
// computed from the same register of each operand (layout assignment gave
// them one layout). Integer semantics follow ir/OPS.md: C division, shifts
// clamped as PTX does, casts saturating. Floats are IEEE: `div` (LLVM's fdiv,
// which NVPTX emits as div.rn: kiln has no approximate division), sqrt,
// rsqrt (1 / sqrt, both correctly rounded), floor/ceil/trunc/round/rint and
// isnan/isinf, copysign, popc and clz are exact; sin, cos, tan, their
// inverses (atan2 too), sinh, cosh, tanh and their inverses, erf, erfc,
// erfinv, lgamma, cbrt, hypot, log1p, log10, expm1, exp10, pow, float `rem`
// (fmod) and every f64 exponential or logarithm call libdevice's accurate
// __nv_* functions (linked in before O3 by link_libdevice). f32 exp, exp2, log and log2 use PTX's
// ex2/lg2.approx as Triton does: ex2.approx.f32 and lg2.approx.f32 are within
// 2 ulp (lg2: absolute error 2^-22 near 1), and exp(x) = ex2(x * log2 e) adds
// the roundings of the product and of the constant log2 e, a relative error
// up to about 1.25 |x| 2^-24 (2^-17 at the largest finite results);
// fast_exp and fast_exp2 use ex2.approx.ftz.f32 (Triton's exp2), which
// saves ptxas's rescaling of subnormal results by flushing them to +0. f16, bf16
// and fp8 compute in f32 and round back (fp8 converts in integer arithmetic,
// codegen_fp8.cpp).
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <limits>
#include <numbers>

#include "codegen.hpp"
#include "kiln/ir/attribute_enums.hpp"
#include "kiln/ir/op_schema.hpp"

namespace kiln::lowering {

namespace {

using ir::DType;
using ir::OpCode;

/// The lowering of one element of `op`, given one register of each operand.
class ElementLowering {
 public:
  ElementLowering(KernelCodegen& cg, const ir::Operation& op)
      : cg_(cg),
        b_(cg.builder),
        op_(op),
        is_float_(!op.operands[0]->type.is_pointer && ir::is_float(op.operands[0]->type.dtype)),
        is_signed_(ir::is_signed_int(op.operands[0]->type.dtype)) {}

  llvm::Value* lower(std::vector<llvm::Value*> x) {
    const Rule compute = rule(op_.code);
    if (!compute) throw InternalError(std::string(op_.name()) + " reached the element-wise code generator");
    const ir::Type& type = op_.operands[0]->type;
    // fp8 computes in f32 and rounds back; a cast, bitcast or select handles its own.
    const bool computes_fp8 = op_.code != OpCode::cast && op_.code != OpCode::bitcast && op_.code != OpCode::select;
    if (computes_fp8 && !type.is_pointer && is_fp8(type.dtype)) {
      for (llvm::Value*& value : x) value = fp8_to_float(cg_, value, type.dtype);
      llvm::Value* wide = compute(*this, x);
      const ir::Type& result = op_.result()->type;
      return is_fp8(result.dtype) ? float_to_fp8(cg_, wide, result.dtype) : wide;
    }
    return compute(*this, x);
  }

  /// How one element is computed from one register of each operand.
  using Rule = llvm::Value* (*)(ElementLowering& l, const std::vector<llvm::Value*>& x);

  /// The rule of each element-wise and cast op of ops.def; null for the
  /// other families.
  static constexpr Rule rule(OpCode code) {
    using L = ElementLowering;
    using X = const std::vector<llvm::Value*>&;
    using V = llvm::Value*;
    switch (code) {
      case OpCode::add:
        return [](L& l, X x) -> V { return l.is_float_ ? l.b_.CreateFAdd(x[0], x[1]) : l.b_.CreateAdd(x[0], x[1]); };
      case OpCode::sub:
        return [](L& l, X x) -> V { return l.is_float_ ? l.b_.CreateFSub(x[0], x[1]) : l.b_.CreateSub(x[0], x[1]); };
      case OpCode::mul:
        return [](L& l, X x) -> V { return l.is_float_ ? l.b_.CreateFMul(x[0], x[1]) : l.b_.CreateMul(x[0], x[1]); };
      case OpCode::div:
        return [](L& l, X x) -> V {
          return l.is_float_ ? l.b_.CreateFDiv(x[0], x[1]) : l.integer_division(x[0], x[1], false);
        };
      case OpCode::rem:
        return [](L& l, X x) -> V {
          return l.is_float_ ? l.float_remainder(x[0], x[1]) : l.integer_division(x[0], x[1], true);
        };
      case OpCode::minimum:
        return [](L& l, X x) -> V {
          return l.extremum(x, llvm::Intrinsic::minimum, llvm::Intrinsic::smin, llvm::Intrinsic::umin);
        };
      case OpCode::maximum:
        return [](L& l, X x) -> V {
          return l.extremum(x, llvm::Intrinsic::maximum, llvm::Intrinsic::smax, llvm::Intrinsic::umax);
        };
      case OpCode::neg:
        return [](L& l, X x) -> V { return l.is_float_ ? l.b_.CreateFNeg(x[0]) : l.b_.CreateNeg(x[0]); };
      case OpCode::abs: return [](L& l, X x) -> V { return l.absolute(x[0]); };
      case OpCode::and_: return [](L& l, X x) -> V { return l.b_.CreateAnd(x[0], x[1]); };
      case OpCode::or_: return [](L& l, X x) -> V { return l.b_.CreateOr(x[0], x[1]); };
      case OpCode::xor_: return [](L& l, X x) -> V { return l.b_.CreateXor(x[0], x[1]); };
      case OpCode::not_: return [](L& l, X x) -> V { return l.b_.CreateNot(x[0]); };
      case OpCode::shl: return [](L& l, X x) -> V { return l.shift_left(x[0], x[1]); };
      case OpCode::shr: return [](L& l, X x) -> V { return l.shift_right(x[0], x[1]); };
      case OpCode::umulhi: return [](L& l, X x) -> V { return l.multiply_high(x[0], x[1]); };
      case OpCode::popc: return [](L& l, X x) -> V { return l.b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x[0]); };
      case OpCode::clz:
        return [](L& l, X x) -> V { return l.b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x[0], l.b_.getFalse()); };
      case OpCode::fma:
        return [](L& l, X x) -> V {
          return l.b_.CreateIntrinsic(x[0]->getType(), llvm::Intrinsic::fma, {x[0], x[1], x[2]});
        };
      case OpCode::cmp: return [](L& l, X x) -> V { return l.compare(x[0], x[1]); };
      case OpCode::select: return [](L& l, X x) -> V { return l.b_.CreateSelect(x[0], x[1], x[2]); };
      case OpCode::cast: return [](L& l, X x) -> V { return l.cast(x[0]); };
      case OpCode::bitcast: return [](L& l, X x) -> V { return l.bitcast(x[0]); };
      case OpCode::exp: return [](L& l, X x) -> V { return l.in_float(x[0], &L::exp); };
      case OpCode::exp2: return [](L& l, X x) -> V { return l.in_float(x[0], &L::exp2); };
      case OpCode::fast_exp: return [](L& l, X x) -> V { return l.in_float(x[0], &L::fast_exp); };
      case OpCode::fast_exp2: return [](L& l, X x) -> V { return l.in_float(x[0], &L::fast_exp2); };
      case OpCode::log: return [](L& l, X x) -> V { return l.in_float(x[0], &L::log); };
      case OpCode::log2: return [](L& l, X x) -> V { return l.in_float(x[0], &L::log2); };
      case OpCode::log1p: return [](L& l, X x) -> V { return l.in_float(x[0], &L::log1p); };
      case OpCode::sqrt: return [](L& l, X x) -> V { return l.in_float(x[0], &L::sqrt); };
      case OpCode::rsqrt: return [](L& l, X x) -> V { return l.in_float(x[0], &L::rsqrt); };
      case OpCode::sin: return [](L& l, X x) -> V { return l.in_float(x[0], &L::sin); };
      case OpCode::cos: return [](L& l, X x) -> V { return l.in_float(x[0], &L::cos); };
      case OpCode::tanh: return [](L& l, X x) -> V { return l.in_float(x[0], &L::tanh); };
      case OpCode::erf: return [](L& l, X x) -> V { return l.in_float(x[0], &L::erf); };
      case OpCode::floor: return [](L& l, X x) -> V { return l.in_float(x[0], &L::floor); };
      case OpCode::ceil: return [](L& l, X x) -> V { return l.in_float(x[0], &L::ceil); };
      case OpCode::expm1: return [](L& l, X x) -> V { return l.in_float(x[0], &L::expm1); };
      case OpCode::tan: return [](L& l, X x) -> V { return l.in_float(x[0], &L::tan); };
      case OpCode::atan: return [](L& l, X x) -> V { return l.in_float(x[0], &L::atan); };
      case OpCode::asin: return [](L& l, X x) -> V { return l.in_float(x[0], &L::asin); };
      case OpCode::acos: return [](L& l, X x) -> V { return l.in_float(x[0], &L::acos); };
      case OpCode::sinh: return [](L& l, X x) -> V { return l.in_float(x[0], &L::sinh); };
      case OpCode::cosh: return [](L& l, X x) -> V { return l.in_float(x[0], &L::cosh); };
      case OpCode::trunc: return [](L& l, X x) -> V { return l.in_float(x[0], &L::trunc); };
      case OpCode::round: return [](L& l, X x) -> V { return l.in_float(x[0], &L::round); };
      case OpCode::rint: return [](L& l, X x) -> V { return l.in_float(x[0], &L::rint); };
      case OpCode::asinh: return [](L& l, X x) -> V { return l.in_float(x[0], &L::asinh); };
      case OpCode::acosh: return [](L& l, X x) -> V { return l.in_float(x[0], &L::acosh); };
      case OpCode::atanh: return [](L& l, X x) -> V { return l.in_float(x[0], &L::atanh); };
      case OpCode::log10: return [](L& l, X x) -> V { return l.in_float(x[0], &L::log10); };
      case OpCode::exp10: return [](L& l, X x) -> V { return l.in_float(x[0], &L::exp10); };
      case OpCode::cbrt: return [](L& l, X x) -> V { return l.in_float(x[0], &L::cbrt); };
      case OpCode::erfc: return [](L& l, X x) -> V { return l.in_float(x[0], &L::erfc); };
      case OpCode::erfinv: return [](L& l, X x) -> V { return l.in_float(x[0], &L::erfinv); };
      case OpCode::lgamma: return [](L& l, X x) -> V { return l.in_float(x[0], &L::lgamma); };
      case OpCode::pow: return [](L& l, X x) -> V { return l.libdevice_in_float("pow", x[0], x[1]); };
      case OpCode::atan2: return [](L& l, X x) -> V { return l.libdevice_in_float("atan2", x[0], x[1]); };
      case OpCode::hypot: return [](L& l, X x) -> V { return l.libdevice_in_float("hypot", x[0], x[1]); };
      case OpCode::copysign:
        return [](L& l, X x) -> V { return l.b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, x[0], x[1]); };
      case OpCode::isnan: return [](L& l, X x) -> V { return l.is_nan(x[0]); };
      case OpCode::isinf: return [](L& l, X x) -> V { return l.is_infinite(x[0]); };
      default: return nullptr;
    }
  }

 private:
  llvm::Value* extremum(const std::vector<llvm::Value*>& x, llvm::Intrinsic::ID of_floats,
                        llvm::Intrinsic::ID of_signed, llvm::Intrinsic::ID of_unsigned) {
    return b_.CreateBinaryIntrinsic(is_float_ ? of_floats : is_signed_ ? of_signed : of_unsigned, x[0], x[1]);
  }

  llvm::Value* absolute(llvm::Value* x) {
    if (is_float_) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    return is_signed_ ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse()) : x;
  }

  /// Integer div or rem defined for every divisor, so that no LLVM pass may
  /// exploit the undefined behaviour of sdiv/udiv by 0 or of INT_MIN / -1:
  /// the division runs on a divisor of 1 where the real one is 0 (the
  /// kernel has faulted then: emit_division_by_zero_check) or, signed, -1,
  /// whose results need no division: -a, wrapping (INT_MIN / -1 is INT_MIN,
  /// OPS.md), and remainder 0. PTX leaves division by zero "unspecified,
  /// machine-specific", so no device's instruction decides either case.
  llvm::Value* integer_division(llvm::Value* a, llvm::Value* divisor, bool remainder) {
    llvm::Type* type = divisor->getType();
    llvm::Value* one = llvm::ConstantInt::get(type, 1);
    llvm::Value* zero = llvm::ConstantInt::get(type, 0);
    llvm::Value* by_zero = b_.CreateICmpEQ(divisor, zero);
    if (!is_signed_) {
      llvm::Value* safe = b_.CreateSelect(by_zero, one, divisor);
      return remainder ? b_.CreateURem(a, safe) : b_.CreateUDiv(a, safe);
    }
    llvm::Value* by_minus_one = b_.CreateICmpEQ(divisor, llvm::ConstantInt::getAllOnesValue(type));
    llvm::Value* safe = b_.CreateSelect(b_.CreateOr(by_zero, by_minus_one), one, divisor);
    llvm::Value* divided = remainder ? b_.CreateSRem(a, safe) : b_.CreateSDiv(a, safe);
    return b_.CreateSelect(by_minus_one, remainder ? zero : b_.CreateSub(zero, a), divided);
  }

  llvm::Value* shift_left(llvm::Value* value, llvm::Value* amount) {
    const unsigned width = value->getType()->getIntegerBitWidth();
    llvm::Value* too_far = b_.CreateICmpUGE(amount, llvm::ConstantInt::get(amount->getType(), width));
    return b_.CreateSelect(too_far, llvm::ConstantInt::get(value->getType(), 0), b_.CreateShl(value, amount));
  }

  llvm::Value* shift_right(llvm::Value* value, llvm::Value* amount) {
    const unsigned width = value->getType()->getIntegerBitWidth();
    llvm::Value* too_far = b_.CreateICmpUGE(amount, llvm::ConstantInt::get(amount->getType(), width));
    if (is_signed_)  // shifting by width-1 fills with the sign, as a clamped PTX shr.s does
      return b_.CreateAShr(value,
                           b_.CreateSelect(too_far, llvm::ConstantInt::get(amount->getType(), width - 1), amount));
    return b_.CreateSelect(too_far, llvm::ConstantInt::get(value->getType(), 0), b_.CreateLShr(value, amount));
  }

  llvm::Value* multiply_high(llvm::Value* a, llvm::Value* b) {
    const unsigned width = a->getType()->getIntegerBitWidth();
    llvm::Type* wide = b_.getIntNTy(2 * width);
    llvm::Value* product = b_.CreateMul(b_.CreateZExt(a, wide), b_.CreateZExt(b, wide));
    return b_.CreateTrunc(b_.CreateLShr(product, width), a->getType());
  }

  llvm::Value* compare(llvm::Value* a, llvm::Value* b) {
    const std::optional<ir::Predicate> pred = ir::attribute_enum<ir::Predicate>(op_);
    if (!pred)
      throw LoweringError("cmp: unknown predicate `" + op_.symbol_attribute("pred") + "` (" + op_place(op_) + ")");
    using P = llvm::CmpInst::Predicate;
    struct Row {
      P ordered_float;
      P signed_int;
      P unsigned_int;
    };
    // Per ir::Predicate, in its order. Float compares are ordered (false with
    // NaN) except `ne`, which is true with NaN.
    static constexpr Row kRows[] = {
        {P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ},   {P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE},
        {P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT}, {P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE},
        {P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT}, {P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE},
    };
    static_assert(std::size(kRows) == ir::AttributeEnum<ir::Predicate>::symbols.size());
    const Row& row = kRows[static_cast<std::size_t>(*pred)];
    if (is_float_) return b_.CreateFCmp(row.ordered_float, a, b);
    return b_.CreateICmp(is_signed_ ? row.signed_int : row.unsigned_int, a, b);
  }

  llvm::Value* cast(llvm::Value* x) {
    const ir::Type& from = op_.operands[0]->type;
    const ir::Type& to = op_.result()->type;
    llvm::Type* target = cg_.element_type(to, op_);
    cg_.element_type(from, op_);
    if (from.is_pointer || to.is_pointer) {
      if (from.is_pointer && to.is_pointer) return x;
      if (from.is_pointer && (to.dtype == DType::i64 || to.dtype == DType::u64)) return b_.CreatePtrToInt(x, target);
      if (to.is_pointer && (from.dtype == DType::i64 || from.dtype == DType::u64)) return b_.CreateIntToPtr(x, target);
      throw LoweringError("cast: " + ir::to_string(from) + " to " + ir::to_string(to) +
                          " is not a pointer cast the GPU code generator supports (" + op_place(op_) + ")");
    }
    if (is_fp8(to.dtype)) return float_to_fp8(cg_, float_for_fp8(x, from.dtype), to.dtype);
    // From fp8: exactly to f32, then on as from f32.
    const DType source = is_fp8(from.dtype) ? DType::f32 : from.dtype;
    if (source != from.dtype) x = fp8_to_float(cg_, x, from.dtype);
    const bool from_float = ir::is_float(source);
    const bool to_float = ir::is_float(to.dtype);
    if (to.dtype == DType::i1)
      return from_float ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                        : b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
    if (from_float && to_float) {
      // f16 <-> bf16 has no direct conversion: widen to f32 (exact), then round once.
      if (x->getType()->getPrimitiveSizeInBits() == target->getPrimitiveSizeInBits() && x->getType() != target)
        return b_.CreateFPTrunc(b_.CreateFPExt(x, b_.getFloatTy()), target);
      return b_.CreateFPCast(x, target);
    }
    if (from_float)
      return b_.CreateIntrinsic(ir::is_signed_int(to.dtype) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                                {target, x->getType()}, {x});
    if (to_float && to.dtype == DType::bf16 && x->getType()->getIntegerBitWidth() > 24)
      return b_.CreateFPTrunc(integer_round_to_odd_float(cg_, x, ir::is_signed_int(source)), target);
    if (to_float) return ir::is_signed_int(source) ? b_.CreateSIToFP(x, target) : b_.CreateUIToFP(x, target);
    return b_.CreateIntCast(x, target, ir::is_signed_int(source));
  }

  /// `x` of `from` as the f32 whose rounding to fp8 is the correct rounding
  /// of `x`, as the interpreter computes it: exact for fp8, f16, bf16 and
  /// f32; rounded to odd for f64; integers convert to nearest (those that do
  /// not fit in 24 bits overflow every fp8 format either way).
  llvm::Value* float_for_fp8(llvm::Value* x, DType from) {
    if (is_fp8(from)) return fp8_to_float(cg_, x, from);
    if (from == DType::f64) return round_to_odd_float(cg_, x);
    if (ir::is_float(from)) return b_.CreateFPExt(x, b_.getFloatTy());
    return ir::is_signed_int(from) ? b_.CreateSIToFP(x, b_.getFloatTy()) : b_.CreateUIToFP(x, b_.getFloatTy());
  }

  llvm::Value* bitcast(llvm::Value* x) {
    const ir::Type& from = op_.operands[0]->type;
    const ir::Type& to = op_.result()->type;
    llvm::Type* target = cg_.element_type(to, op_);
    if (from.is_pointer && to.is_pointer) return x;
    if (from.is_pointer) return b_.CreatePtrToInt(x, target);
    if (to.is_pointer) return b_.CreateIntToPtr(x, target);
    return b_.CreateBitCast(x, target);
  }

  /// A call of libdevice's `__nv_<name>f` (f32) or `__nv_<name>` (f64) on
  /// `arguments`, declared in the module without a body: link_libdevice
  /// supplies it for the GPU, the emulator maps it to the host's libm.
  llvm::Value* call_libdevice(const std::string& name, const std::vector<llvm::Value*>& arguments) {
    llvm::Type* type = arguments[0]->getType();
    const std::string symbol = "__nv_" + name + (type->isDoubleTy() ? "" : "f");
    std::vector<llvm::Type*> parameters(arguments.size(), type);
    llvm::FunctionCallee callee =
        cg_.module.getOrInsertFunction(symbol, llvm::FunctionType::get(type, parameters, false));
    if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      function->setDoesNotThrow();
      function->setDoesNotAccessMemory();
      function->setWillReturn();
    }
    return b_.CreateCall(callee, arguments);
  }

  /// Float `rem`: fmod, exact, in f32 for f16 and bf16.
  llvm::Value* float_remainder(llvm::Value* a, llvm::Value* b) { return libdevice_in_float("fmod", a, b); }

  /// libdevice's `name` of two floats, in f32 for f16 and bf16, rounded back.
  llvm::Value* libdevice_in_float(const std::string& name, llvm::Value* a, llvm::Value* b) {
    llvm::Type* type = a->getType();
    const bool narrow = type->isHalfTy() || type->isBFloatTy();
    if (!narrow) return call_libdevice(name, {a, b});
    llvm::Value* wide = call_libdevice(name, {b_.CreateFPExt(a, b_.getFloatTy()), b_.CreateFPExt(b, b_.getFloatTy())});
    return b_.CreateFPTrunc(wide, type);
  }

  /// `x` widened exactly to f32 if it is f16 or bf16, for the classification.
  llvm::Value* wide_float(llvm::Value* x) {
    llvm::Type* type = x->getType();
    return type->isHalfTy() || type->isBFloatTy() ? b_.CreateFPExt(x, b_.getFloatTy()) : x;
  }
  llvm::Value* is_nan(llvm::Value* x) {
    llvm::Value* wide = wide_float(x);
    return b_.CreateFCmpUNO(wide, wide);
  }
  llvm::Value* is_infinite(llvm::Value* x) {
    llvm::Value* wide = wide_float(x);
    return b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, wide),
                            llvm::ConstantFP::getInfinity(wide->getType()));
  }

  /// A math unary on `x`, computed in f32 for f16 and bf16 (OPS.md) and
  /// rounded back.
  llvm::Value* in_float(llvm::Value* x, llvm::Value* (ElementLowering::*compute)(llvm::Value* wide)) {
    llvm::Type* type = x->getType();
    const bool narrow = type->isHalfTy() || type->isBFloatTy();
    llvm::Value* result = (this->*compute)(narrow ? b_.CreateFPExt(x, b_.getFloatTy()) : x);
    return narrow ? b_.CreateFPTrunc(result, type) : result;
  }

  // The math unaries on f32 or f64. PTX has approximate exponentials and
  // logarithms for f32 only; f64 calls libdevice.
  static bool is_double(llvm::Value* x) { return x->getType()->isDoubleTy(); }
  llvm::Value* times(llvm::Value* x, double factor) {
    return b_.CreateFMul(x, llvm::ConstantFP::get(x->getType(), factor));
  }
  llvm::Value* exp2(llvm::Value* x) {
    return is_double(x) ? call_libdevice("exp2", {x})
                        : b_.CreateIntrinsic(x->getType(), llvm::Intrinsic::nvvm_ex2_approx_f, {x});
  }
  // f32 flushes in ex2.approx.ftz; f64 has no approximation: libdevice's
  // function, and a result below the least normal double made +0.
  llvm::Value* fast_exp2(llvm::Value* x) {
    return is_double(x) ? flushed(call_libdevice("exp2", {x}))
                        : b_.CreateIntrinsic(x->getType(), llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {x});
  }
  llvm::Value* fast_exp(llvm::Value* x) {
    return is_double(x) ? flushed(call_libdevice("exp", {x})) : fast_exp2(times(x, std::numbers::log2e));
  }
  llvm::Value* flushed(llvm::Value* x) {
    llvm::Value* least_normal = llvm::ConstantFP::get(x->getType(), std::numeric_limits<double>::min());
    return b_.CreateSelect(b_.CreateFCmpOLT(x, least_normal), llvm::ConstantFP::get(x->getType(), 0.0), x);
  }
  llvm::Value* log2(llvm::Value* x) {
    return is_double(x) ? call_libdevice("log2", {x})
                        : b_.CreateIntrinsic(x->getType(), llvm::Intrinsic::nvvm_lg2_approx_f, {x});
  }
  llvm::Value* exp(llvm::Value* x) {
    return is_double(x) ? call_libdevice("exp", {x}) : exp2(times(x, std::numbers::log2e));
  }
  llvm::Value* log(llvm::Value* x) {
    return is_double(x) ? call_libdevice("log", {x}) : times(log2(x), std::numbers::ln2);
  }
  llvm::Value* sqrt(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); }
  llvm::Value* rsqrt(llvm::Value* x) { return b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), sqrt(x)); }
  llvm::Value* log1p(llvm::Value* x) { return call_libdevice("log1p", {x}); }
  llvm::Value* sin(llvm::Value* x) { return call_libdevice("sin", {x}); }
  llvm::Value* cos(llvm::Value* x) { return call_libdevice("cos", {x}); }
  llvm::Value* tanh(llvm::Value* x) { return call_libdevice("tanh", {x}); }
  llvm::Value* erf(llvm::Value* x) { return call_libdevice("erf", {x}); }
  llvm::Value* floor(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x); }
  llvm::Value* ceil(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x); }
  llvm::Value* expm1(llvm::Value* x) { return call_libdevice("expm1", {x}); }
  llvm::Value* tan(llvm::Value* x) { return call_libdevice("tan", {x}); }
  llvm::Value* atan(llvm::Value* x) { return call_libdevice("atan", {x}); }
  llvm::Value* asin(llvm::Value* x) { return call_libdevice("asin", {x}); }
  llvm::Value* acos(llvm::Value* x) { return call_libdevice("acos", {x}); }
  llvm::Value* sinh(llvm::Value* x) { return call_libdevice("sinh", {x}); }
  llvm::Value* cosh(llvm::Value* x) { return call_libdevice("cosh", {x}); }
  llvm::Value* asinh(llvm::Value* x) { return call_libdevice("asinh", {x}); }
  llvm::Value* acosh(llvm::Value* x) { return call_libdevice("acosh", {x}); }
  llvm::Value* atanh(llvm::Value* x) { return call_libdevice("atanh", {x}); }
  llvm::Value* log10(llvm::Value* x) { return call_libdevice("log10", {x}); }
  llvm::Value* exp10(llvm::Value* x) { return call_libdevice("exp10", {x}); }
  llvm::Value* cbrt(llvm::Value* x) { return call_libdevice("cbrt", {x}); }
  llvm::Value* erfc(llvm::Value* x) { return call_libdevice("erfc", {x}); }
  llvm::Value* erfinv(llvm::Value* x) { return call_libdevice("erfinv", {x}); }
  llvm::Value* lgamma(llvm::Value* x) { return call_libdevice("lgamma", {x}); }
  // Exact roundings: cvt.rzi, cvt.rni and, for round (ties away from zero,
  // which PTX has no mode for), NVPTX's expansion through cvt.rzi.
  llvm::Value* trunc(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x); }
  llvm::Value* round(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::round, x); }
  llvm::Value* rint(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x); }

  KernelCodegen& cg_;
  llvm::IRBuilder<>& b_;
  const ir::Operation& op_;
  bool is_float_;  // the operands are floats (fp8 ones computed in f32)
  bool is_signed_;
};

static_assert(ir::first_op_missing(ir::OpFamily::elementwise,
                                   [](OpCode code) { return ElementLowering::rule(code) != nullptr; }) == ir::kOpCount,
              "an elementwise op of ops.def has no rule in ElementLowering::rule");
static_assert(ir::first_op_missing(ir::OpFamily::cast,
                                   [](OpCode code) { return ElementLowering::rule(code) != nullptr; }) == ir::kOpCount,
              "a cast op of ops.def has no rule in ElementLowering::rule");

}  // namespace

llvm::Value* emit_element(KernelCodegen& cg, const ir::Operation& op, std::vector<llvm::Value*> operands) {
  return ElementLowering(cg, op).lower(std::move(operands));
}

void emit_elementwise_op(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& result = *op.result();
  for (const ir::Value* operand : op.operands) cg.element_type(operand->type, op);
  const int count = cg.register_count(result);
  std::vector<const std::vector<llvm::Value*>*> operands;
  for (const ir::Value* operand : op.operands) operands.push_back(&cg.values_of(*operand, count, op));
  const ir::Type& divisor = op.operands.back()->type;
  if ((op.code == OpCode::div || op.code == OpCode::rem) && !ir::is_float(divisor.dtype)) {
    const std::vector<llvm::Value*>& divisors = *operands.back();
    emit_division_by_zero_check(cg, op, divisor.is_tile() ? divisors : std::vector<llvm::Value*>{divisors.front()});
  }
  ElementLowering lowering(cg, op);
  std::vector<llvm::Value*> values;
  std::vector<llvm::Value*> elements(operands.size());
  for (int r = 0; r < count; ++r) {
    for (std::size_t i = 0; i < operands.size(); ++i) elements[i] = (*operands[i])[r];
    values.push_back(lowering.lower(elements));
  }
  cg.define(result, std::move(values));
}

}  // namespace kiln::lowering
