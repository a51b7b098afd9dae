// LLVM code generation for print and assert through CUDA's device ABI, and
// for barrier (one bar.sync: it orders global memory across the CTA too):
//   i32 @vprintf(ptr %format, ptr %arguments)
//     `arguments` points to a local buffer holding the values in format
//     order, each at its natural alignment (an LLVM struct): i32 for i1, i8,
//     i16, i32 (sign- or zero-extended by the dtype) and u32, i64 for i64,
//     u64 and pointers, double for every float (promoted as C varargs are).
//   void @__assertfail(ptr %message, ptr %file, i32 %line, ptr %function, i64 %char_size)
//     message: the op's message; file and line: the op's source location
//     (the file as recorded, "" and 0 when unknown); function: the kernel's
//     name; char_size: 1.
// Strings are constants in global memory, passed as generic pointers.
//
// print: one line per element (the interpreter prints a tile on one line,
// but a GPU thread holds only some elements and vprintf takes at most 32
// arguments), printed by the element's acting copy:
//   pid (X, Y, Z) idx (I, J) PREFIX V0 V1…
// A print of scalars only prints one line per program, exactly the
// interpreter's: `pid (X, Y, Z) PREFIX V0 V1…`. The prefix loses its
// trailing spaces and is left out when empty, as in the interpreter; tile
// operands share one shape and give their element at idx, scalars their
// value. Values: integers in decimal, pointers as 0x and hex, floats with %.9g
// (%.17g for f64), which round-trips but may show more digits than the
// interpreter's shortest form.
//
// assert: each acting copy whose condition is false prints the
// interpreter's fault message
//   kernel NAME: assert failed at FILE:LINE: MESSAGE (program (X, Y, Z), element I)
// (`element I` for a tile condition, its row-major index) and calls
// __assertfail, which stops the kernel on a GPU. Integer div and rem check
// their divisor the same way (OPS.md: division by zero is a fault), printing
//   kernel NAME: integer division by zero in div at FILE:LINE: element I of the divisor is 0 (program (X, Y, Z))
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <map>

#include "codegen.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;

/// `text` with each % doubled, for a printf format.
std::string escape_percent(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    escaped += c;
    if (c == '%') escaped += '%';
  }
  return escaped;
}

/// vprintf's argument buffer and the calls around it.
class DevicePrintf {
 public:
  explicit DevicePrintf(KernelCodegen& cg) : cg_(cg), b_(cg.builder) {}

  /// A generic pointer to `text`, a constant string in global memory.
  llvm::Value* string(const std::string& text, const char* name) {
    llvm::GlobalVariable* global = b_.CreateGlobalString(text, name, kGlobalAddressSpace, &cg_.module);
    return b_.CreateAddrSpaceCast(global, llvm::PointerType::get(cg_.context, 0));
  }

  /// The printf conversion of a value of `type` as `promote` passes it.
  static std::string conversion(const ir::Type& type) {
    if (type.is_pointer) return "0x%llx";
    switch (type.dtype) {
      case ir::DType::i1:
      case ir::DType::i8:
      case ir::DType::i16:
      case ir::DType::i32: return "%d";
      case ir::DType::u8:
      case ir::DType::u16:
      case ir::DType::u32: return "%u";
      case ir::DType::i64: return "%lld";
      case ir::DType::u64: return "%llu";
      case ir::DType::f64: return "%.17g";
      default: return "%.9g";
    }
  }

  /// `value` as vprintf reads it: integers narrower than 32 bits widened by
  /// their signedness (i1 as 0 or 1), pointers as i64, floats as double.
  llvm::Value* promote(llvm::Value* value, const ir::Type& type) {
    llvm::Type* i32 = b_.getInt32Ty();
    if (type.is_pointer) return b_.CreatePtrToInt(value, b_.getInt64Ty());
    switch (type.dtype) {
      case ir::DType::i1:
      case ir::DType::u8:
      case ir::DType::u16:
      case ir::DType::u32: return b_.CreateZExtOrBitCast(value, i32);
      case ir::DType::i8:
      case ir::DType::i16:
      case ir::DType::i32: return b_.CreateSExtOrBitCast(value, i32);
      case ir::DType::i64:
      case ir::DType::u64:
      case ir::DType::f64: return value;
      default: return b_.CreateFPExt(value, b_.getDoubleTy());
    }
  }

