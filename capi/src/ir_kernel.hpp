// Kernels from the tile IR's text form: parsed, verified and optimised into a
// program, and launched on C API arguments checked against its parameters.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "kiln/kiln.h"
#include "kiln/runtime/device.hpp"
#include "kiln/runtime/program.hpp"

namespace kiln::capi {

/// Throws ir::IRError "ir text:<line>:<column>: ..." for text that does not
/// parse, or the verifier's message for a kernel that is not valid.
std::shared_ptr<const runtime::Program> compile_ir(std::string_view text);

/// Checks `arguments` against the program's parameters (count, kinds,
/// dtypes, devices, contiguity, scalar ranges) and runs it over `grid`.
void launch_ir(const runtime::Program& program, const Device& device, std::span<const kiln_argument> arguments,
               const std::int32_t* grid);

}  // namespace kiln::capi
