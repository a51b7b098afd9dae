// The retargeting step that turns f16 and bf16 into 16-bit integers
// (narrow_floats.cpp), so that host instruction selection never converts a
// narrow float.
#pragma once

#include "kernel_description.hpp"

namespace llvm {
class Module;
}

namespace kiln::runtime::emu {

/// Rewrites `module`'s f16/bf16 conversions and arithmetic into hook calls
/// and f32 arithmetic, then every remaining f16/bf16 value (only moved) into
/// an i16, the functions' parameters included; lowering::LoweringError naming
/// `kernel` and the instruction for one it has no rule for.
void lower_narrow_floats_to_integers(llvm::Module& module, const KernelDescription& kernel);

}  // namespace kiln::runtime::emu
