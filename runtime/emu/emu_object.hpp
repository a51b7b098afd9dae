// Compiling the emu's code ahead of time (kiln_add_kernels): each kernel's
// retargeted module, as the JIT would compile it, linked into one module and
// emitted as a host object file for the emu's fixed machine.
#pragma once

#include <memory>
#include <string>

#include "kernel_description.hpp"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace kiln::runtime::emu {

class EmuObjectBuilder {
 public:
  EmuObjectBuilder();
  ~EmuObjectBuilder();
  EmuObjectBuilder(const EmuObjectBuilder&) = delete;
  EmuObjectBuilder& operator=(const EmuObjectBuilder&) = delete;

  /// Adds `kernel` (the tile IR, run with `num_warps` warps per program)
  /// through the code generator and the retargeting, its entry named
  /// `entry_symbol` (a KernelEntry) and everything else of it internal.
  /// Returns its description. Throws lowering::LoweringError as
  /// compile_for_emu does.
  KernelDescription add(const ir::Function& kernel, int num_warps, const std::string& entry_symbol);

  /// The object file (ELF, x86-64) of every kernel added, compiled for
  /// emu_machine() with the JIT's options (jit.cpp), position independent.
  std::string emit() const;

 private:
  std::unique_ptr<llvm::LLVMContext> context_;
  std::unique_ptr<llvm::Module> combined_;
};

}  // namespace kiln::runtime::emu
