// LLVM code generation for print and assert, and for barrier (one bar.sync:
// it orders global memory across the CTA too).
//
// print goes through CUDA's device ABI:
//   i32 @vprintf(ptr %format, ptr %arguments)
//     `arguments` points to a local buffer holding the values in format
//     order, each at its natural alignment (an LLVM struct): i32 for i1, i8,
//     i16, i32 (sign- or zero-extended by the dtype) and u32, i64 for i64,
//     u64 and pointers, double for every float (promoted as C varargs are).
// Strings are constants in global memory, passed as generic pointers.
// A kernel that prints calls a function, so ptxas serializes its wgmma.
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
// assert: when an acting copy's condition is false, the kernel fills the
// fault record (fault_record.hpp) with the interpreter's fault message
//   kernel NAME: assert failed at FILE:LINE: MESSAGE (program (X, Y, Z), element I)
// (`element I` for a tile condition: the row-major index of a failing
// element; when several fail, the first warp to claim the record names the
// first failing element of its lowest failing lane) and traps; the host
// reports the message. Integer div and rem check their divisor the same way
// (OPS.md: division by zero is a fault), and a for loop its step:
//   kernel NAME: integer division by zero in div at FILE:LINE: element I of the divisor is 0 (program (X, Y, Z))
//   kernel NAME: for loop at FILE:LINE has step S, which never reaches HI from LO (program (X, Y, Z))
// No function is called, so a kernel with a division keeps its wgmma
// asynchronous.
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <map>

#include "codegen.hpp"
#include "kiln/lowering/fault_record.hpp"

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

