// Retargeting the GPU code generator's module for the host, in one pass:
// host triple and data layout; no NVPTX calling conventions, CPU attributes or
// annotations; shared-memory (addrspace 3) globals become offsets from
// kiln_emu_shared_memory() (the dynamic array, sized by the module's
// !kiln.shared_bytes, at offset 0); address-space casts become integer round trips
// (every address space is flat on the host); NVVM's scoped atomics become
// the host's atomicrmw and cmpxchg; cp.async becomes a checked hook call
// whose copy lands when a wait completes its group; a
// kiln_emu_check_global_access call before each global (addrspace 1) load,
// store, atomic and cp.async, and a kiln_emu_check_shared_access call before
// each shared (addrspace 3) one and each ldmatrix; barriers become hook calls
// numbered by site, with their source lines recorded; each call of
// an NVVM intrinsic or external GPU function becomes a call of its hook
// (i1 passed as i32); the fault record becomes the running program's and a
// trap a hook call that reports it; f16 and bf16 become 16-bit integers, their arithmetic
// hook calls (narrow_floats.cpp); wgmma's inline assembly becomes hook calls
// (matrix_assembly.cpp); and an entry taking the arguments as 64-bit words.
#include "retarget_module.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>

#include "hooks.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/fault_record.hpp"
#include "matrix_assembly.hpp"
#include "narrow_floats.hpp"

namespace kiln::runtime::emu {

namespace {

constexpr unsigned kGlobalAddressSpace = 1;
constexpr unsigned kSharedAddressSpace = 3;
/// The widest shared store the code generator emits (st.shared.v4.b32).
constexpr std::uint64_t kLargestSharedStore = 16;

[[noreturn]] void fail(const KernelDescription& kernel, const std::string& what) {
  throw lowering::LoweringError("emu: kernel " + kernel.name + ": " + what);
}

/// Whether `object` is the running program's fault record (kFaultRecordHook's
/// result): the emu's memory, not the kernel's, so its accesses go unchecked.
bool is_fault_record(const llvm::Value* object) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(object);
  return call && call->getCalledFunction() && call->getCalledFunction()->getName() == llvm::StringRef(kFaultRecordHook);
}

/// `site` with the element dtype and pointer source the code generator
/// recorded on `instruction` (`!kiln.access !{!"f16", i32 source}`), if any.
AccessSite with_access(AccessSite site, const llvm::Instruction& instruction) {
  llvm::MDNode* access = instruction.getMetadata("kiln.access");
  if (!access || access->getNumOperands() != 2) return site;
  if (auto* dtype = llvm::dyn_cast<llvm::MDString>(access->getOperand(0)))
    site.dtype = ir::parse_dtype(dtype->getString().str());
  if (auto* source = llvm::mdconst::dyn_extract<llvm::ConstantInt>(access->getOperand(1)))
    site.source = static_cast<int>(source->getSExtValue());
  return site;
}

void strip_gpu_attributes(llvm::Module& module) {
  for (llvm::Function& function : module) {
    function.setCallingConv(llvm::CallingConv::C);
    for (const char* attribute : {"target-cpu", "target-features", "tune-cpu"}) function.removeFnAttr(attribute);
  }
  if (llvm::NamedMDNode* annotations = module.getNamedMetadata("nvvm.annotations"))
    module.eraseNamedMetadata(annotations);
}

/// The size of the module's dynamic shared memory, from its
/// !kiln.shared_bytes (lowering::kSharedBytesMetadata); LoweringError naming
/// `array` when the module does not say.
std::uint64_t dynamic_shared_bytes(const llvm::Module& module, const llvm::GlobalVariable& array,
                                   const KernelDescription& kernel) {
  const llvm::NamedMDNode* node = module.getNamedMetadata(lowering::kSharedBytesMetadata);
  const llvm::MDNode* entry = node && node->getNumOperands() == 1 ? node->getOperand(0) : nullptr;
  const auto* bytes = entry && entry->getNumOperands() == 1
                          ? llvm::mdconst::dyn_extract<llvm::ConstantInt>(entry->getOperand(0))
                          : nullptr;
  if (!bytes)
    fail(kernel, "dynamic shared memory @" + array.getName().str() + " has no size (the module has no !" +
                     lowering::kSharedBytesMetadata + ")");
  return bytes->getZExtValue();
}

/// Every shared-memory global at an offset in one block per program: the
/// dynamic arrays (declarations, which alias as on the GPU) at offset 0, the
/// sized globals after them; each use reads the block's address from
/// kiln_emu_shared_memory() once per function.
void place_shared_memory(llvm::Module& module, KernelDescription& kernel) {
  std::vector<llvm::GlobalVariable*> shared;
  for (llvm::GlobalVariable& global : module.globals())
    if (global.getAddressSpace() == kSharedAddressSpace) shared.push_back(&global);
  if (shared.empty()) return;
  std::uint64_t end = 0;
  for (llvm::GlobalVariable* global : shared)
    if (global->isDeclaration()) end = std::max(end, dynamic_shared_bytes(module, *global, kernel));
  const llvm::DataLayout& layout = module.getDataLayout();
  llvm::LLVMContext& context = module.getContext();
  llvm::PointerType* shared_pointer = llvm::PointerType::get(context, kSharedAddressSpace);
  llvm::FunctionCallee base_hook =
      module.getOrInsertFunction(kSharedMemoryHook, llvm::FunctionType::get(shared_pointer, false));
  std::map<llvm::Function*, llvm::Value*> base_in;
  for (llvm::GlobalVariable* global : shared) {
    std::uint64_t offset = 0;
    if (!global->isDeclaration()) {
      const std::uint64_t alignment = std::max<std::uint64_t>(global->getAlign().valueOrOne().value(), 16);
      offset = (end + alignment - 1) / alignment * alignment;
      end = offset + layout.getTypeAllocSize(global->getValueType());
    }
    for (llvm::Use& use : llvm::make_early_inc_range(global->uses())) {
      auto* user = llvm::dyn_cast<llvm::Instruction>(use.getUser());
      if (!user) fail(kernel, "shared memory @" + global->getName().str() + " is used outside a function");
      llvm::Function* function = user->getFunction();
      llvm::Value*& base = base_in[function];
      if (!base) {
        llvm::IRBuilder<> builder(&*function->getEntryBlock().getFirstInsertionPt());
        base = builder.CreateCall(base_hook, {}, "shared_memory");
      }
      llvm::IRBuilder<> builder(context);
      if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user))
        builder.SetInsertPoint(phi->getIncomingBlock(use)->getTerminator());
      else builder.SetInsertPoint(user);
      use.set(builder.CreateConstGEP1_64(builder.getInt8Ty(), base, offset, global->getName()));
    }
  }
  for (llvm::GlobalVariable* global : shared) global->eraseFromParent();
  kernel.shared_bytes = end;
}

