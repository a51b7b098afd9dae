// LLVM code generation for multiple_of: the operand's registers become the
// result's; what the hint says reached the code generator through the axis
// analysis. The GPU trusts the hint, as Triton does. For a target that
// checks hints (GpuTarget::check_hints: the emu device), each element's
// acting copy that is not a multiple calls
//   void @kiln_hint_fault(ptr %what, i32 %element, i64 %value, i32 %kind)
//     what: "multiple_of(N) does not hold at FILE:LINE" (a generic pointer to
//     a constant string); element: the row-major index, -1 for a scalar;
//     value: the element sign- or zero-extended by its dtype (a pointer's
//     address); kind: how to print it, a HintValueKind
// which stops the kernel with the cpu device's message.
#include "codegen.hpp"

namespace kiln::lowering {

namespace {

void emit_multiple_of_check(KernelCodegen& cg, const ir::Operation& op, const std::vector<llvm::Value*>& values) {
  const ir::Value& x = *op.operands[0];
  const ir::Type element = x.type.element();
  llvm::IRBuilder<>& b = cg.builder;
  const std::int64_t divisor = op.int_attribute("value");
  DuplicatedElements copies(cg, x);
  std::vector<int> registers;
  std::vector<llvm::Value*> fails(values.size(), nullptr);
  llvm::Value* any = nullptr;
  for (std::size_t reg = 0; reg < values.size(); ++reg) {
    if (!copies.register_may_act(static_cast<int>(reg))) continue;
    llvm::Value* bits = element.is_pointer ? b.CreatePtrToInt(values[reg], b.getInt64Ty()) : values[reg];
    llvm::Value* remainder = b.CreateAnd(bits, llvm::ConstantInt::get(bits->getType(), divisor - 1));
    fails[reg] = b.CreateICmpNE(remainder, llvm::ConstantInt::get(bits->getType(), 0));
    registers.push_back(static_cast<int>(reg));
    any = any ? b.CreateOr(any, fails[reg]) : fails[reg];
  }
  if (!any) return;
  if (llvm::Value* acts = copies.thread_acts()) any = b.CreateAnd(acts, any);

  const std::string location = ir::to_string(op.loc);
  const std::string what = "multiple_of(" + std::to_string(divisor) + ") does not hold" +
                           (location.empty() ? std::string() : " at " + location);
  llvm::Type* generic = llvm::PointerType::get(cg.context, 0);
  llvm::FunctionCallee fault = cg.module.getOrInsertFunction(
      kHintFaultFunction,
      llvm::FunctionType::get(b.getVoidTy(), {generic, b.getInt32Ty(), b.getInt64Ty(), b.getInt32Ty()}, false));
  const HintValueKind kind = element.is_pointer                 ? HintValueKind::pointer
                             : ir::is_signed_int(element.dtype) ? HintValueKind::signed_integer
                                                                : HintValueKind::unsigned_integer;

  auto* report = llvm::BasicBlock::Create(cg.context, "hint.fault", cg.kernel);
  auto* done = llvm::BasicBlock::Create(cg.context, "hint.done", cg.kernel);
  b.CreateCondBr(any, report, done);
  b.SetInsertPoint(report);
  llvm::Value* text =
      b.CreateAddrSpaceCast(b.CreateGlobalString(what, "hint_fault_message", kGlobalAddressSpace, &cg.module), generic);
  for (int reg : registers) {
    auto* element_fault = llvm::BasicBlock::Create(cg.context, "hint.element", cg.kernel);
    auto* next = llvm::BasicBlock::Create(cg.context, "hint.next", cg.kernel);
    b.CreateCondBr(fails[static_cast<std::size_t>(reg)], element_fault, next);
    b.SetInsertPoint(element_fault);
    llvm::Value* value = values[static_cast<std::size_t>(reg)];
    if (element.is_pointer) value = b.CreatePtrToInt(value, b.getInt64Ty());
    else if (kind == HintValueKind::signed_integer) value = b.CreateSExt(value, b.getInt64Ty());
    else value = b.CreateZExt(value, b.getInt64Ty());
    llvm::Value* index = x.type.is_tile() ? copies.flat_index(reg) : b.getInt32(-1);
    b.CreateCall(fault, {text, index, value, b.getInt32(static_cast<std::int32_t>(kind))});
    b.CreateBr(next);
    b.SetInsertPoint(next);
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

}  // namespace

void emit_hint_op(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& x = *op.operands[0];
  const std::vector<llvm::Value*> values = cg.values_of(x, static_cast<std::size_t>(cg.register_count(x)), op);
  if (cg.target.check_hints) emit_multiple_of_check(cg, op, values);
  cg.define(*op.result(), values);
}

}  // namespace kiln::lowering
