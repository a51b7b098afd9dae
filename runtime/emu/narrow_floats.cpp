// f16 and bf16 in a retargeted module become 16-bit integers before the host
// backend sees them, so that no host instruction ever converts a narrow
// float: x86 instructions that do (F16C, AVX-512 FP16 and BF16,
// AVX-NE-CONVERT) round, flush or quiet differently from the GPU's cvt, and
// the backend also routes values that are only moved (a select, a bitcast,
// a store) through a conversion pair of its own choosing. Two steps:
// 1. Every operation that computes on a narrow float becomes explicit:
//      fpext, fptrunc, sitofp, uitofp   -> kiln_emu_* hooks on the 16-bit pattern
//      fadd fsub fmul fdiv frem, fcmp,  -> widened to f32 (exact), computed
//      fptosi/fptoui[.sat], min/max,       there, rounded back once: correctly
//      sqrt, floor/ceil/trunc/rint/round   rounded, as f32 has 2p + 2 bits
//      fma                              -> a hook rounding once (round to odd)
//      atomicrmw fadd                   -> a hook: a compare-and-swap loop on the pattern
//      fneg, fabs, copysign             -> the sign bit, in integer arithmetic
// 2. Every remaining narrow value, which is only moved (loads, stores,
//    bitcasts, phis, selects, atomic exchanges, vector element moves, the kernel's
//    parameters, constants), becomes an i16 (or a vector of i16).
// Any other operation on a narrow float is a one-line error naming it.
#include "narrow_floats.hpp"

#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include "kiln/lowering/compile.hpp"

#include <map>

namespace kiln::runtime::emu {

namespace {

bool is_narrow(const llvm::Type* type) { return type->isHalfTy() || type->isBFloatTy(); }
bool has_narrow(const llvm::Type* type) { return is_narrow(type->getScalarType()); }

bool touches_narrow(const llvm::Instruction& instruction) {
  if (has_narrow(instruction.getType())) return true;
  for (const llvm::Use& operand : instruction.operands())
    if (has_narrow(operand->getType())) return true;
  return false;
}

[[noreturn]] void fail_on(const KernelDescription& kernel, const llvm::Instruction& instruction,
                          const std::string& why) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  instruction.print(stream);
  throw lowering::LoweringError("emu: kernel " + kernel.name + ": " + why + ":" + text);
}

/// Whether `instruction` only moves bits of its operands and result: data
/// movement, and calls of external functions and NVVM intrinsics (hooks
/// receive 16-bit values as integers: retarget_module's redirect_call).
bool moves_bits(const llvm::Instruction& instruction) {
  if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction)) {
    const llvm::Function* callee = call->getCalledFunction();
    return !callee || !callee->isIntrinsic() || callee->getName().starts_with("llvm.nvvm.");
  }
  if (const auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&instruction))
    return rmw->getOperation() == llvm::AtomicRMWInst::Xchg;
  return llvm::isa<llvm::LoadInst, llvm::StoreInst, llvm::BitCastInst, llvm::PHINode, llvm::SelectInst,
                   llvm::ExtractElementInst, llvm::InsertElementInst, llvm::ShuffleVectorInst, llvm::ExtractValueInst,
                   llvm::InsertValueInst, llvm::FreezeInst, llvm::ReturnInst>(instruction);
}

/// Step 1: the operations that compute on narrow floats, made explicit.
class NarrowFloatArithmetic {
 public:
  NarrowFloatArithmetic(llvm::Module& module, const KernelDescription& kernel)
      : module_(module), kernel_(kernel), builder_(module.getContext()) {}

  void run() {
    std::vector<llvm::Instruction*> work;
    for (llvm::Function& function : module_)
      for (llvm::Instruction& instruction : llvm::instructions(function))
        if (touches_narrow(instruction) && !moves_bits(instruction)) work.push_back(&instruction);
    for (llvm::Instruction* instruction : work) {
      builder_.SetInsertPoint(instruction);
      llvm::Value* replacement = lower(*instruction);
      instruction->replaceAllUsesWith(replacement);
      instruction->eraseFromParent();
    }
  }