  /// The three program ids (i32).
  std::vector<llvm::Value*> program_ids() {
    return {cg_.read_special_register(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
            cg_.read_special_register(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y),
            cg_.read_special_register(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z)};
  }

  /// vprintf(format, a buffer holding `arguments`). The buffer is allocated
  /// in the kernel's entry block, one per argument layout of this op.
  void call(llvm::Value* format, const std::vector<llvm::Value*>& arguments) {
    llvm::Type* generic = llvm::PointerType::get(cg_.context, 0);
    llvm::Value* buffer = llvm::ConstantPointerNull::get(llvm::PointerType::get(cg_.context, 0));
    if (!arguments.empty()) {
      std::vector<llvm::Type*> fields;
      for (llvm::Value* argument : arguments) fields.push_back(argument->getType());
      auto* layout = llvm::StructType::get(cg_.context, fields);
      llvm::AllocaInst*& allocated = buffers_[layout];
      if (!allocated) {
        llvm::BasicBlock& entry = cg_.kernel->getEntryBlock();
        llvm::IRBuilder<> at_entry(&entry, entry.getFirstInsertionPt());
        allocated = at_entry.CreateAlloca(layout, nullptr, "printf_arguments");
      }
      buffer = allocated;
      for (std::size_t i = 0; i < arguments.size(); ++i)
        b_.CreateStore(arguments[i], b_.CreateStructGEP(layout, buffer, static_cast<unsigned>(i)));
    }
    llvm::FunctionCallee vprintf =
        cg_.module.getOrInsertFunction("vprintf", llvm::FunctionType::get(b_.getInt32Ty(), {generic, generic}, false));
    b_.CreateCall(vprintf, {format, buffer});
  }

  /// Emits the code `emit` builds in a block entered only when `guard` holds (always when null).
  template <typename Emit>
  void guarded(llvm::Value* guard, const char* name, Emit emit) {
    if (!guard) {
      emit();
      return;
    }
    auto* then_block = llvm::BasicBlock::Create(cg_.context, std::string(name) + ".then", cg_.kernel);
    auto* merge_block = llvm::BasicBlock::Create(cg_.context, std::string(name) + ".merge", cg_.kernel);
    b_.CreateCondBr(guard, then_block, merge_block);
    b_.SetInsertPoint(then_block);
    emit();
    b_.CreateBr(merge_block);
    b_.SetInsertPoint(merge_block);
  }

 private:
  KernelCodegen& cg_;
  llvm::IRBuilder<>& b_;
  std::map<llvm::StructType*, llvm::AllocaInst*> buffers_;
};

void emit_print(KernelCodegen& cg, const ir::Operation& op) {
  std::string prefix = op.find_attribute("prefix") ? op.string_attribute("prefix") : std::string();
  while (!prefix.empty() && prefix.back() == ' ') prefix.pop_back();
  const ir::Value* first_tile = nullptr;
  for (const ir::Value* operand : op.operands) {
    if (!operand->type.is_tile()) continue;
    if (!first_tile) first_tile = operand;
    if (operand->type.shape != first_tile->type.shape)
      throw LoweringError("print: tile operands %" + std::to_string(first_tile->id) + " (" +
                          ir::to_string(first_tile->type) + ") and %" + std::to_string(operand->id) + " (" +
                          ir::to_string(operand->type) + ") differ in shape; print them separately (" + op_place(op) +
                          ")");
  }
  for (const ir::Value* operand : op.operands)
    if (operand->type.dtype == ir::DType::f8e4m3 || operand->type.dtype == ir::DType::f8e5m2)
      throw LoweringError(unsupported_op_message(op, "of " + std::string(ir::dtype_name(operand->type.dtype))));
  DuplicatedElements copies =
      first_tile ? DuplicatedElements(cg, *first_tile) : DuplicatedElements(cg, ir::Type::scalar(ir::DType::i32));
  const int registers = first_tile ? cg.register_count(*first_tile) : 1;
  std::vector<const std::vector<llvm::Value*>*> values;
  for (const ir::Value* operand : op.operands)
    values.push_back(&cg.values_of(*operand, operand->type.is_tile() ? static_cast<std::size_t>(registers) : 1, op));

  DevicePrintf device(cg);
  std::string format = "pid (%d, %d, %d)";
  if (first_tile) {
    format += " idx (";
    for (std::size_t d = 0; d < first_tile->type.shape.size(); ++d) format += d == 0 ? "%d" : ", %d";
    format += ")";
  }
  if (!prefix.empty()) format += " " + escape_percent(prefix);
  for (const ir::Value* operand : op.operands) format += " " + device.conversion(operand->type.element());
  llvm::Value* format_string = device.string(format + "\n", "print_format");

  llvm::Value* acts = copies.thread_acts();
  for (int reg = 0; reg < registers; ++reg) {
    if (!copies.register_may_act(reg)) continue;
    device.guarded(acts, "print", [&] {
      std::vector<llvm::Value*> arguments = device.program_ids();
      if (first_tile) {
        const std::vector<llvm::Value*> coordinates = copies.coordinates(reg);
        arguments.insert(arguments.end(), coordinates.begin(), coordinates.end());
      }
      for (std::size_t i = 0; i < op.operands.size(); ++i) {
        const ir::Value& operand = *op.operands[i];
        arguments.push_back(device.promote((*values[i])[operand.type.is_tile() ? static_cast<std::size_t>(reg) : 0],
                                           operand.type.element()));
      }
      device.call(format_string, arguments);
    });
  }
}

/// Where a fault message puts the element's index among its arguments.
enum class ElementIndex { after_program, before_program };

/// For each register of `checked` whose `fails` holds in the element's acting
/// copy: vprintf `fault_format` with the program ids and, when `checked` is a
/// tile, the element's row-major index (`order` says which comes first), then
/// __assertfail(`message`, the op's file and line, the kernel). One branch on
/// any failure guards it all: a kernel that passes runs one compare per
/// register and no call.
void emit_fault_reports(KernelCodegen& cg, const ir::Operation& op, const ir::Value& checked,
                        const std::vector<llvm::Value*>& fails, const std::string& fault_format,
                        const std::string& message, ElementIndex order) {
  DuplicatedElements copies(cg, checked);
  llvm::IRBuilder<>& b = cg.builder;
  DevicePrintf device(cg);
  std::vector<int> registers;
  llvm::Value* any = nullptr;
  for (std::size_t reg = 0; reg < fails.size(); ++reg) {
    if (!copies.register_may_act(static_cast<int>(reg))) continue;
    registers.push_back(static_cast<int>(reg));
    any = any ? b.CreateOr(any, fails[reg]) : fails[reg];
  }
  if (!any) return;
  llvm::Value* acts = copies.thread_acts();
  device.guarded(acts ? b.CreateAnd(acts, any) : any, "fault", [&] {
    llvm::Value* format = device.string(fault_format, "fault_format");
    const std::vector<llvm::Value*> assert_arguments = {
        device.string(message, "fault_message"), device.string(op.loc.file, "fault_file"),
        b.getInt32(static_cast<std::uint32_t>(op.loc.known() ? op.loc.line : 0)),
        device.string(cg.fn.name, "fault_function"), b.getInt64(1)};
    llvm::Type* generic = llvm::PointerType::get(cg.context, 0);
    llvm::FunctionCallee assert_fail = cg.module.getOrInsertFunction(
        "__assertfail",
        llvm::FunctionType::get(b.getVoidTy(), {generic, generic, b.getInt32Ty(), generic, b.getInt64Ty()}, false));
    for (int reg : registers) {
      device.guarded(fails[static_cast<std::size_t>(reg)], "fault_element", [&] {
        std::vector<llvm::Value*> arguments = device.program_ids();
        if (checked.type.is_tile())
          arguments.insert(order == ElementIndex::after_program ? arguments.end() : arguments.begin(),
                           copies.flat_index(reg));
        device.call(format, arguments);
        b.CreateCall(assert_fail, assert_arguments);
      });
    }
  });
}

void emit_assert(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& condition = *op.operands[0];
  if (condition.type.is_pointer || condition.type.dtype != ir::DType::i1)
    throw LoweringError("assert: the condition %" + std::to_string(condition.id) + " is " +
                        ir::to_string(condition.type) + ", expected i1 (" + op_place(op) + ")");
  const std::string message = op.find_attribute("message") ? op.string_attribute("message") : std::string();
  const std::string location = ir::to_string(op.loc);
  const std::string fault = "kernel " + escape_percent(cg.fn.name) + ": assert failed" +
                            (location.empty() ? std::string() : " at " + escape_percent(location)) + ": " +
                            escape_percent(message) + " (program (%d, %d, %d)" +
                            (condition.type.is_tile() ? ", element %d)\n" : ")\n");
  const std::vector<llvm::Value*>& holds =
      cg.values_of(condition, static_cast<std::size_t>(cg.register_count(condition)), op);
  std::vector<llvm::Value*> fails;
  for (llvm::Value* hold : holds) fails.push_back(cg.builder.CreateNot(hold));
  emit_fault_reports(cg, op, condition, fails, fault, message, ElementIndex::after_program);
}

}  // namespace

