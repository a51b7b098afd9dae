// A test mode of the cpu and emu devices: every program they run is also
// compiled to PTX for each GPU architecture kiln targets and assembled by
// ptxas, so that a test suite run on either also proves each of its kernels
// reaches a cubin (internal to the runtime).
#pragma once

#include "kiln/runtime/program.hpp"

namespace kiln::runtime {

/// True when KILN_CHECK_PTX=1.
bool ptx_check_requested();

/// Compiles `program` for sm_80 and sm_90a and assembles each PTX module with
/// ptxas. Throws lowering::LoweringError naming the kernel and architecture
/// when either step fails, or when no ptxas is found.
void check_ptx_for_gpu_targets(const Program& program);

}  // namespace kiln::runtime
