// Hands a program to the compiler of the device it is launched on.
#include <stdexcept>

#include "../emu/emulated_kernel.hpp"
#include "cuda/cuda_kernel.hpp"
#include "kiln/runtime/program.hpp"
#include "ptx_check.hpp"

namespace kiln::runtime {

std::unique_ptr<CompiledKernel> compile_for_device(const Program& program, const Device& device) {
  if (device.kind() == Device::Kind::emu) {
    if (ptx_check_requested()) check_ptx_for_gpu_targets(program);
    return emu::compile_for_emu(program, emu_machine(), device.emulated_arch());
  }
  if (device.kind() == Device::Kind::cuda) return cuda::compile_for_cuda(program, device);
  throw std::invalid_argument("launch " + program.display_name() + ": device " + device.name() +
                              " cannot run kernels in this build");
}

}  // namespace kiln::runtime