void emit_debug_op(KernelCodegen& cg, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::print: emit_print(cg, op); return;
    case OpCode::assert: emit_assert(cg, op); return;
    case OpCode::barrier: emit_barrier(cg); return;
    default: throw InternalError(std::string(op.name()) + " reached the debug code generator");
  }
}

void emit_division_by_zero_check(KernelCodegen& cg, const ir::Operation& op,
                                 const std::vector<llvm::Value*>& divisors) {
  const ir::Value& divisor = *op.operands[1];
  const std::string location = ir::to_string(op.loc);
  const std::string name(ir::op_info(op.code).name);
  const std::string fault = "kernel " + escape_percent(cg.fn.name) + ": integer division by zero in " + name +
                            (location.empty() ? std::string() : " at " + escape_percent(location)) + ": element " +
                            (divisor.type.is_tile() ? "%d" : "0") + " of the divisor is 0 (program (%d, %d, %d))\n";
  std::vector<llvm::Value*> fails;
  for (llvm::Value* value : divisors)
    fails.push_back(cg.builder.CreateICmpEQ(value, llvm::ConstantInt::get(value->getType(), 0)));
  emit_fault_reports(cg, op, divisor, fails, fault, "integer division by zero in " + name,
                     ElementIndex::before_program);
}

}  // namespace kiln::lowering
