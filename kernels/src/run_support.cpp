// The parallelism and the architecture of a device, for the sample kernels'
// plans and configurations.
#include "run_support.hpp"

#include <thread>

#include "kiln/kernels/target_arch.hpp"
#include "kiln/runtime/cuda/driver.hpp"

namespace kiln::kernels {

int compute_units(const Device& device) {
  if (device.kind() == Device::Kind::cuda) return cuda::Driver::instance().device_info(device.ordinal()).sm_count;
  if (device.threads() > 0) return device.threads();
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::string target_arch(const RunOptions& options) {
  return options.arch.empty() ? target_arch(options.device) : options.arch;
}

}  // namespace kiln::kernels
