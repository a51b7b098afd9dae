// The emu's code compiled ahead of time: modules retargeted as for the JIT,
// linked, emitted as one object file by the JIT's target machine.
#include "emu_object.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <stdexcept>

#include "emu_launch.hpp"
#include "emulated_kernel.hpp"
#include "jit.hpp"
#include "kiln/lowering/compile.hpp"
#include "retarget_module.hpp"

namespace kiln::runtime::emu {

EmuObjectBuilder::EmuObjectBuilder()
    : context_(std::make_unique<llvm::LLVMContext>()),
      combined_(std::make_unique<llvm::Module>("kiln_emu_kernels", *context_)) {
  const HostTarget host = host_target();
  combined_->setTargetTriple(host.triple);
  combined_->setDataLayout(host.layout);
}

EmuObjectBuilder::~EmuObjectBuilder() = default;

KernelDescription EmuObjectBuilder::add(const ir::Function& kernel, int num_warps, const std::string& entry_symbol) {
  lowering::GpuTarget target;
  target.arch = kEmulatedArch;
  target.num_warps = num_warps;
  target.check_hints = true;
  lowering::LoweringOptions options;
  options.stop_after = "codegen";
  const lowering::GpuKernel gpu = lowering::compile_for_gpu(kernel, target, options);
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module =
      llvm::parseIR(llvm::MemoryBufferRef(gpu.llvm_ir, gpu.name), diagnostic, *context_);
  if (!module)
    throw lowering::LoweringError("emu: kernel " + kernel.name + ": its LLVM IR does not parse: line " +
                                  std::to_string(diagnostic.getLineNo()) + ": " + diagnostic.getMessage().str());
  KernelDescription description = describe_kernel(kernel, num_warps);
  const HostTarget host = host_target();
  retarget_module(*module, gpu.name, host.triple, host.layout, description);
  if (combined_->getFunction(entry_symbol))
    throw std::invalid_argument("emu: two kernels have the entry " + entry_symbol);
  // Only the entry is seen from outside; the kernel's own functions and
  // globals become internal, so that kernels of one object never clash.
  for (llvm::Function& function : *module)
    if (!function.isDeclaration()) function.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable& global : module->globals())
    if (!global.isDeclaration()) global.setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::Function* entry = module->getFunction(kEntryFunction);
  entry->setName(entry_symbol);
  entry->setLinkage(llvm::GlobalValue::ExternalLinkage);
  if (llvm::Linker::linkModules(*combined_, std::move(module)))
    throw std::runtime_error("emu: kernel " + kernel.name + ": linking its module into the object failed");
  return description;
}

std::string EmuObjectBuilder::emit() const {
  std::unique_ptr<llvm::TargetMachine> machine = object_target_machine(emu_machine());
  std::string object;
  llvm::raw_string_ostream stream(object);
  llvm::buffer_ostream buffer(stream);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, buffer, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw std::runtime_error("emu: the target machine cannot emit an object file");
  passes.run(*combined_);
  return std::string(buffer.str());
}

}  // namespace kiln::runtime::emu