/// addrspacecast p to T: ptrtoint then inttoptr (the host has one flat address space).
void flatten_address_space_casts(llvm::Module& module) {
  for (llvm::Function& function : module)
    for (llvm::Instruction& instruction : llvm::make_early_inc_range(llvm::instructions(function)))
      if (auto* cast = llvm::dyn_cast<llvm::AddrSpaceCastInst>(&instruction)) {
        llvm::IRBuilder<> builder(cast);
        llvm::Value* address = builder.CreatePtrToInt(cast->getOperand(0), builder.getInt64Ty());
        cast->replaceAllUsesWith(builder.CreateIntToPtr(address, cast->getType()));
        cast->eraseFromParent();
      }
}

/// NVVM's scoped atomics, llvm.nvvm.atomic.<op>.gen.<i|f>.<cta|sys>.<type>.<pointer>,
/// as the host's relaxed atomics (CTAs run on several host threads): the
/// atomicrmw operation of each <op>; `cas` becomes a cmpxchg.
const std::map<std::string, llvm::AtomicRMWInst::BinOp> kScopedAtomics = {
    {"add.gen.i", llvm::AtomicRMWInst::Add},      {"add.gen.f", llvm::AtomicRMWInst::FAdd},
    {"and.gen.i", llvm::AtomicRMWInst::And},      {"or.gen.i", llvm::AtomicRMWInst::Or},
    {"xor.gen.i", llvm::AtomicRMWInst::Xor},      {"exch.gen.i", llvm::AtomicRMWInst::Xchg},
    {"max.gen.i", llvm::AtomicRMWInst::Max},      {"min.gen.i", llvm::AtomicRMWInst::Min},
    {"inc.gen.i", llvm::AtomicRMWInst::UIncWrap}, {"dec.gen.i", llvm::AtomicRMWInst::UDecWrap},
};

