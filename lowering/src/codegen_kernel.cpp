// LLVM code generation, kernel level: the module, the `ptx_kernel` function
// and its arguments, the thread's lane and warp, and the walk that hands each
// op to the file emitting its family (every instruction with its op's source
// line as `!kiln.place` metadata, and a global access's dtype and pointer
// argument as `!kiln.access`).
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cctype>

#include "codegen.hpp"
#include "kiln/ir/op_schema.hpp"

namespace kiln::lowering {

const std::vector<llvm::Value*>& KernelCodegen::values_of(const ir::Value& value) const {
  auto it = registers.find(&value);
  if (it == registers.end())
    throw InternalError("%" + std::to_string(value.id) + " is used before the code generator defined it");
  return it->second;
}

const std::vector<llvm::Value*>& KernelCodegen::values_of(const ir::Value& value, std::size_t count,
                                                          const ir::Operation& op) const {
  const std::vector<llvm::Value*>& values = values_of(value);
  if (values.size() != count && is_uniform_tile(value) && !values.empty()) {
    std::vector<llvm::Value*>& copies = uniform_reads[{&value, count}];
    if (copies.empty()) copies.assign(count, values.front());
    return copies;
  }
  if (values.size() != count)
    throw InternalError(std::string(op.name()) + ": operand %" + std::to_string(value.id) + " has " +
                        std::to_string(values.size()) + " registers per thread, expected " + std::to_string(count) +
                        " (" + op_place(op) + ")");
  return values;
}

void KernelCodegen::define(const ir::Value& value, std::vector<llvm::Value*> values) {
  registers[&value] = std::move(values);
}

int KernelCodegen::register_count(const ir::Value& value) const {
  return value.type.is_tile() ? layouts.at(value).in_dim_size("register") : 1;
}

llvm::Type* KernelCodegen::llvm_type(const ir::Type& type) const {
  if (type.is_pointer) return llvm::PointerType::get(context, kGlobalAddressSpace);
  switch (type.dtype) {
    case ir::DType::i1: return llvm::Type::getInt1Ty(context);
    case ir::DType::i8:
    case ir::DType::u8:
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2: return llvm::Type::getInt8Ty(context);
    case ir::DType::i16:
    case ir::DType::u16: return llvm::Type::getInt16Ty(context);
    case ir::DType::i32:
    case ir::DType::u32: return llvm::Type::getInt32Ty(context);
    case ir::DType::i64:
    case ir::DType::u64: return llvm::Type::getInt64Ty(context);
    case ir::DType::f16: return llvm::Type::getHalfTy(context);
    case ir::DType::bf16: return llvm::Type::getBFloatTy(context);
    case ir::DType::f32: return llvm::Type::getFloatTy(context);
    case ir::DType::f64: return llvm::Type::getDoubleTy(context);
  }
  return nullptr;
}

llvm::Type* KernelCodegen::element_type(const ir::Type& type, const ir::Operation& op) const {
  if (llvm::Type* result = llvm_type(type)) return result;
  throw LoweringError(unsupported_op_message(op, "on " + std::string(ir::dtype_name(type.dtype))));
}

llvm::Type* KernelCodegen::memory_type(const ir::Type& type, const ir::Operation& op) const {
  if (!type.is_pointer && type.dtype == ir::DType::i1) return llvm::Type::getInt8Ty(context);
  return element_type(type, op);
}

llvm::Value* KernelCodegen::read_special_register(llvm::Intrinsic::ID id) {
  return builder.CreateIntrinsic(builder.getInt32Ty(), id, {});
}

std::unique_ptr<llvm::Module> generate_llvm_module(const ir::Function& fn, const AxisInfoMap& axes,
                                                   const LayoutMap& layouts, const GpuTarget& target,
                                                   llvm::LLVMContext& context, const llvm::TargetMachine& machine) {
  auto module = std::make_unique<llvm::Module>(fn.name, context);
  module->setTargetTriple(machine.getTargetTriple().str());
  module->setDataLayout(machine.createDataLayout());
  KernelCodegen cg(fn, axes, layouts, target, *module);

  // Every argument is a scalar (the verifier guarantees it); pointers point
  // into global memory.
  std::vector<llvm::Type*> parameter_types;
  for (const ir::Value* argument : fn.body.arguments) {
    if (argument->type.is_tile())
      throw LoweringError("kernel argument %" + std::to_string(argument->id) + " is " + ir::to_string(argument->type) +
                          ", expected a scalar or a pointer");
    if (!cg.llvm_type(argument->type))
      throw LoweringError("kernel argument %" + std::to_string(argument->id) + " is " + ir::to_string(argument->type) +
                          ", which the GPU code generator does not support yet");
    parameter_types.push_back(cg.llvm_type(argument->type));
  }
  auto* function_type = llvm::FunctionType::get(cg.builder.getVoidTy(), parameter_types, false);
  cg.kernel = llvm::Function::Create(function_type, llvm::Function::ExternalLinkage, ptx_identifier(fn.name), *module);
  cg.kernel->setCallingConv(llvm::CallingConv::PTX_Kernel);
  cg.kernel->addFnAttr(llvm::Attribute::NoUnwind);

  // noalias promises that memory reached through one argument is reached
  // through no other while the kernel runs. With no write that holds trivially;
  // otherwise only the launcher can know the buffers are disjoint.
  const bool writes = std::any_of(fn.body.ops.begin(), fn.body.ops.end(),
                                  [](const std::unique_ptr<ir::Operation>& op) { return ir::writes_memory(*op); });
  const bool no_overlap = target.arguments_do_not_overlap || !writes;
  for (std::size_t i = 0; i < fn.body.arguments.size(); ++i) {
    const ir::Value* argument = fn.body.arguments[i];
    llvm::Argument* parameter = cg.kernel->getArg(static_cast<unsigned>(i));
    parameter->setName(i < fn.argument_names.size() && !fn.argument_names[i].empty() ? fn.argument_names[i]
                                                                                     : "arg" + std::to_string(i));
    if (!argument->type.is_pointer) continue;
    if (no_overlap) parameter->addAttr(llvm::Attribute::NoAlias);
    const std::int64_t alignment = i < fn.argument_facts.size() ? fn.argument_facts[i].divisibility : 1;
    if (alignment > 1)
      parameter->addAttrs(
          llvm::AttrBuilder(context).addAlignmentAttr(llvm::Align(static_cast<std::uint64_t>(alignment))));
  }

  // `.maxntid` lets ptxas budget registers for exactly this many threads.
  const int threads = target.num_warps * kLanesPerWarp;
  module->getOrInsertNamedMetadata("nvvm.annotations")
      ->addOperand(
          llvm::MDNode::get(context, {llvm::ValueAsMetadata::get(cg.kernel), llvm::MDString::get(context, "maxntidx"),
                                      llvm::ValueAsMetadata::get(cg.builder.getInt32(threads))}));
  // `.maxnreg` caps ptxas's register allocation (CompileOptions::max_registers).
  if (target.max_registers > 0)
    module->getOrInsertNamedMetadata("nvvm.annotations")
        ->addOperand(
            llvm::MDNode::get(context, {llvm::ValueAsMetadata::get(cg.kernel), llvm::MDString::get(context, "maxnreg"),
                                        llvm::ValueAsMetadata::get(cg.builder.getInt32(target.max_registers))}));

  cg.builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", cg.kernel));
  llvm::Value* thread = cg.read_special_register(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  cg.lane = cg.builder.CreateAnd(thread, kLanesPerWarp - 1, "lane");
  cg.warp = cg.builder.CreateLShr(thread, 5, "warp");
  for (std::size_t i = 0; i < fn.body.arguments.size(); ++i)
    cg.define(*fn.body.arguments[i], {cg.kernel->getArg(static_cast<unsigned>(i))});

  place_shared_rings(cg);
  for (const auto& op : fn.body.ops) emit_op(cg, *op);
  cg.builder.CreateRetVoid();
  finish_shared_memory(cg);

  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(*module, &problem_stream))
    throw InternalError("the GPU code generator produced invalid LLVM IR for kernel @" + fn.name + ": " + problems);
  return module;
}

namespace {

/// While one lives, every instruction the builder inserts carries
/// `!kiln.place !{!"file:line"}`, the source line of the op being emitted,
/// which the emu names in its bounds, race and barrier errors as the cpu
/// device does; the instructions of an op that reaches global memory also
/// carry `!kiln.access !{!"f16", i32 source}`, its element dtype and the
/// pointer argument its addresses derive from (-1: mixed provenance), so the
/// emu checks an access against that argument and counts in its elements as
/// the cpu device does. The builder copies metadata from an instruction, so a
/// detached one carries them; the enclosing op's come back at the end (the
/// code of a `for` after its body is the `for`'s).
class OpMetadata {
 public:
  OpMetadata(KernelCodegen& cg, const ir::Operation& op)
      : cg_(cg),
        enclosing_place_(cg.place),
        enclosing_access_(cg.access),
        place_kind_(cg.context.getMDKindID("kiln.place")),
        access_kind_(cg.context.getMDKindID("kiln.access")),
        carrier_(llvm::ReturnInst::Create(cg.context)) {
    const std::string place = ir::to_string(op.loc);
    cg_.place = place.empty() ? nullptr : llvm::MDNode::get(cg.context, llvm::MDString::get(cg.context, place));
    cg_.access = nullptr;
    if (const ir::Value* pointers = ir::pointer_operand(op)) {
      llvm::Metadata* dtype = llvm::MDString::get(cg.context, ir::dtype_name(pointers->type.dtype));
      llvm::Metadata* source = llvm::ConstantAsMetadata::get(cg.builder.getInt32(cg.provenance.source(pointers)));
      cg_.access = llvm::MDNode::get(cg.context, {dtype, source});
    }
    copy(cg_.place, cg_.access);
  }
  ~OpMetadata() {
    cg_.place = enclosing_place_;
    cg_.access = enclosing_access_;
    copy(enclosing_place_, enclosing_access_);
    carrier_->deleteValue();
  }
  OpMetadata(const OpMetadata&) = delete;
  OpMetadata& operator=(const OpMetadata&) = delete;

