// Parallelism and traffic sums for the sample kernels.
#include "run_support.hpp"

#include <thread>

#include "kiln/runtime/cuda/driver.hpp"

namespace kiln::kernels {

int compute_units(const Device& device) {
  if (device.kind() == Device::Kind::cuda) return cuda::Driver::instance().device_info(device.ordinal()).sm_count;
  if (device.threads() > 0) return device.threads();
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

runtime::LaunchStats& operator+=(runtime::LaunchStats& total, const runtime::LaunchStats& launch) {
  total.bytes_read += launch.bytes_read;
  total.bytes_written += launch.bytes_written;
  return total;
}

}  // namespace kiln::kernels