void lower_scoped_atomics(llvm::Module& module) {
  constexpr std::string_view prefix = "llvm.nvvm.atomic.";
  for (llvm::Function& callee : llvm::make_early_inc_range(module)) {
    const std::string name = callee.getName().str();
    if (!callee.isDeclaration() || !name.starts_with(prefix) || name.find(".gen.") == std::string::npos) continue;
    const std::string operation = name.substr(prefix.size(), name.find('.', name.find(".gen.") + 5) - prefix.size());
    const auto rmw = kScopedAtomics.find(operation);
    const bool compare_exchange = operation == "cas.gen.i";
    if (rmw == kScopedAtomics.end() && !compare_exchange) continue;  // call_hooks names it
    for (llvm::User* user : llvm::make_early_inc_range(callee.users())) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(user);
      if (!call) continue;
      llvm::IRBuilder<> builder(call);
      const llvm::Align alignment(module.getDataLayout().getTypeStoreSize(call->getType()));
      llvm::Value* result;
      if (compare_exchange) {
        llvm::Value* pair =
            builder.CreateAtomicCmpXchg(call->getArgOperand(0), call->getArgOperand(1), call->getArgOperand(2),
                                        alignment, llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
        result = builder.CreateExtractValue(pair, 0);
      } else {
        result = builder.CreateAtomicRMW(rmw->second, call->getArgOperand(0), call->getArgOperand(1), alignment,
                                         llvm::AtomicOrdering::Monotonic);
      }
      call->replaceAllUsesWith(result);
      call->eraseFromParent();
    }
    if (callee.use_empty()) callee.eraseFromParent();
  }
}

/// cp.async.{ca,cg}.shared.global.<N>[.s] (shared destination, global
/// source[, source bytes]): the source bytes (N, or the given count) are
/// bounds-checked, then handed to kAsyncCopyHook with the destination's
/// access site, which lands them (the rest of the N bytes zero-filled) when a
/// wait completes their group;
/// cp.async.commit.group and wait.group call their hooks, and wait.all is a
/// commit followed by a wait for every group.
void defer_asynchronous_copies(llvm::Module& module, KernelDescription& kernel, llvm::FunctionCallee check) {
  constexpr std::string_view prefix = "llvm.nvvm.cp.async.";
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* void_type = llvm::Type::getVoidTy(context);
  llvm::Type* i32 = llvm::Type::getInt32Ty(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::FunctionCallee copy_hook = module.getOrInsertFunction(
      kAsyncCopyHook, llvm::FunctionType::get(void_type,
                                              {llvm::PointerType::get(context, kSharedAddressSpace),
                                               llvm::PointerType::get(context, kGlobalAddressSpace), i64, i64, i32},
                                              false));
  llvm::FunctionCallee commit_hook = module.getOrInsertFunction(kAsyncCommitHook, void_type);
  llvm::FunctionCallee wait_hook = module.getOrInsertFunction(kAsyncWaitHook, void_type, i32);
  for (llvm::Function& callee : llvm::make_early_inc_range(module)) {
    const std::string name = callee.getName().str();
    if (!callee.isDeclaration() || !name.starts_with(prefix)) continue;
    const bool commits = name == "llvm.nvvm.cp.async.commit.group";
    const bool waits = name == "llvm.nvvm.cp.async.wait.group";
    const bool waits_for_all = name == "llvm.nvvm.cp.async.wait.all";
    const std::size_t size_at = name.find(".shared.global.");
    if (!commits && !waits && !waits_for_all && size_at == std::string::npos) continue;  // call_hooks names it
    for (llvm::User* user : llvm::make_early_inc_range(callee.users())) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(user);
      if (!call) continue;
      llvm::IRBuilder<> builder(call);
      if (commits || waits_for_all) builder.CreateCall(commit_hook);
      if (waits) builder.CreateCall(wait_hook, {call->getArgOperand(0)});
      if (waits_for_all) builder.CreateCall(wait_hook, {builder.getInt32(0)});
      if (size_at != std::string::npos) {
        const std::uint64_t bytes = std::stoull(name.substr(size_at + 15));
        llvm::Value* source = call->getArgOperand(1);
        llvm::Value* copied =
            call->arg_size() > 2 ? builder.CreateZExt(call->getArgOperand(2), i64) : builder.getInt64(bytes);
        const std::string place = place_of(*call);
        builder.CreateCall(
            check,
            {source, copied, add_site(kernel, context, with_access({AccessSite::Kind::load, "load", place}, *call))});
        builder.CreateCall(copy_hook, {call->getArgOperand(0), source, copied, builder.getInt64(bytes),
                                       add_site(kernel, context, {AccessSite::Kind::store, "cp.async", place})});
      }
      call->eraseFromParent();
    }
    if (callee.use_empty()) callee.eraseFromParent();
  }
}

