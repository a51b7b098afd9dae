// The primary context of each GPU the process uses, with the stream kiln
// queues its kernels on, retained once and kept for the life of the process
// (internal to the runtime).
#pragma once

#include "kiln/runtime/cuda/resources.hpp"

namespace kiln::cuda {

/// One GPU as kiln uses it: its primary context, a non-blocking stream in it
/// and what the driver says about the device.
struct GpuContext {
  GpuContext(const Driver& driver, int ordinal)
      : context(driver, ordinal), stream(driver), info(driver.device_info(ordinal)) {}

  PrimaryContext context;  // made current first: the stream is created in it
  Stream stream;
  DeviceInfo info;
};

/// GPU `ordinal`'s context, made current on the calling thread. Throws
/// DriverError when the driver or the device is unavailable.
const GpuContext& current_context(int ordinal);

}  // namespace kiln::cuda
