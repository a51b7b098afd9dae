// Compiling a retargeted module in process with LLJIT for a fixed x86-64
// machine (emu_machine(): never the host's own CPU, whose instructions may
// round differently from the GPU's), no floating-point contraction, at
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
#include <llvm/TargetParser/Host.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>

#include "hooks.hpp"
#include "kiln/runtime/emu_machine.hpp"
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

/// The features of the baseline x86-64 CPU that the emu turns off by name as
/// well, so that no feature list added later brings them back: conversions
/// to f16 (F16C, AVX-512 FP16) and bf16 (AVX-512 BF16 and AVX-NE-CONVERT
/// flush bf16 subnormals, which cvt.rn.bf16.f32 keeps), and fused multiply-add.
constexpr const char* kEmuFeatures = "-f16c,-fma,-fma4,-avx512fp16,-avx512bf16,-avxneconvert,-amx-bf16,-amx-fp16";

void initialize_native_target() {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

llvm::orc::JITTargetMachineBuilder machine_builder(const EmuMachine& machine) {
  initialize_native_target();
  llvm::orc::JITTargetMachineBuilder builder{llvm::Triple(llvm::sys::getProcessTriple())};
  builder.setCPU(machine.cpu);
  llvm::SubtargetFeatures features(machine.features);
  builder.addFeatures(features.getFeatures());
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  builder.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
  return builder;
}

}  // namespace

HostTarget host_target() {
  llvm::orc::JITTargetMachineBuilder builder = machine_builder(emu_machine());
  return {builder.getTargetTriple().str(), checked(builder.getDefaultDataLayoutForTarget(), "the host data layout")};
}

std::unique_ptr<llvm::TargetMachine> object_target_machine(const EmuMachine& machine) {
  llvm::orc::JITTargetMachineBuilder builder = machine_builder(machine);
  builder.setRelocationModel(llvm::Reloc::PIC_);
  return checked(builder.createTargetMachine(), "creating the target machine");
}

JitCode::JitCode(std::unique_ptr<llvm::LLVMContext> context, std::unique_ptr<llvm::Module> module,
                 const EmuMachine& machine) {
  jit_ = checked(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machine_builder(machine)).create(),
                 "creating the JIT");
  llvm::orc::SymbolMap hooks;
  for (const Hook& hook : hook_table())
    hooks[jit_->mangleAndIntern(llvm::StringRef(hook.symbol.data(), hook.symbol.size()))] = {
        llvm::orc::ExecutorAddr::fromPtr(hook.address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  llvm::orc::JITDylib& library = jit_->getMainJITDylib();
  check(library.define(llvm::orc::absoluteSymbols(std::move(hooks))), "defining the hooks");
  library.addGenerator(
      checked(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix()),
              "searching the process's symbols"));
  llvm::orc::ThreadSafeModule owned(std::move(module), llvm::orc::ThreadSafeContext(std::move(context)));
  check(jit_->addIRModule(std::move(owned)), "adding the module");
  entry_ = checked(jit_->lookup(kEntryFunction), "compiling the kernel").toPtr<KernelEntry>();
}

JitCode::~JitCode() = default;

}  // namespace kiln::runtime::emu

namespace kiln::runtime {

EmuMachine emu_machine() { return {"x86-64", emu::kEmuFeatures}; }

EmuMachine host_machine() {
  llvm::SubtargetFeatures features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) features.AddFeature(feature.getKey(), feature.getValue());
  return {llvm::sys::getHostCPUName().str(), features.getString()};
}

std::string describe_emu_machine() {
  const EmuMachine machine = emu_machine();
  char mode[160];
  std::snprintf(mode, sizeof mode,
                "round to nearest even, subnormals kept (MXCSR 0x%04x: no FTZ, no DAZ; x87 control word 0x%04x), "
                "no FMA contraction",
                kEmuMxcsr, kEmuX87ControlWord);
  return machine.cpu + " (" + machine.features + "), floating point: " + mode;
}

}  // namespace kiln::runtime
