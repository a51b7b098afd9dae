// The parallelism of a device, for the sample kernels' plans.
#include "run_support.hpp"

#include <thread>

#include "kiln/runtime/cuda/driver.hpp"

namespace kiln::kernels {

int compute_units(const Device& device) {
  if (device.kind() == Device::Kind::cuda) return cuda::Driver::instance().device_info(device.ordinal()).sm_count;
  if (device.threads() > 0) return device.threads();
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace kiln::kernels