 private:
  [[noreturn]] void fail(const llvm::Instruction& instruction, const std::string& why) {
    fail_on(kernel_, instruction, why);
  }

  llvm::FunctionCallee hook(const char* name, llvm::Type* result, std::vector<llvm::Type*> parameters) {
    return module_.getOrInsertFunction(name, llvm::FunctionType::get(result, parameters, false));
  }

  llvm::Type* f32() { return builder_.getFloatTy(); }
  llvm::Type* i32() { return builder_.getInt32Ty(); }

  /// The 16-bit pattern of narrow `value`, zero-extended to i32 (the hooks' ABI).
  llvm::Value* pattern(llvm::Value* value) {
    return builder_.CreateZExt(builder_.CreateBitCast(value, builder_.getInt16Ty()), i32());
  }
  /// The narrow value of type `type` whose pattern is the low 16 bits of `word`.
  llvm::Value* narrow(llvm::Value* word, llvm::Type* type) {
    return builder_.CreateBitCast(builder_.CreateTrunc(word, builder_.getInt16Ty()), type);
  }

  /// Narrow `value` widened to f32, exactly.
  llvm::Value* widen(llvm::Value* value) {
    const char* name = value->getType()->isHalfTy() ? "kiln_emu_f16_to_f32" : "kiln_emu_bf16_to_f32";
    return builder_.CreateCall(hook(name, f32(), {i32()}), {pattern(value)});
  }
  /// `value` (f32, f64, or an integer of `is_signed`ness) rounded once to narrow `type`.
  llvm::Value* round(llvm::Value* value, llvm::Type* type, bool is_signed = false) {
    const bool half = type->isHalfTy();
    llvm::Type* source = value->getType();
    if (source->isFloatTy())
      return narrow(
          builder_.CreateCall(hook(half ? "kiln_emu_f32_to_f16" : "kiln_emu_f32_to_bf16", i32(), {f32()}), {value}),
          type);
    if (source->isDoubleTy())
      return narrow(
          builder_.CreateCall(
              hook(half ? "kiln_emu_f64_to_f16" : "kiln_emu_f64_to_bf16", i32(), {builder_.getDoubleTy()}), {value}),
          type);
    llvm::Value* wide = builder_.CreateIntCast(value, builder_.getInt64Ty(), is_signed);
    const char* name = is_signed ? (half ? "kiln_emu_i64_to_f16" : "kiln_emu_i64_to_bf16")
                                 : (half ? "kiln_emu_u64_to_f16" : "kiln_emu_u64_to_bf16");
    return narrow(builder_.CreateCall(hook(name, i32(), {builder_.getInt64Ty()}), {wide}), type);
  }

  /// Each narrow operand of `instruction` widened to f32, the others as they are.
  std::vector<llvm::Value*> widened_operands(llvm::Instruction& instruction, unsigned count) {
    std::vector<llvm::Value*> values;
    for (unsigned i = 0; i < count; ++i) {
      llvm::Value* operand = instruction.getOperand(i);
      values.push_back(is_narrow(operand->getType()) ? widen(operand) : operand);
    }
    return values;
  }

  /// The sign-bit operations: fneg flips it, fabs clears it, copysign takes the second operand's.
  llvm::Value* sign_bit_operation(llvm::Value* x, llvm::Value* sign_source, llvm::Intrinsic::ID id, bool negate) {
    llvm::Value* bits = builder_.CreateBitCast(x, builder_.getInt16Ty());
    llvm::Value* result;
    if (negate) {
      result = builder_.CreateXor(bits, 0x8000);
    } else if (id == llvm::Intrinsic::fabs) {
      result = builder_.CreateAnd(bits, 0x7fff);
    } else {
      llvm::Value* sign = builder_.CreateAnd(builder_.CreateBitCast(sign_source, builder_.getInt16Ty()), 0x8000);
      result = builder_.CreateOr(builder_.CreateAnd(bits, 0x7fff), sign);
    }
    return builder_.CreateBitCast(result, x->getType());
  }

