// What the `cuda` device compiles a program for, shared by everything that
// must compile it the same way: the device itself, KILN_CHECK_PTX, `kiln dump`
// and the ahead-of-time generator.
#pragma once

#include <string>

#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/program.hpp"

namespace kiln::cuda {

/// The GPU code generator's target for a launch of `program` on `arch`: the
/// program's warps and register cap, and no promise that its pointer
/// arguments do not overlap (an in-place launch passes one buffer twice).
lowering::GpuTarget target_for(const runtime::Program& program, const std::string& arch);

/// The options of `target` that change the generated code, as the compile
/// cache's key holds them ("num_warps=4 max_registers=0 arguments_do_not_overlap=0").
std::string options_key(const lowering::GpuTarget& target);

}  // namespace kiln::cuda
