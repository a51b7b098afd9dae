// Whether CUDA is usable here and which GPUs it offers, for `kiln info` and the
// default device; every failure becomes a one-line reason, never an exception.
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "kiln/runtime/cuda/driver.hpp"

namespace kiln::cuda {
namespace {

ProbeResult describe(const Driver& driver) {
  ProbeResult result;
  int count = driver.device_count();
  if (count == 0) {
    result.message = "cuda: the driver at " + driver.loaded_from() + " reports no GPU";
    return result;
  }
  std::string list;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    DeviceInfo info = driver.device_info(ordinal);
    list +=
        (list.empty() ? "" : ", ") + info.name + " (" + info.arch() + ", " + std::to_string(info.sm_count) + " SMs)";
    result.devices.push_back(std::move(info));
  }
  result.available = true;
  result.message = "cuda: " + std::to_string(count) + (count == 1 ? " GPU: " : " GPUs: ") + list;
  return result;
}

}  // namespace

ProbeResult probe(const Driver& driver) {
  try {
    return describe(driver);
  } catch (const std::exception& error) {
    return {false, error.what(), {}};
  }
}

ProbeResult probe() {
  try {
    return describe(Driver::instance());
  } catch (const std::exception& error) {
    return {false, error.what(), {}};
  }
}

ProbeResult probe(const std::string& library_path) {
  try {
    return describe(*Driver::load(library_path));
  } catch (const std::exception& error) {
    return {false, error.what(), {}};
  }
}

}  // namespace kiln::cuda
