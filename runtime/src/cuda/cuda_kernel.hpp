// The `cuda` device's compiled kernel (internal to the runtime).
#pragma once

#include <memory>

#include "kiln/runtime/program.hpp"

namespace kiln::cuda {

/// Compiles `program` for the GPU `device` names: the GPU code generator's PTX
/// for the device's architecture, assembled by ptxas into a cubin when ptxas
/// is found (else compiled by the driver), through the compile cache, then
/// loaded into the GPU's primary context, opted into its dynamic shared
/// memory when that is above 48 KiB. Throws DriverError when the driver or
/// the GPU is unavailable, lowering::LoweringError for what the code
/// generator cannot lower, std::runtime_error when ptxas fails or the kernel
/// needs more shared memory per block than the GPU allows.
std::unique_ptr<runtime::CompiledKernel> compile_for_cuda(const runtime::Program& program, const Device& device);

}  // namespace kiln::cuda