  llvm::Value* lower_intrinsic(llvm::IntrinsicInst& call) {
    const llvm::Intrinsic::ID id = call.getIntrinsicID();
    llvm::Type* type = call.getType();
    const unsigned count = call.arg_size();
    switch (id) {
      case llvm::Intrinsic::fabs: return sign_bit_operation(call.getArgOperand(0), nullptr, id, false);
      case llvm::Intrinsic::copysign:
        return sign_bit_operation(call.getArgOperand(0), call.getArgOperand(1), id, false);
      case llvm::Intrinsic::fma:
      case llvm::Intrinsic::fmuladd: {
        const char* name = type->isHalfTy() ? "kiln_emu_fma_f16" : "kiln_emu_fma_bf16";
        return narrow(builder_.CreateCall(hook(name, i32(), {i32(), i32(), i32()}),
                                          {pattern(call.getArgOperand(0)), pattern(call.getArgOperand(1)),
                                           pattern(call.getArgOperand(2))}),
                      type);
      }
      case llvm::Intrinsic::fptosi_sat:
      case llvm::Intrinsic::fptoui_sat:
        return builder_.CreateIntrinsic(id, {type, f32()}, {widen(call.getArgOperand(0))});
      case llvm::Intrinsic::minimum:
      case llvm::Intrinsic::maximum:
      case llvm::Intrinsic::minnum:
      case llvm::Intrinsic::maxnum:
      case llvm::Intrinsic::sqrt:
      case llvm::Intrinsic::floor:
      case llvm::Intrinsic::ceil:
      case llvm::Intrinsic::trunc:
      case llvm::Intrinsic::rint:
      case llvm::Intrinsic::nearbyint:
      case llvm::Intrinsic::round:
      case llvm::Intrinsic::roundeven:
        if (!is_narrow(type)) break;
        return round(builder_.CreateIntrinsic(f32(), id, widened_operands(call, count)), type);
      default: break;
    }
    fail(call, "no explicit lowering of this f16/bf16 intrinsic for the host");
  }

  llvm::Value* lower(llvm::Instruction& instruction) {
    llvm::Type* type = instruction.getType();
    if (type->isVectorTy() || (instruction.getNumOperands() > 0 && instruction.getOperand(0)->getType()->isVectorTy()))
      fail(instruction, "f16/bf16 arithmetic on vectors has no explicit lowering for the host");
    if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction)) return lower_intrinsic(*call);
    if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&instruction);
        rmw && rmw->getOperation() == llvm::AtomicRMWInst::FAdd) {
      const char* name = type->isHalfTy() ? "kiln_emu_atomic_add_f16" : "kiln_emu_atomic_add_bf16";
      llvm::Value* address = rmw->getPointerOperand();
      return narrow(
          builder_.CreateCall(hook(name, i32(), {address->getType(), i32()}), {address, pattern(rmw->getValOperand())}),
          type);
    }
    switch (instruction.getOpcode()) {
      case llvm::Instruction::FPExt: {
        llvm::Value* wide = widen(instruction.getOperand(0));
        return type->isFloatTy() ? wide : builder_.CreateFPExt(wide, type);
      }
      case llvm::Instruction::FPTrunc: return round(instruction.getOperand(0), type);
      case llvm::Instruction::SIToFP: return round(instruction.getOperand(0), type, true);
      case llvm::Instruction::UIToFP: return round(instruction.getOperand(0), type, false);
      case llvm::Instruction::FPToSI: return builder_.CreateFPToSI(widen(instruction.getOperand(0)), type);
      case llvm::Instruction::FPToUI: return builder_.CreateFPToUI(widen(instruction.getOperand(0)), type);
      case llvm::Instruction::FNeg: return sign_bit_operation(instruction.getOperand(0), nullptr, {}, true);
      case llvm::Instruction::FCmp: {
        const std::vector<llvm::Value*> x = widened_operands(instruction, 2);
        return builder_.CreateFCmp(llvm::cast<llvm::FCmpInst>(instruction).getPredicate(), x[0], x[1]);
      }
      case llvm::Instruction::FAdd:
      case llvm::Instruction::FSub:
      case llvm::Instruction::FMul:
      case llvm::Instruction::FDiv:
      case llvm::Instruction::FRem: {
        const std::vector<llvm::Value*> x = widened_operands(instruction, 2);
        const auto opcode = static_cast<llvm::Instruction::BinaryOps>(instruction.getOpcode());
        return round(builder_.CreateBinOp(opcode, x[0], x[1]), type);
      }
      default: break;
    }
    fail(instruction, "no explicit lowering of this f16/bf16 operation for the host");
  }

  llvm::Module& module_;
  const KernelDescription& kernel_;
  llvm::IRBuilder<> builder_;
};

