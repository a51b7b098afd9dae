// Running a compiled emu kernel: its entry and description, programs handed
// from one counter to host threads, each with its own CTA scheduler. No LLVM
// here: the JIT (emulated_kernel.cpp) and ahead-of-time builds both launch
// through this.
#pragma once

#include <span>

#include "kernel_description.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime::emu {

/// The emu's description of IR kernel `kernel` run with `num_warps` warps per
/// program: its name, argument types and names, threads per program. The
/// retargeting fills in the access sites, barriers and shared memory.
KernelDescription describe_kernel(const ir::Function& kernel, int num_warps);

/// Runs `entry` (the kernel `description` describes) over `grid` with `args`
/// on `device`'s host threads. Throws std::invalid_argument when the argument
/// count is wrong, KernelError for a fault of the emulated code.
LaunchStats launch_emulated(const KernelDescription& description, KernelEntry entry, const Device& device, Grid grid,
                            std::span<const KernelArgument> args);

}  // namespace kiln::runtime::emu
