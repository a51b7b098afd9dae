// Compiling a retargeted module in process with LLJIT for the host CPU, at
// codegen level None (fast instruction selection and register allocation)
// and without IR optimisation: compile time dominates the emu's test runs
// (the attention tests' kernels: 195 ms each at None; O1 IR passes add 40%
// and do not pay back, level Less takes 3.6 times as long) while launches
// are small. Every hook
// is an absolute symbol; libc and libm are resolved from the process.
#include "jit.hpp"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/TargetSelect.h>

#include <mutex>
#include <stdexcept>

#include "hooks.hpp"
#include "retarget_module.hpp"

namespace kiln::runtime::emu {

namespace {

template <class T>
T checked(llvm::Expected<T> value, const char* what) {
  if (!value) throw std::runtime_error(std::string("emu: ") + what + ": " + llvm::toString(value.takeError()));
  return std::move(*value);
}

void check(llvm::Error error, const char* what) {
  if (error) throw std::runtime_error(std::string("emu: ") + what + ": " + llvm::toString(std::move(error)));
}

llvm::orc::JITTargetMachineBuilder host_machine_builder() {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto builder = checked(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host CPU");
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  return builder;
}

}  // namespace

HostTarget host_target() {
  llvm::orc::JITTargetMachineBuilder builder = host_machine_builder();
  return {builder.getTargetTriple().str(), checked(builder.getDefaultDataLayoutForTarget(), "the host data layout")};
}

JitCode::JitCode(std::unique_ptr<llvm::LLVMContext> context, std::unique_ptr<llvm::Module> module) {
  jit_ = checked(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(host_machine_builder()).create(),
                 "creating the JIT");
  llvm::orc::SymbolMap hooks;
  for (const Hook& hook : hook_table())
    hooks[jit_->mangleAndIntern(llvm::StringRef(hook.symbol.data(), hook.symbol.size()))] = {
        llvm::orc::ExecutorAddr::fromPtr(hook.address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  llvm::orc::JITDylib& library = jit_->getMainJITDylib();
  check(library.define(llvm::orc::absoluteSymbols(std::move(hooks))), "defining the hooks");
  library.addGenerator(checked(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                                   jit_->getDataLayout().getGlobalPrefix()),
                               "searching the process's symbols"));
  llvm::orc::ThreadSafeModule owned(std::move(module), llvm::orc::ThreadSafeContext(std::move(context)));
  check(jit_->addIRModule(std::move(owned)), "adding the module");
  entry_ = checked(jit_->lookup(kEntryFunction), "compiling the kernel").toPtr<KernelEntry>();
}

JitCode::~JitCode() = default;

}  // namespace kiln::runtime::emu
