// KILN_CHECK_PTX: the cpu and emu devices' programs also go through PTX and ptxas;
// a rejection names the kernel's dynamic shared memory, which ptxas does not
// see (the PTX declares the array without a size).
#include "ptx_check.hpp"

#include <cstdlib>
#include <string_view>

#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/cuda/ptxas.hpp"
#include "kiln/runtime/cuda/target.hpp"

namespace kiln::runtime {

bool ptx_check_requested() {
  const char* value = std::getenv("KILN_CHECK_PTX");
  return value && std::string_view(value) == "1";
}

void check_ptx_for_gpu_targets(const Program& program) {
  const std::string& kernel = program.optimized().name;
  const auto ptxas = cuda::find_ptxas();
  if (!ptxas) throw lowering::LoweringError("KILN_CHECK_PTX=1: kernel " + kernel + ": no ptxas found (set KILN_PTXAS)");
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel compiled =
        lowering::compile_for_gpu(program.optimized(), cuda::target_for(program, arch), {.keep_llvm_ir = false});
    try {
      cuda::assemble_cubin(*ptxas, compiled.ptx, arch, compiled.name);
    } catch (const std::exception& error) {
      throw lowering::LoweringError(std::string("KILN_CHECK_PTX=1: ") + error.what() + " (" + arch + ", " +
                                    std::to_string(compiled.shared_bytes) + " bytes of dynamic shared memory)");
    }
  }
}

}  // namespace kiln::runtime