/// Step 2: the narrow values that remain, each only moved, as 16-bit integers.
class NarrowValuesAsIntegers {
 public:
  NarrowValuesAsIntegers(llvm::Module& module, const KernelDescription& kernel)
      : module_(module), kernel_(kernel), builder_(module.getContext()), i16_(builder_.getInt16Ty()) {}

  void run() {
    std::vector<llvm::Function*> functions;
    for (llvm::Function& function : module_)
      if (!function.isDeclaration()) functions.push_back(&function);
    for (llvm::Function* function : functions) rewrite(*with_integer_parameters(*function));
    for (llvm::Function* function : replaced_functions_) function->eraseFromParent();
  }

 private:
  /// `type` with each f16/bf16 (alone or as a vector's element) an i16.
  llvm::Type* integer_type(llvm::Type* type) {
    if (is_narrow(type)) return i16_;
    if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type); vector && is_narrow(vector->getElementType()))
      return llvm::FixedVectorType::get(i16_, vector->getNumElements());
    return type;
  }

  /// The integer value standing for narrow `value` (itself when not narrow).
  llvm::Value* integer(llvm::Value* value) {
    if (!has_narrow(value->getType())) return value;
    if (auto* constant = llvm::dyn_cast<llvm::Constant>(value))
      return llvm::ConstantExpr::getBitCast(constant, integer_type(constant->getType()));
    return integers_.at(value);
  }

  /// `function` itself, or, when a parameter is narrow, a copy taking i16
  /// there that owns its body (the original is erased at the end).
  llvm::Function* with_integer_parameters(llvm::Function& function) {
    llvm::FunctionType* type = function.getFunctionType();
    if (has_narrow(type->getReturnType()))
      fail_on(kernel_, function.getEntryBlock().front(), "a function returning f16/bf16 has no host lowering");
    std::vector<llvm::Type*> parameters;
    bool any = false;
    for (llvm::Type* parameter : type->params()) {
      parameters.push_back(integer_type(parameter));
      any |= parameters.back() != parameter;
    }
    if (!any) return &function;
    llvm::Function* copy = llvm::Function::Create(llvm::FunctionType::get(type->getReturnType(), parameters, false),
                                                  function.getLinkage(), "", module_);
    copy->copyAttributesFrom(&function);
    copy->splice(copy->begin(), &function);
    copy->takeName(&function);
    for (auto [old_argument, new_argument] : llvm::zip(function.args(), copy->args())) {
      new_argument.takeName(&old_argument);
      if (old_argument.getType() == new_argument.getType()) old_argument.replaceAllUsesWith(&new_argument);
      else integers_[&old_argument] = &new_argument;
    }
    replaced_functions_.push_back(&function);
    return copy;
  }

  void rewrite(llvm::Function& function) {
    std::vector<std::pair<llvm::PHINode*, llvm::PHINode*>> phis;
    std::vector<llvm::Instruction*> replaced;
    // Reverse post-order: every value is rewritten before its uses, but for phis' incoming values.
    for (llvm::BasicBlock* block : llvm::ReversePostOrderTraversal<llvm::Function*>(&function)) {
      for (llvm::Instruction& instruction : *block) {
        if (!touches_narrow(instruction)) continue;
        builder_.SetInsertPoint(&instruction);
        llvm::Value* replacement;
        if (auto* phi = llvm::dyn_cast<llvm::PHINode>(&instruction)) {
          auto* integer_phi = builder_.CreatePHI(integer_type(phi->getType()), phi->getNumIncomingValues());
          phis.emplace_back(phi, integer_phi);
          replacement = integer_phi;
        } else {
          replacement = rewritten(instruction);
        }
        if (has_narrow(instruction.getType())) integers_[&instruction] = replacement;
        else if (replacement) instruction.replaceAllUsesWith(replacement);
        replaced.push_back(&instruction);
      }
    }
    for (auto [phi, integer_phi] : phis)
      for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i)
        integer_phi->addIncoming(integer(phi->getIncomingValue(i)), phi->getIncomingBlock(i));
    for (llvm::Instruction* instruction : replaced) instruction->dropAllReferences();
    for (llvm::Instruction* instruction : replaced) instruction->eraseFromParent();
  }

  /// The integer form of `instruction`, which only moves narrow values; null for a store.
  llvm::Value* rewritten(llvm::Instruction& instruction) {
    llvm::Type* type = integer_type(instruction.getType());
    if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&instruction)) {
      llvm::LoadInst* copy =
          builder_.CreateAlignedLoad(type, load->getPointerOperand(), load->getAlign(), load->isVolatile());
      copy->setAtomic(load->getOrdering(), load->getSyncScopeID());
      copy->copyMetadata(*load);
      return copy;
    }
    if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction)) {
      llvm::StoreInst* copy = builder_.CreateAlignedStore(integer(store->getValueOperand()), store->getPointerOperand(),
                                                          store->getAlign(), store->isVolatile());
      copy->setAtomic(store->getOrdering(), store->getSyncScopeID());
      copy->copyMetadata(*store);
      return nullptr;
    }
    if (llvm::isa<llvm::BitCastInst>(instruction)) {
      llvm::Value* source = integer(instruction.getOperand(0));
      return source->getType() == type ? source : builder_.CreateBitCast(source, type);
    }
    if (auto* select = llvm::dyn_cast<llvm::SelectInst>(&instruction))
      return builder_.CreateSelect(select->getCondition(), integer(select->getTrueValue()),
                                   integer(select->getFalseValue()));
    if (auto* extract = llvm::dyn_cast<llvm::ExtractElementInst>(&instruction))
      return builder_.CreateExtractElement(integer(extract->getVectorOperand()), extract->getIndexOperand());
    if (auto* insert = llvm::dyn_cast<llvm::InsertElementInst>(&instruction))
      return builder_.CreateInsertElement(integer(insert->getOperand(0)), integer(insert->getOperand(1)),
                                          insert->getOperand(2));
    if (auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&instruction))
      return builder_.CreateShuffleVector(integer(shuffle->getOperand(0)), integer(shuffle->getOperand(1)),
                                          shuffle->getShuffleMask());
    if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&instruction)) {
      llvm::AtomicRMWInst* copy =
          builder_.CreateAtomicRMW(rmw->getOperation(), rmw->getPointerOperand(), integer(rmw->getValOperand()),
                                   rmw->getAlign(), rmw->getOrdering(), rmw->getSyncScopeID());
      copy->setVolatile(rmw->isVolatile());
      return copy;
    }
    if (auto* freeze = llvm::dyn_cast<llvm::FreezeInst>(&instruction))
      return builder_.CreateFreeze(integer(freeze->getOperand(0)));
    fail_on(kernel_, instruction, "an f16/bf16 value is used in a way the host lowering does not move as bits");
  }

  llvm::Module& module_;
  const KernelDescription& kernel_;
  llvm::IRBuilder<> builder_;
  llvm::Type* i16_;
  std::map<llvm::Value*, llvm::Value*> integers_;
  std::vector<llvm::Function*> replaced_functions_;
};

}  // namespace

void lower_narrow_floats_to_integers(llvm::Module& module, const KernelDescription& kernel) {
  NarrowFloatArithmetic(module, kernel).run();
  NarrowValuesAsIntegers(module, kernel).run();
}

}  // namespace kiln::runtime::emu
