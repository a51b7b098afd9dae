// The one pass that turns the GPU code generator's nvptx64 module into a
// host module the JIT can compile (see retarget_module.cpp).
#pragma once

#include <string>

#include "kernel_description.hpp"

namespace llvm {
class ConstantInt;
class DataLayout;
class Instruction;
class LLVMContext;
class Module;
}  // namespace llvm

namespace kiln::runtime::emu {

/// The function the retargeting adds to call the kernel: `void
/// kiln_emu_entry(ptr arguments)`, the launch arguments as 64-bit words.
inline constexpr const char* kEntryFunction = "kiln_emu_entry";

/// Rewrites `module`, whose kernel is the function `kernel_function`, for the
/// host (`host_triple`, `host_layout`): NVVM intrinsics and external GPU
/// functions become calls of their hooks (hooks.hpp), shared-memory globals
/// become offsets into the program's shared memory, each global-memory access
/// gets a bounds check, and kEntryFunction is added. Fills `kernel`'s access
/// sites and shared-memory size. Throws lowering::LoweringError naming the
/// intrinsic or function and the kernel when one has no hook.
void retarget_module(llvm::Module& module, const std::string& kernel_function, const std::string& host_triple,
                     const llvm::DataLayout& host_layout, KernelDescription& kernel);

/// The source line the code generator recorded on `instruction`
/// (`!kiln.place !{!"file:line"}`); empty when none.
std::string place_of(const llvm::Instruction& instruction);

/// Appends `site` to the kernel's access sites and returns its index (i32).
llvm::ConstantInt* add_site(KernelDescription& kernel, llvm::LLVMContext& context, AccessSite site);

}  // namespace kiln::runtime::emu