/// A kiln_emu_check_shared_access call before each ldmatrix: the 16-byte
/// row the lane supplies, read by the 8 lanes of each of its matrices.
void check_matrix_loads(llvm::Module& module, KernelDescription& kernel, llvm::FunctionCallee check) {
  constexpr std::string_view prefix = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x";
  for (llvm::Function& callee : module) {
    const std::string name = callee.getName().str();
    if (!callee.isDeclaration() || !name.starts_with(prefix)) continue;
    const int matrices = name[prefix.size()] - '0';
    for (llvm::User* user : callee.users())
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(user)) {
        llvm::IRBuilder<> builder(call);
        AccessSite site{AccessSite::Kind::load, "ldmatrix", place_of(*call), 8 * matrices};
        builder.CreateCall(check, {call->getArgOperand(0), builder.getInt64(16),
                                   add_site(kernel, module.getContext(), std::move(site)),
                                   llvm::ConstantPointerNull::get(builder.getPtrTy())});
      }
  }
}

/// A kiln_emu_check_global_access call before every global-memory access,
/// a kiln_emu_check_shared_access call before every shared-memory one.
void check_memory_accesses(llvm::Module& module, KernelDescription& kernel) {
  llvm::LLVMContext& context = module.getContext();
  const llvm::DataLayout& layout = module.getDataLayout();
  llvm::Type* void_type = llvm::Type::getVoidTy(context);
  llvm::Type* i32 = llvm::Type::getInt32Ty(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::FunctionCallee global_hook = module.getOrInsertFunction(
      kGlobalAccessHook,
      llvm::FunctionType::get(void_type, {llvm::PointerType::get(context, kGlobalAddressSpace), i64, i32}, false));
  llvm::FunctionCallee shared_hook = module.getOrInsertFunction(
      kSharedAccessHook,
      llvm::FunctionType::get(
          void_type,
          {llvm::PointerType::get(context, kSharedAddressSpace), i64, i32, llvm::PointerType::get(context, 0)}, false));
  defer_asynchronous_copies(module, kernel, global_hook);
  check_matrix_loads(module, kernel, shared_hook);
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    llvm::AllocaInst* stored_value = nullptr;  // where a shared store's value goes for its check
    for (llvm::Instruction& instruction : llvm::instructions(function)) {
      llvm::Value* pointer = nullptr;
      llvm::Type* accessed = nullptr;
      AccessSite site;
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&instruction)) {
        pointer = load->getPointerOperand();
        accessed = load->getType();
        site = {AccessSite::Kind::load, "load", ""};
      } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction)) {
        pointer = store->getPointerOperand();
        accessed = store->getValueOperand()->getType();
        site = {AccessSite::Kind::store, "store", ""};
      } else if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&instruction)) {
        pointer = rmw->getPointerOperand();
        accessed = rmw->getValOperand()->getType();
        site = {AccessSite::Kind::atomic, "atomic_rmw", ""};
      } else if (auto* cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&instruction)) {
        pointer = cas->getPointerOperand();
        accessed = cas->getNewValOperand()->getType();
        site = {AccessSite::Kind::atomic, "atomic_cas", ""};
      } else {
        continue;
      }
      const unsigned address_space = pointer->getType()->getPointerAddressSpace();
      const bool shared = address_space == kSharedAddressSpace;
      // Constants of the module itself (strings, tables) lie outside every argument.
      const llvm::Value* object = llvm::getUnderlyingObject(pointer);
      if ((address_space != kGlobalAddressSpace && !shared) || llvm::isa<llvm::GlobalVariable>(object) ||
          is_fault_record(object))
        continue;
      site.place = place_of(instruction);
      llvm::IRBuilder<> builder(&instruction);
      llvm::Value* bytes = llvm::ConstantInt::get(i64, layout.getTypeStoreSize(accessed));
      if (!shared) {
        builder.CreateCall(global_hook,
                           {pointer, bytes, add_site(kernel, context, with_access(std::move(site), instruction))});
        continue;
      }
      // A shared store's check compares the bytes it writes with those there.
      llvm::Value* value = llvm::ConstantPointerNull::get(builder.getPtrTy());
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction)) {
        if (!stored_value) {
          llvm::IRBuilder<> entry(&*function.getEntryBlock().getFirstInsertionPt());
          stored_value = entry.CreateAlloca(entry.getInt8Ty(), entry.getInt64(kLargestSharedStore), "stored_value");
          stored_value->setAlignment(llvm::Align(kLargestSharedStore));
        }
        if (layout.getTypeStoreSize(accessed) > kLargestSharedStore)
          fail(kernel, "a shared-memory store of more than " + std::to_string(kLargestSharedStore) + " bytes");
        builder.CreateStore(store->getValueOperand(), stored_value);
        value = stored_value;
      }
      site.op_name = "shared " + site.op_name;
      builder.CreateCall(shared_hook, {pointer, bytes, add_site(kernel, context, std::move(site)), value});
    }
  }
}

