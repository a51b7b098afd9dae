// The GPU architecture whose configuration (tiles, warps, stages) the
// library's kernels launch in on a device (kMatmulSm80, kMatmulSm90a).
#pragma once

#include <string>

#include "kiln/runtime/cuda/driver.hpp"
#include "kiln/runtime/device.hpp"

namespace kiln::kernels {

/// "sm_90a" on a cuda GPU of compute capability 9.0 (where the code
/// generator targets sm_90a and its wgmma), the architecture whose code an
/// emu device runs, and "sm_80" on every other device (cpu included).
inline std::string target_arch(const Device& device) {
  if (device.kind() == Device::Kind::emu) return device.emulated_arch();
  if (device.kind() == Device::Kind::cuda && cuda::Driver::instance().device_info(device.ordinal()).arch() == "sm_90")
    return "sm_90a";
  return "sm_80";
}

}  // namespace kiln::kernels