 private:
  void copy(llvm::MDNode* place, llvm::MDNode* access) {
    carrier_->setMetadata(place_kind_, place);
    carrier_->setMetadata(access_kind_, access);
    cg_.builder.CollectMetadataToCopy(carrier_, {place_kind_, access_kind_});
  }
  KernelCodegen& cg_;
  llvm::MDNode* enclosing_place_;
  llvm::MDNode* enclosing_access_;
  unsigned place_kind_;
  unsigned access_kind_;
  llvm::Instruction* carrier_;
};

}  // namespace

void emit_op(KernelCodegen& cg, const ir::Operation& op) {
  const OpMetadata metadata(cg, op);
  switch (ir::family_of(op.code)) {
    case ir::OpFamily::creation:
    case ir::OpFamily::shape: emit_creation_or_shape_op(cg, op); return;
    case ir::OpFamily::rearrange: emit_reshape_op(cg, op); return;
    case ir::OpFamily::elementwise:
    case ir::OpFamily::cast: emit_elementwise_op(cg, op); return;
    case ir::OpFamily::memory: emit_memory_op(cg, op); return;
    case ir::OpFamily::atomic: emit_atomic_op(cg, op); return;
    case ir::OpFamily::dot: emit_dot_op(cg, op); return;
    case ir::OpFamily::reduce: emit_reduce_op(cg, op); return;
    case ir::OpFamily::scan: emit_scan_op(cg, op); return;
    case ir::OpFamily::control: emit_control_flow_op(cg, op); return;
    case ir::OpFamily::debug: emit_debug_op(cg, op); return;
    case ir::OpFamily::hint: emit_hint_op(cg, op); return;
    case ir::OpFamily::shared_buffer: emit_shared_buffer_op(cg, op); return;
    case ir::OpFamily::inline_asm: emit_inline_asm_op(cg, op); return;
    case ir::OpFamily::terminator: throw InternalError("a yield outside the end of a region (" + op_place(op) + ")");
  }
}

std::vector<std::vector<llvm::Value*>> emit_region(KernelCodegen& cg, const ir::Block& block,
                                                   const std::vector<std::vector<llvm::Value*>>& arguments) {
  if (arguments.size() != block.arguments.size())
    throw InternalError("a region of " + (block.parent ? op_place(*block.parent) : std::string("the kernel")) +
                        " has " + std::to_string(block.arguments.size()) + " arguments, the code generator passed " +
                        std::to_string(arguments.size()));
  for (std::size_t i = 0; i < arguments.size(); ++i) cg.define(*block.arguments[i], arguments[i]);
  std::vector<std::vector<llvm::Value*>> yielded;
  for (const auto& op : block.ops) {
    if (ir::family_of(op->code) != ir::OpFamily::terminator) {
      emit_op(cg, *op);
      continue;
    }
    for (const ir::Value* operand : op->operands) yielded.push_back(cg.values_of(*operand));
  }
  return yielded;
}

std::string ptx_identifier(std::string_view name) {
  std::string identifier(name.empty() ? "kernel" : name);
  for (char& c : identifier)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$') c = '_';
  if (std::isdigit(static_cast<unsigned char>(identifier[0])) || identifier[0] == '$') identifier.insert(0, "_");
  return identifier;
}

std::string to_string(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  module.print(stream, nullptr);
  return text;
}

}  // namespace kiln::lowering