/// Each barrier intrinsic's call becomes a call of its hook (kBarrierHooks)
/// with the barrier's site appended, and the site's source line recorded.
void number_barriers(llvm::Module& module, KernelDescription& kernel) {
  for (const BarrierHook& barrier : kBarrierHooks) {
    llvm::Function* intrinsic = module.getFunction(barrier.intrinsic);
    if (!intrinsic) continue;
    llvm::FunctionType* type = intrinsic->getFunctionType();
    std::vector<llvm::Type*> parameters(type->param_begin(), type->param_end());
    parameters.push_back(llvm::Type::getInt32Ty(module.getContext()));
    llvm::FunctionCallee hook =
        module.getOrInsertFunction(barrier.symbol, llvm::FunctionType::get(type->getReturnType(), parameters, false));
    for (llvm::User* user : llvm::make_early_inc_range(intrinsic->users())) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(user);
      if (!call) fail(kernel, std::string(barrier.intrinsic) + " is used other than by a call");
      llvm::IRBuilder<> builder(call);
      std::vector<llvm::Value*> arguments(call->arg_begin(), call->arg_end());
      arguments.push_back(builder.getInt32(static_cast<std::uint32_t>(kernel.barrier_places.size())));
      kernel.barrier_places.push_back(place_of(*call));
      llvm::CallInst* replacement = builder.CreateCall(hook, arguments);
      call->replaceAllUsesWith(replacement);
      call->eraseFromParent();
    }
    intrinsic->eraseFromParent();
  }
}

/// A struct of scalars of one type (mma.sync's results): the hook writes
/// them through a pointer it takes last.
llvm::Type* returned_array_element(llvm::Type* type) {
  auto* structure = llvm::dyn_cast<llvm::StructType>(type);
  if (!structure || structure->getNumElements() == 0) return nullptr;
  llvm::Type* element = structure->getElementType(0);
  for (llvm::Type* member : structure->elements())
    if (member != element || !(element->isFloatTy() || element->isIntegerTy(32))) return nullptr;
  return element;
}

/// The hook's type for a call of `type`: i1 travels as i32 (the host C ABI
/// leaves the upper bits of a bool argument unspecified to LLVM), a 32- or
/// 64-bit vector (<2 x half>) as an integer of its width, and a returned
/// struct of scalars through a trailing pointer.
llvm::FunctionType* hook_type(llvm::FunctionType* type, const std::string& name, const KernelDescription& kernel) {
  llvm::LLVMContext& context = type->getContext();
  auto widen = [&](llvm::Type* t) -> llvm::Type* {
    if (t->isIntegerTy(1)) return llvm::Type::getInt32Ty(context);
    if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(t)) {
      const auto bits = vector->getPrimitiveSizeInBits().getFixedValue();
      if (bits == 32 || bits == 64) return llvm::Type::getIntNTy(context, static_cast<unsigned>(bits));
    }
    if (t->isAggregateType() || t->isVectorTy())
      fail(kernel, name + " passes or returns a value of a type the emu's hooks do not take");
    return t;
  };
  if (type->isVarArg()) fail(kernel, name + " is variadic, which the emu's hooks are not");
  std::vector<llvm::Type*> parameters;
  for (llvm::Type* parameter : type->params()) parameters.push_back(widen(parameter));
  llvm::Type* result = type->getReturnType();
  if (returned_array_element(result)) {
    parameters.push_back(llvm::PointerType::get(context, 0));
    return llvm::FunctionType::get(llvm::Type::getVoidTy(context), parameters, false);
  }
  return llvm::FunctionType::get(widen(result), parameters, false);
}

