// LLVM code generation for the hints (multiple_of, max_contiguous): the
// operand's registers become the result's; what the hint says reached the
// code generator through the axis analysis. The GPU trusts the hint, as
// Triton does. For a target that checks hints (GpuTarget::check_hints: the
// emu device), each element's acting copy that breaks the promise calls
//   void @kiln_hint_fault(ptr %what, i32 %element, i64 %value, i32 %kind)
//     (multiple_of) what: "multiple_of(N) does not hold at FILE:LINE" (a
//     generic pointer to a constant string); element: the row-major index,
//     -1 for a scalar; value: the element sign- or zero-extended by its dtype
//     (a pointer's address); kind: how to print it, a HintValueKind
//   void @kiln_contiguity_fault(ptr %what, i32 %element, i64 %value, i64 %previous, i32 %kind)
//     (max_contiguous) the same, with the element before it in `previous`
// which stops the kernel with the cpu device's message.
#include <functional>

#include "codegen.hpp"

namespace kiln::lowering {

namespace {

/// Which registers break the promise: one i1 per register (null where the
/// register does not act), and the fault to call for one of them.
struct HintFailures {
  std::vector<llvm::Value*> fails;
  /// The call's arguments after `what` for register `reg`.
  std::function<std::vector<llvm::Value*>(int reg)> arguments;
  llvm::FunctionType* fault_type = nullptr;
  const char* fault_name = nullptr;
};

HintValueKind value_kind(const ir::Type& element) {
  return element.is_pointer                 ? HintValueKind::pointer
         : ir::is_signed_int(element.dtype) ? HintValueKind::signed_integer
                                            : HintValueKind::unsigned_integer;
}

llvm::Value* widen(llvm::IRBuilder<>& b, llvm::Value* value, HintValueKind kind) {
  if (kind == HintValueKind::pointer) return b.CreatePtrToInt(value, b.getInt64Ty());
  if (kind == HintValueKind::signed_integer) return b.CreateSExt(value, b.getInt64Ty());
  return b.CreateZExt(value, b.getInt64Ty());
}

/// Branches to a fault call for each failing register of a thread whose copies act.
void report_failures(KernelCodegen& cg, const ir::Operation& op, DuplicatedElements& copies,
                     const HintFailures& failures) {
  llvm::IRBuilder<>& b = cg.builder;
  llvm::Value* any = nullptr;
  for (llvm::Value* fail : failures.fails)
    if (fail) any = any ? b.CreateOr(any, fail) : fail;
  if (!any) return;
  if (llvm::Value* acts = copies.thread_acts()) any = b.CreateAnd(acts, any);

  const std::string location = ir::to_string(op.loc);
  const std::string what = std::string(op.name()) + "(" + std::to_string(op.int_attribute("value")) +
                           ") does not hold" + (location.empty() ? std::string() : " at " + location);
  llvm::FunctionCallee fault = cg.module.getOrInsertFunction(failures.fault_name, failures.fault_type);
  auto* report = llvm::BasicBlock::Create(cg.context, "hint.fault", cg.kernel);
  auto* done = llvm::BasicBlock::Create(cg.context, "hint.done", cg.kernel);
  b.CreateCondBr(any, report, done);
  b.SetInsertPoint(report);
  llvm::Value* text =
      b.CreateAddrSpaceCast(b.CreateGlobalString(what, "hint_fault_message", kGlobalAddressSpace, &cg.module),
                            failures.fault_type->getParamType(0));
  for (std::size_t reg = 0; reg < failures.fails.size(); ++reg) {
    if (!failures.fails[reg]) continue;
    auto* element_fault = llvm::BasicBlock::Create(cg.context, "hint.element", cg.kernel);
    auto* next = llvm::BasicBlock::Create(cg.context, "hint.next", cg.kernel);
    b.CreateCondBr(failures.fails[reg], element_fault, next);
    b.SetInsertPoint(element_fault);
    std::vector<llvm::Value*> arguments = {text};
    for (llvm::Value* argument : failures.arguments(static_cast<int>(reg))) arguments.push_back(argument);
    b.CreateCall(fault, arguments);
    b.CreateBr(next);
    b.SetInsertPoint(next);
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

/// Every element (with a `group`: the first of each group along the last
/// dimension) is a multiple of the value.
void emit_multiple_of_check(KernelCodegen& cg, const ir::Operation& op, const std::vector<llvm::Value*>& values) {
  const ir::Value& x = *op.operands[0];
  const ir::Type element = x.type.element();
  llvm::IRBuilder<>& b = cg.builder;
  const std::int64_t divisor = op.int_attribute("value");
  const ir::Attribute* group = op.find_attribute("group");
  DuplicatedElements copies(cg, x);
  const HintValueKind kind = value_kind(element);
  HintFailures failures;
  failures.fails.assign(values.size(), nullptr);
  for (std::size_t reg = 0; reg < values.size(); ++reg) {
    if (!copies.register_may_act(static_cast<int>(reg))) continue;
    llvm::Value* bits = element.is_pointer ? b.CreatePtrToInt(values[reg], b.getInt64Ty()) : values[reg];
    llvm::Value* remainder = b.CreateAnd(bits, llvm::ConstantInt::get(bits->getType(), divisor - 1));
    llvm::Value* fail = b.CreateICmpNE(remainder, llvm::ConstantInt::get(bits->getType(), 0));
    if (group) {
      llvm::Value* column = copies.coordinates(static_cast<int>(reg)).back();
      const auto inside = static_cast<std::uint32_t>(std::get<std::int64_t>(*group) - 1);
      fail = b.CreateAnd(fail, b.CreateICmpEQ(b.CreateAnd(column, b.getInt32(inside)), b.getInt32(0)));
    }
    failures.fails[reg] = fail;
  }
  failures.arguments = [&](int reg) -> std::vector<llvm::Value*> {
    llvm::Value* index = x.type.is_tile() ? copies.flat_index(reg) : b.getInt32(-1);
    return {index, widen(b, values[static_cast<std::size_t>(reg)], kind), b.getInt32(static_cast<std::int32_t>(kind))};
  };
  llvm::Type* generic = llvm::PointerType::get(cg.context, 0);
  failures.fault_type =
      llvm::FunctionType::get(b.getVoidTy(), {generic, b.getInt32Ty(), b.getInt64Ty(), b.getInt32Ty()}, false);
  failures.fault_name = kHintFaultFunction;
  report_failures(cg, op, copies, failures);
}

/// Along the last dimension each element not at a multiple of the value is
/// its predecessor plus one. The predecessor may live in another thread, so
/// the tile crosses shared memory: acting copies store it row-major, and
/// each register reads the element before its own.
void emit_max_contiguous_check(KernelCodegen& cg, const ir::Operation& op, const std::vector<llvm::Value*>& values) {
  const ir::Value& x = *op.operands[0];
  llvm::IRBuilder<>& b = cg.builder;
  const auto run = static_cast<std::uint32_t>(op.int_attribute("value"));
  DuplicatedElements copies(cg, x);
  llvm::Type* type = cg.memory_type(x.type.element(), op);
  std::uint64_t elements = 1;
  for (std::int64_t size : x.type.shape) elements *= static_cast<std::uint64_t>(size);
  llvm::Value* buffer = SharedScratch(cg).take(elements * cg.module.getDataLayout().getTypeAllocSize(type));

  std::vector<llvm::Value*> starts(values.size(), nullptr), indices(values.size(), nullptr);
  for (std::size_t reg = 0; reg < values.size(); ++reg) {
    indices[reg] = copies.flat_index(static_cast<int>(reg));
    llvm::Value* column = copies.coordinates(static_cast<int>(reg)).back();
    starts[reg] = b.CreateICmpEQ(b.CreateAnd(column, b.getInt32(run - 1)), b.getInt32(0));
  }
  auto store_acting = [&] {
    auto store_registers = [&] {
      for (std::size_t reg = 0; reg < values.size(); ++reg)
        if (copies.register_may_act(static_cast<int>(reg)))
          b.CreateStore(values[reg], b.CreateGEP(type, buffer, indices[reg]));
    };
    llvm::Value* acts = copies.thread_acts();
    if (!acts) return store_registers();
    auto* store_block = llvm::BasicBlock::Create(cg.context, "contiguity.store", cg.kernel);
    auto* stored = llvm::BasicBlock::Create(cg.context, "contiguity.stored", cg.kernel);
    b.CreateCondBr(acts, store_block, stored);
    b.SetInsertPoint(store_block);
    store_registers();
    b.CreateBr(stored);
    b.SetInsertPoint(stored);
  };
  auto load_predecessors = [&] {
    std::vector<llvm::Value*> previous(values.size(), nullptr);
    for (std::size_t reg = 0; reg < values.size(); ++reg) {
      if (!copies.register_may_act(static_cast<int>(reg))) continue;
      // A run's first element reads itself: every element read was stored.
      llvm::Value* before = b.CreateSelect(starts[reg], indices[reg], b.CreateSub(indices[reg], b.getInt32(1)));
      previous[reg] = b.CreateLoad(type, b.CreateGEP(type, buffer, before));
    }
    return previous;
  };
  const std::vector<llvm::Value*> previous = round_trip_through_shared_memory(cg, store_acting, load_predecessors);

  const HintValueKind kind = value_kind(x.type.element());
  HintFailures failures;
  failures.fails.assign(values.size(), nullptr);
  for (std::size_t reg = 0; reg < values.size(); ++reg) {
    if (!previous[reg]) continue;
    llvm::Value* next = b.CreateAdd(previous[reg], llvm::ConstantInt::get(type, 1));
    failures.fails[reg] = b.CreateAnd(b.CreateNot(starts[reg]), b.CreateICmpNE(values[reg], next));
  }
  failures.arguments = [&](int reg) -> std::vector<llvm::Value*> {
    const auto r = static_cast<std::size_t>(reg);
    return {indices[r], widen(b, values[r], kind), widen(b, previous[r], kind),
            b.getInt32(static_cast<std::int32_t>(kind))};
  };
  llvm::Type* generic = llvm::PointerType::get(cg.context, 0);
  failures.fault_type = llvm::FunctionType::get(
      b.getVoidTy(), {generic, b.getInt32Ty(), b.getInt64Ty(), b.getInt64Ty(), b.getInt32Ty()}, false);
  failures.fault_name = kContiguityFaultFunction;
  report_failures(cg, op, copies, failures);
}

}  // namespace

void emit_hint_op(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& x = *op.operands[0];
  const std::vector<llvm::Value*> values = cg.values_of(x, static_cast<std::size_t>(cg.register_count(x)), op);
  if (cg.target.check_hints) {
    if (op.code == ir::OpCode::max_contiguous) emit_max_contiguous_check(cg, op, values);
    else emit_multiple_of_check(cg, op, values);
  }
  cg.define(*op.result(), values);
}

}  // namespace kiln::lowering
