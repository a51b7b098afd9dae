// Shape strings, parallelism and traffic sums for the sample kernels.
#include "run_support.hpp"

#include <thread>

namespace kiln::kernels {

std::string shape_string(const RunOptions& options, const std::vector<Dim>& dims) {
  std::string out;
  for (const Dim& d : dims) out += (out.empty() ? "" : " ") + d.name + "=" + std::to_string(options.dims.at(d.name));
  return out;
}

int compute_units(const Device& device) {
  if (device.threads() > 0) return device.threads();
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

runtime::LaunchStats& operator+=(runtime::LaunchStats& total, const runtime::LaunchStats& launch) {
  total.bytes_read += launch.bytes_read;
  total.bytes_written += launch.bytes_written;
  return total;
}

}  // namespace kiln::kernels