/// `call` redirected to `hook` (of hook_type's type): arguments widened, a
/// struct result read back from a buffer in the caller's frame.
void redirect_call(llvm::CallInst* call, llvm::FunctionCallee hook) {
  llvm::IRBuilder<> builder(call);
  llvm::Value* buffer = nullptr;
  llvm::Type* element = returned_array_element(call->getType());
  std::vector<llvm::Value*> arguments;
  for (llvm::Value* argument : call->args()) {
    llvm::Type* type = argument->getType();
    if (type->isIntegerTy(1)) argument = builder.CreateZExt(argument, builder.getInt32Ty());
    else if (type->isVectorTy())
      argument = builder.CreateBitCast(
          argument, builder.getIntNTy(static_cast<unsigned>(type->getPrimitiveSizeInBits().getFixedValue())));
    arguments.push_back(argument);
  }
  if (element) {
    const unsigned count = llvm::cast<llvm::StructType>(call->getType())->getNumElements();
    llvm::Function* function = call->getFunction();
    llvm::IRBuilder<> entry(&*function->getEntryBlock().getFirstInsertionPt());
    buffer = entry.CreateAlloca(llvm::ArrayType::get(element, count), nullptr, "hook_results");
    arguments.push_back(buffer);
  }
  llvm::Value* result = builder.CreateCall(hook, arguments);
  if (element) {
    const unsigned count = llvm::cast<llvm::StructType>(call->getType())->getNumElements();
    result = llvm::PoisonValue::get(call->getType());
    for (unsigned i = 0; i < count; ++i) {
      llvm::Value* slot = builder.CreateConstGEP1_32(element, buffer, i);
      result = builder.CreateInsertValue(result, builder.CreateLoad(element, slot), {i});
    }
  } else if (call->getType()->isIntegerTy(1)) {
    result = builder.CreateICmpNE(builder.CreateAnd(result, 1), builder.getInt32(0));
  }
  if (!call->getType()->isVoidTy()) call->replaceAllUsesWith(result);
  call->eraseFromParent();
}

/// Each call of an NVVM intrinsic or external function becomes a call of its hook.
void call_hooks(llvm::Module& module, const KernelDescription& kernel) {
  std::vector<llvm::Function*> declarations;
  for (llvm::Function& function : module)
    if (function.isDeclaration() && !function.use_empty()) declarations.push_back(&function);
  for (llvm::Function* callee : declarations) {
    const std::string name = callee->getName().str();
    if (is_hook_symbol(name)) continue;
    if (callee->isIntrinsic() && !name.starts_with("llvm.nvvm.")) continue;  // target-independent: the host lowers it
    const Hook* hook = find_hook(name);
    if (!hook) fail(kernel, "no host hook for " + name + " (add one to runtime/emu/hooks.cpp)");
    llvm::FunctionCallee replacement =
        module.getOrInsertFunction(hook->symbol, hook_type(callee->getFunctionType(), name, kernel));
    for (llvm::User* user : llvm::make_early_inc_range(callee->users())) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(user);
      if (!call || call->getCalledFunction() != callee) fail(kernel, name + " is used other than by a call");
      redirect_call(call, replacement);
    }
    callee->eraseFromParent();
  }
}

