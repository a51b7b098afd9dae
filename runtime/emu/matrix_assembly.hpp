// The step of the retargeting that runs the inline assembly of the GPU code
// generator's matrix instructions (wgmma, codegen_wgmma.cpp; fp8 mma.sync,
// codegen_dot.cpp) through the emu's hooks.
#pragma once

#include "kernel_description.hpp"

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::runtime::emu {

/// Replaces each inline assembly call of `module`: fence.proxy.async is
/// dropped (the host has one view of memory); wgmma.fence, commit_group and
/// wait_group call their hooks (the wait's registers pass through);
/// wgmma.mma_async.sync.aligned.m64nNkK on f16, bf16, e4m3, e5m2 or s8 calls
/// kiln_emu_wgmma_mma with its shape, descriptors, accumulator registers in
/// memory and an access site (its shared reads are checked as the threads'
/// are); mma.sync.aligned.m16n8k32.row.col.f32 on e4m3 or e5m2 calls
/// kiln_emu_mma_fp8 with its registers in memory. Throws
/// lowering::LoweringError naming the kernel and the assembly for any other.
void run_matrix_assembly_on_hooks(llvm::Module& module, KernelDescription& kernel);

}  // namespace kiln::runtime::emu
