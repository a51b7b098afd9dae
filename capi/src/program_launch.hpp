// Launching a compiled program on marshalled arguments from the C API: the
// variant specialised for what the arguments' values allow (16-byte aligned
// pointers, integers divisible by 16 or equal to 1), as kl::Kernel::launch
// picks it for Buffers.
#pragma once

#include <vector>

#include "kiln/runtime/device.hpp"
#include "kiln/runtime/interpreter.hpp"
#include "kiln/runtime/program.hpp"
#include "tensor_argument.hpp"

namespace kiln::capi {

/// The argument a pointer parameter receives for `tensor`: its first
/// element's address, with the range it may touch.
runtime::KernelArgument pointer_argument(const TensorArgument& tensor);

void launch_program(const runtime::Program& program, const Device& device, runtime::Grid grid,
                    const std::vector<runtime::KernelArgument>& arguments);

}  // namespace kiln::capi
