// The emu's compiler for the host: LLVM's ORC JIT (LLJIT) for a fixed x86-64
// machine (emu_machine(); see jit.cpp for the optimisation level).
#pragma once

#include <llvm/IR/DataLayout.h>

#include <memory>
#include <string>

#include "kernel_description.hpp"
#include "kiln/runtime/emu_machine.hpp"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
namespace orc {
class LLJIT;
}
}  // namespace llvm

namespace kiln::runtime::emu {

/// What the JIT compiles for: this process's x86-64 triple and its data layout.
struct HostTarget {
  std::string triple;
  llvm::DataLayout layout;
};
HostTarget host_target();

/// The target machine the JIT compiles with for `machine`, the same CPU,
/// features, optimisation level and floating-point options, emitting
/// position-independent code: ahead-of-time builds (emu_object.cpp) compile
/// the same bits the JIT would.
std::unique_ptr<llvm::TargetMachine> object_target_machine(const EmuMachine& machine);

/// A retargeted module compiled to machine code in this process; the code
/// lives as long as this object.
class JitCode {
 public:
  /// Compiles `module` for `machine` and finds its entry
  /// (retarget_module's kEntryFunction). Throws std::runtime_error with
  /// LLVM's message when that fails.
  JitCode(std::unique_ptr<llvm::LLVMContext> context, std::unique_ptr<llvm::Module> module, const EmuMachine& machine);
  ~JitCode();
  JitCode(const JitCode&) = delete;
  JitCode& operator=(const JitCode&) = delete;

  KernelEntry entry() const { return entry_; }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  KernelEntry entry_ = nullptr;
};

}  // namespace kiln::runtime::emu
