// The `emu` device's compiler entry point: a program through the GPU code
// generator, retargeted and JIT-compiled for the host. No LLVM here.
#pragma once

#include <memory>
#include <string>

#include "kiln/runtime/emu_machine.hpp"
#include "kiln/runtime/program.hpp"

namespace kiln::runtime::emu {

/// The architecture the emu takes the code generator's output for unless
/// told otherwise: sm_80 (mma.sync and cp.async); sm_90a adds wgmma.
inline constexpr const char* kEmulatedArch = "sm_80";

/// The GPU code generator's LLVM module for `program` (for `arch`, sm_80 or
/// sm_90a, and the program's num_warps), compiled for `machine` (the emu's
/// fixed one unless a test compares machines): each launch runs every program (CTA) as num_warps * 32
/// fibers, programs spread over the device's host threads. Throws
/// lowering::LoweringError for what the code generator or the emu cannot handle.
std::unique_ptr<CompiledKernel> compile_for_emu(const Program& program, const EmuMachine& machine = emu_machine(),
                                                const std::string& arch = kEmulatedArch);

/// The second half of compile_for_emu: `llvm_ir`, an nvptx64 module's text
/// whose kernel is the function `function`, compiled for `machine` and
/// run as `kernel` (messages use its name, argument types and names) with
/// `num_warps` warps per program. Throws lowering::LoweringError naming an
/// intrinsic or external function the emu has no hook for.
std::unique_ptr<CompiledKernel> compile_llvm_ir_for_emu(const std::string& llvm_ir, const std::string& function,
                                                        const ir::Function& kernel, int num_warps,
                                                        const EmuMachine& machine = emu_machine());

}  // namespace kiln::runtime::emu
