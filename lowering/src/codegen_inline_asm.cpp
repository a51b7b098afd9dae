// LLVM code generation for inline_asm: one call per register a thread holds
// of the result (every element of the thread's layout, copies included, as
// Triton does). For a GPU the call is LLVM inline asm with the op's text and
// constraints, each operand passed in the integer or float type its register
// class holds (h: i16, r: i32, l: i64, f: float, d: double; a float in an
// integer class is bitcast); a non-pure asm has side effects, so LLVM keeps
// it. For a target that runs it on the host (GpuTarget::inline_asm_on_host:
// the emu device) each element calls
//   i64 @kiln_inline_asm_host(ptr %key, ptr %arguments)
// with the operands' bits zero-extended into an i64 array allocated in the
// entry block, and the result's bits come back (the host reference).
#include <llvm/IR/InlineAsm.h>

#include <algorithm>

#include "codegen.hpp"
#include "kiln/ir/inline_asm.hpp"

namespace kiln::lowering {

namespace {

llvm::Type* register_class_type(llvm::LLVMContext& context, char register_class) {
  switch (register_class) {
    case 'h': return llvm::Type::getInt16Ty(context);
    case 'r': return llvm::Type::getInt32Ty(context);
    case 'l': return llvm::Type::getInt64Ty(context);
    case 'f': return llvm::Type::getFloatTy(context);
    case 'd': return llvm::Type::getDoubleTy(context);
    default:
      throw InternalError("inline_asm: register class '" + std::string(1, register_class) + "' passed the verifier");
  }
}

/// `value` as type `to` of equal width (integers and floats bitcast).
llvm::Value* same_bits_as(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Type* to) {
  return value->getType() == to ? value : b.CreateBitCast(value, to);
}

std::vector<llvm::Value*> emit_asm_calls(KernelCodegen& cg, const ir::Operation& op,
                                         const std::vector<const std::vector<llvm::Value*>*>& operands, int count,
                                         llvm::Type* result_type) {
  llvm::IRBuilder<>& b = cg.builder;
  const std::string& constraints = op.string_attribute("constraints");
  const std::vector<char> classes = ir::inline_asm_register_classes(constraints);
  std::vector<llvm::Type*> argument_types;
  for (std::size_t i = 1; i < classes.size(); ++i)
    argument_types.push_back(register_class_type(cg.context, classes[i]));
  auto* type = llvm::FunctionType::get(register_class_type(cg.context, classes[0]), argument_types, false);
  llvm::InlineAsm* asm_code =
      llvm::InlineAsm::get(type, op.string_attribute("asm"), constraints, !ir::inline_asm_is_pure(op));
  std::vector<llvm::Value*> values;
  for (int r = 0; r < count; ++r) {
    std::vector<llvm::Value*> arguments;
    for (std::size_t i = 0; i < operands.size(); ++i)
      arguments.push_back(same_bits_as(b, (*operands[i])[static_cast<std::size_t>(r)], argument_types[i]));
    values.push_back(same_bits_as(b, b.CreateCall(type, asm_code, arguments), result_type));
  }
  return values;
}

std::vector<llvm::Value*> emit_host_calls(KernelCodegen& cg, const ir::Operation& op,
                                          const std::vector<const std::vector<llvm::Value*>*>& operands, int count,
                                          llvm::Type* result_type) {
  llvm::IRBuilder<>& b = cg.builder;
  llvm::Type* generic = llvm::PointerType::get(cg.context, 0);
  llvm::FunctionCallee host = cg.module.getOrInsertFunction(
      kInlineAsmHostFunction, llvm::FunctionType::get(b.getInt64Ty(), {generic, generic}, false));
  llvm::Value* key = b.CreateAddrSpaceCast(
      b.CreateGlobalString(op.string_attribute("key"), "inline_asm_key", kGlobalAddressSpace, &cg.module), generic);
  auto* array_type = llvm::ArrayType::get(b.getInt64Ty(), std::max<std::size_t>(operands.size(), 1));
  llvm::BasicBlock& entry = cg.kernel->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
  llvm::Value* arguments = at_entry.CreateAlloca(array_type, nullptr, "inline_asm_arguments");
  auto* result_bits = b.getIntNTy(static_cast<unsigned>(ir::dtype_bits(op.result()->type.dtype)));
  std::vector<llvm::Value*> values;
  for (int r = 0; r < count; ++r) {
    for (std::size_t i = 0; i < operands.size(); ++i) {
      llvm::Value* value = (*operands[i])[static_cast<std::size_t>(r)];
      auto* bits = b.getIntNTy(static_cast<unsigned>(ir::dtype_bits(op.operands[i]->type.dtype)));
      b.CreateStore(b.CreateZExt(same_bits_as(b, value, bits), b.getInt64Ty()),
                    b.CreateConstInBoundsGEP2_32(array_type, arguments, 0, static_cast<unsigned>(i)));
    }
    llvm::Value* bits = b.CreateTrunc(b.CreateCall(host, {key, arguments}), result_bits);
    values.push_back(same_bits_as(b, bits, result_type));
  }
  return values;
}

}  // namespace

void emit_inline_asm_op(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& result = *op.result();
  llvm::Type* result_type = cg.element_type(result.type, op);
  const int count = cg.register_count(result);
  std::vector<const std::vector<llvm::Value*>*> operands;
  for (const ir::Value* operand : op.operands) operands.push_back(&cg.values_of(*operand, count, op));
  cg.define(result, cg.target.inline_asm_on_host ? emit_host_calls(cg, op, operands, count, result_type)
                                                 : emit_asm_calls(cg, op, operands, count, result_type));
}

}  // namespace kiln::lowering