/// The three program ids (i32).
std::vector<llvm::Value*> program_ids(KernelCodegen& cg) {
  return {cg.read_special_register(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
          cg.read_special_register(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y),
          cg.read_special_register(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z)};
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
  // The verifier has checked that the tile operands share one shape.
  const auto tile = std::ranges::find_if(op.operands, [](const ir::Value* v) { return v->type.is_tile(); });
  const ir::Value* first_tile = tile == op.operands.end() ? nullptr : *tile;
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
      std::vector<llvm::Value*> arguments = program_ids(cg);
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

/// Where a fault message puts the element's index among its values.
enum class ElementIndex { after_program, before_program };
/// Which threads check a fault's condition: each element's acting copy, or
/// every thread (a uniform condition that must stop every warp before it
/// goes on, as a loop that would never end).
enum class Checkers { acting_copies, every_thread };

/// The module's kFaultRecordGlobal, declared on first use: a pointer in
/// global memory, null until the host stores its record's address.
llvm::GlobalVariable* fault_record_global(KernelCodegen& cg) {
  if (llvm::GlobalVariable* global = cg.module.getNamedGlobal(kFaultRecordGlobal)) return global;
  llvm::Type* pointer = llvm::PointerType::get(cg.context, kGlobalAddressSpace);
  auto* global =
      new llvm::GlobalVariable(cg.module, pointer, false, llvm::GlobalValue::ExternalLinkage,
                               llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(pointer)),
                               kFaultRecordGlobal, nullptr, llvm::GlobalValue::NotThreadLocal, kGlobalAddressSpace);
  global->setExternallyInitialized(true);
  global->setAlignment(llvm::Align(8));
  return global;
}

/// Fills the fault record with `format` (cut to fit) and `values` (i64) when
/// the host gave one and no other thread claimed it first; ends the
/// insertion block with a branch to `after`.
void fill_fault_record(KernelCodegen& cg, const std::string& format, const std::vector<llvm::Value*>& values,
                       llvm::BasicBlock* after) {
  llvm::IRBuilder<>& b = cg.builder;
  llvm::Type* i8 = b.getInt8Ty();
  llvm::Type* i32 = b.getInt32Ty();
  auto* claim = llvm::BasicBlock::Create(cg.context, "fault_claim", cg.kernel);
  auto* fill = llvm::BasicBlock::Create(cg.context, "fault_fill", cg.kernel);

  llvm::Value* record =
      b.CreateLoad(llvm::PointerType::get(cg.context, kGlobalAddressSpace), fault_record_global(cg), "fault_record");
  b.CreateCondBr(b.CreateIsNotNull(record), claim, after);

  b.SetInsertPoint(claim);
  llvm::Value* claimed =
      b.CreateAtomicCmpXchg(record, b.getInt32(static_cast<std::uint32_t>(FaultRecordState::empty)),
                            b.getInt32(static_cast<std::uint32_t>(FaultRecordState::writing)), llvm::Align(4),
                            llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  b.CreateCondBr(b.CreateExtractValue(claimed, 1), fill, after);

  b.SetInsertPoint(fill);
  for (std::size_t i = 0; i < values.size() && i < kFaultValues; ++i)
    b.CreateAlignedStore(values[i], b.CreateConstGEP1_64(i8, record, offsetof(FaultRecord, values) + 8 * i),
                         llvm::Align(8));
  // The text, NUL-terminated and padded to whole words, copied a word at a
  // time from a constant (which O3 turns into immediates).
  std::string text = format.substr(0, sizeof(FaultRecord::format) - 1);
  text.resize((text.size() + 4) / 4 * 4 - 1, '\0');
  llvm::GlobalVariable* constant = b.CreateGlobalString(text, "fault_format", kGlobalAddressSpace, &cg.module);
  constant->setAlignment(llvm::Align(4));
  for (std::size_t at = 0; at <= text.size(); at += 4) {
    llvm::Value* word = b.CreateAlignedLoad(i32, b.CreateConstGEP1_64(i8, constant, at), llvm::Align(4));
    b.CreateAlignedStore(word, b.CreateConstGEP1_64(i8, record, offsetof(FaultRecord, format) + at), llvm::Align(4));
  }
  b.CreateCall(llvm::Intrinsic::getDeclaration(&cg.module, llvm::Intrinsic::nvvm_membar_sys));
  b.CreateAlignedStore(llvm::ConstantInt::get(i32, static_cast<std::uint32_t>(FaultRecordState::written)), record,
                       llvm::Align(4), true);
  // The state reaches the host before the trap ends the kernel.
  b.CreateCall(llvm::Intrinsic::getDeclaration(&cg.module, llvm::Intrinsic::nvvm_membar_sys));
  b.CreateBr(after);
}

/// Where `fails` holds for a register of `checked` in the element's acting
/// copy (in every thread for Checkers::every_thread): records the fault
/// `format` with `leading` (i64), then the program ids and, when `checked`
/// is a tile, the row-major index of the thread's first failing element
/// (`order` says which comes first), then traps.
///
/// The branches keep ptxas's wgmma asynchronous: a warp enters the fault
/// code only as a whole (a ballot, one unlikely branch: a kernel that passes
/// runs one compare per register and the ballot), its lowest failing lane
/// fills the record, the warp reconverges and synchronises, and every
/// thread of it traps, as inline asm that LLVM does not know ends the
/// thread, so the code branches back and the warp stays converged. Were some threads of a warp
/// to skip the fault code, or the trap end in `unreachable` (llvm.trap),
/// ptxas would find every later wgmma on a divergent path and serialize it
/// (warning C7520).
void emit_fault_reports(KernelCodegen& cg, const ir::Value& checked, const std::vector<llvm::Value*>& fails,
                        const std::string& format, ElementIndex order, const std::vector<llvm::Value*>& leading = {},
                        Checkers checkers = Checkers::acting_copies) {
  DuplicatedElements copies(cg, checked);
  llvm::IRBuilder<>& b = cg.builder;
  std::vector<int> registers;
  llvm::Value* any = nullptr;
  for (std::size_t reg = 0; reg < fails.size(); ++reg) {
    if (!copies.register_may_act(static_cast<int>(reg))) continue;
    registers.push_back(static_cast<int>(reg));
    any = any ? b.CreateOr(any, fails[reg]) : fails[reg];
  }
  if (!any) return;
  llvm::Value* acts = checkers == Checkers::acting_copies ? copies.thread_acts() : nullptr;
  llvm::Value* thread_faults = acts ? b.CreateAnd(acts, any) : any;
  auto* warp_faults = llvm::BasicBlock::Create(cg.context, "fault_in_warp", cg.kernel);
  auto* fault = llvm::BasicBlock::Create(cg.context, "fault", cg.kernel);
  auto* stop = llvm::BasicBlock::Create(cg.context, "fault_trap", cg.kernel);
  auto* passed = llvm::BasicBlock::Create(cg.context, "fault_passed", cg.kernel);
  llvm::Value* ballot =
      b.CreateCall(llvm::Intrinsic::getDeclaration(&cg.module, llvm::Intrinsic::nvvm_vote_ballot_sync),
                   {b.getInt32(~0u), thread_faults});
  b.CreateCondBr(b.CreateICmpNE(ballot, b.getInt32(0)), warp_faults, passed,
                 llvm::MDBuilder(cg.context).createBranchWeights(1, 1 << 20));

  // The warp's lowest failing lane reports: in a row-major layout, the one
  // holding the warp's first failing element.
  b.SetInsertPoint(warp_faults);
  llvm::Value* first_lane = b.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, ballot, b.getTrue());
  b.CreateCondBr(b.CreateICmpEQ(cg.lane, first_lane), fault, stop);

  b.SetInsertPoint(fault);
  std::vector<llvm::Value*> values = program_ids(cg);
  if (checked.type.is_tile()) {
    llvm::Value* element = copies.flat_index_of_first(registers, fails);
    values.insert(order == ElementIndex::after_program ? values.end() : values.begin(), element);
  }
  for (llvm::Value*& value : values) value = b.CreateSExt(value, b.getInt64Ty());
  values.insert(values.begin(), leading.begin(), leading.end());
  fill_fault_record(cg, format, values, stop);

  b.SetInsertPoint(stop);
  b.CreateCall(llvm::Intrinsic::getDeclaration(&cg.module, llvm::Intrinsic::nvvm_bar_warp_sync), {b.getInt32(~0u)});
  b.CreateCall(llvm::InlineAsm::get(llvm::FunctionType::get(b.getVoidTy(), false), kTrapAssembly, "", true));
  b.CreateBr(passed);
  b.SetInsertPoint(passed);
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
                            (condition.type.is_tile() ? ", element %d)" : ")");
  const std::vector<llvm::Value*>& holds =
      cg.values_of(condition, static_cast<std::size_t>(cg.register_count(condition)), op);
  std::vector<llvm::Value*> fails;
  for (llvm::Value* hold : holds) fails.push_back(cg.builder.CreateNot(hold));
  emit_fault_reports(cg, condition, fails, fault, ElementIndex::after_program);
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
                            (divisor.type.is_tile() ? "%d" : "0") + " of the divisor is 0 (program (%d, %d, %d))";
  std::vector<llvm::Value*> fails;
  for (llvm::Value* value : divisors)
    fails.push_back(cg.builder.CreateICmpEQ(value, llvm::ConstantInt::get(value->getType(), 0)));
  // A tile divisor's registers are read in the result's layout (a uniform
  // divisor has a layout of its own: is_uniform_tile), so the elements are
  // the result's.
  emit_fault_reports(cg, divisor.type.is_tile() ? *op.result() : divisor, fails, fault, ElementIndex::before_program);
}

void emit_loop_step_check(KernelCodegen& cg, const ir::Operation& op, llvm::Value* runs, llvm::Value* lower,
                          llvm::Value* upper, llvm::Value* step) {
  llvm::IRBuilder<>& b = cg.builder;
  const ir::Value& bound = *op.operands[2];
  const bool is_unsigned = ir::is_unsigned_int(bound.type.dtype);
  llvm::Value* zero = llvm::ConstantInt::get(step->getType(), 0);
  llvm::Value* positive = is_unsigned ? b.CreateICmpNE(step, zero) : b.CreateICmpSGT(step, zero);
  const std::string location = ir::to_string(op.loc);
  const std::string bound_value = is_unsigned ? "%u" : "%d";
  const std::string fault = "kernel " + escape_percent(cg.fn.name) + ": for loop" +
                            (location.empty() ? std::string() : " at " + escape_percent(location)) + " has step " +
                            bound_value + ", which never reaches " + bound_value + " from " + bound_value +
                            " (program (%d, %d, %d))";
  auto widened = [&](llvm::Value* value) {
    return is_unsigned ? b.CreateZExt(value, b.getInt64Ty()) : b.CreateSExt(value, b.getInt64Ty());
  };
  // Every thread checks: a warp that went on would never leave the loop.
  emit_fault_reports(cg, bound, {b.CreateAnd(runs, b.CreateNot(positive))}, fault, ElementIndex::after_program,
                     {widened(step), widened(upper), widened(lower)}, Checkers::every_thread);
}

}  // namespace kiln::lowering
