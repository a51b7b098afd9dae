// The emu device's CompiledKernel: the code generator's module (stopped after
// `codegen`, no O3 and PTX) parsed in its own LLVMContext, retargeted, JIT
// compiled; a launch runs it through launch_emulated (emu_launch.hpp).
#include "emulated_kernel.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/SourceMgr.h>

#include <stdexcept>

#include "emu_launch.hpp"
#include "jit.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/host_reference.hpp"
#include "retarget_module.hpp"

namespace kiln::runtime::emu {

namespace {

class EmulatedKernel final : public CompiledKernel {
 public:
  EmulatedKernel(KernelDescription description, std::unique_ptr<JitCode> code)
      : description_(std::move(description)), code_(std::move(code)) {}

  LaunchStats launch(const Device& device, Grid grid, std::span<const KernelArgument> args) const override {
    return launch_emulated(description_, code_->entry(), device, grid, args);
  }

 private:
  KernelDescription description_;
  std::unique_ptr<JitCode> code_;
};

}  // namespace

std::unique_ptr<CompiledKernel> compile_for_emu(const Program& program, const EmuMachine& machine,
                                                const std::string& arch) {
  lowering::GpuTarget target;
  target.arch = arch;
  target.num_warps = program.options().num_warps;
  target.check_hints = true;
  target.inline_asm_on_host = true;
  if (const std::string missing = missing_host_reference(program.optimized(), "the emu device"); !missing.empty())
    throw std::invalid_argument(missing);
  lowering::LoweringOptions options;
  options.stop_after = "codegen";
  const lowering::GpuKernel gpu = lowering::compile_for_gpu(program.optimized(), target, options);
  return compile_llvm_ir_for_emu(gpu.llvm_ir, gpu.name, program.optimized(), target.num_warps, machine);
}

std::unique_ptr<CompiledKernel> compile_llvm_ir_for_emu(const std::string& llvm_ir, const std::string& function,
                                                        const ir::Function& kernel, int num_warps,
                                                        const EmuMachine& machine) {
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseIR(llvm::MemoryBufferRef(llvm_ir, function), diagnostic, *context);
  if (!module)
    throw lowering::LoweringError("emu: kernel " + kernel.name + ": its LLVM IR does not parse: line " +
                                  std::to_string(diagnostic.getLineNo()) + ": " + diagnostic.getMessage().str());
  KernelDescription description = describe_kernel(kernel, num_warps);
  const HostTarget host = host_target();
  retarget_module(*module, function, host.triple, host.layout, description);
  auto code = std::make_unique<JitCode>(std::move(context), std::move(module), machine);
  return std::make_unique<EmulatedKernel>(std::move(description), std::move(code));
}

}  // namespace kiln::runtime::emu