/// Each load of kFaultRecordGlobal becomes a call of kFaultRecordHook and
/// each trap (kTrapAssembly) a call of kTrapHook (fault_record.hpp).
void report_faults_through_hooks(llvm::Module& module, const KernelDescription& kernel) {
  if (llvm::GlobalVariable* global = module.getNamedGlobal(lowering::kFaultRecordGlobal)) {
    llvm::FunctionCallee hook =
        module.getOrInsertFunction(kFaultRecordHook, llvm::FunctionType::get(global->getValueType(), false));
    for (llvm::User* user : llvm::make_early_inc_range(global->users())) {
      auto* load = llvm::dyn_cast<llvm::LoadInst>(user);
      if (!load) fail(kernel, "@" + global->getName().str() + " is used other than by a load");
      llvm::IRBuilder<> builder(load);
      load->replaceAllUsesWith(builder.CreateCall(hook));
      load->eraseFromParent();
    }
    global->eraseFromParent();
  }
  std::vector<llvm::CallInst*> traps;
  for (llvm::Function& function : module)
    for (llvm::Instruction& instruction : llvm::instructions(function))
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction))
        if (auto* assembly = llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()))
          if (assembly->getAsmString() == lowering::kTrapAssembly) traps.push_back(call);
  if (traps.empty()) return;
  llvm::FunctionCallee hook =
      module.getOrInsertFunction(kTrapHook, llvm::FunctionType::get(llvm::Type::getVoidTy(module.getContext()), false));
  for (llvm::CallInst* trap : traps) {
    llvm::IRBuilder<>(trap).CreateCall(hook);
    trap->eraseFromParent();
  }
}

/// `void kiln_emu_entry(ptr arguments)`: each argument from its 64-bit word, then the kernel.
void add_entry(llvm::Module& module, llvm::Function& kernel_function) {
  llvm::LLVMContext& context = module.getContext();
  auto* entry = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {llvm::PointerType::get(context, 0)}, false),
      llvm::Function::ExternalLinkage, kEntryFunction, module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", entry));
  std::vector<llvm::Value*> arguments;
  for (llvm::Argument& parameter : kernel_function.args()) {
    llvm::Value* word = builder.CreateLoad(
        builder.getInt64Ty(), builder.CreateConstGEP1_64(builder.getInt64Ty(), entry->getArg(0), parameter.getArgNo()));
    llvm::Type* type = parameter.getType();
    llvm::Value* value;
    if (type->isPointerTy()) {
      value = builder.CreateIntToPtr(word, type);
    } else if (type->isIntegerTy(1)) {
      value = builder.CreateICmpNE(word, builder.getInt64(0));
    } else {
      llvm::Type* same_width = builder.getIntNTy(static_cast<unsigned>(type->getPrimitiveSizeInBits().getFixedValue()));
      value = builder.CreateBitCast(builder.CreateTrunc(word, same_width), type);
    }
    arguments.push_back(value);
  }
  builder.CreateCall(&kernel_function, arguments);
  builder.CreateRetVoid();
}

}  // namespace

std::string place_of(const llvm::Instruction& instruction) {
  if (llvm::MDNode* place = instruction.getMetadata("kiln.place"))
    if (place->getNumOperands() > 0)
      if (auto* text = llvm::dyn_cast<llvm::MDString>(place->getOperand(0))) return text->getString().str();
  return "";
}

llvm::ConstantInt* add_site(KernelDescription& kernel, llvm::LLVMContext& context, AccessSite site) {
  kernel.access_sites.push_back(std::move(site));
  return llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), kernel.access_sites.size() - 1);
}

void retarget_module(llvm::Module& module, const std::string& kernel_function, const std::string& host_triple,
                     const llvm::DataLayout& host_layout, KernelDescription& kernel) {
  llvm::Function* function = module.getFunction(kernel_function);
  if (!function || function->isDeclaration()) fail(kernel, "the module has no function @" + kernel_function);
  module.setTargetTriple(host_triple);
  module.setDataLayout(host_layout);
  strip_gpu_attributes(module);
  std::vector<llvm::Constant*> globals;
  for (llvm::GlobalVariable& global : module.globals()) globals.push_back(&global);
  llvm::convertUsersOfConstantsToInstructions(globals);
  place_shared_memory(module, kernel);
  flatten_address_space_casts(module);
  lower_scoped_atomics(module);
  report_faults_through_hooks(module, kernel);
  check_memory_accesses(module, kernel);
  number_barriers(module, kernel);
  run_matrix_assembly_on_hooks(module, kernel);
  call_hooks(module, kernel);
  lower_narrow_floats_to_integers(module, kernel);
  add_entry(module, *module.getFunction(kernel_function));
  std::string problems;
  llvm::raw_string_ostream stream(problems);
  if (llvm::verifyModule(module, &stream))
    throw lowering::InternalError("emu: kernel " + kernel.name + ": the retargeted module is invalid: " + problems);
}

}  // namespace kiln::runtime::emu
