// The primary context of each GPU the process uses, with the stream kiln
// queues its kernels on, retained once and kept for the life of the process
// (internal to the runtime).
#pragma once

#include <new>

#include "kiln/lowering/fault_record.hpp"
#include "kiln/runtime/cuda/resources.hpp"

namespace kiln::cuda {

/// One GPU as kiln uses it: its primary context, a non-blocking stream in
/// it, what the driver says about the device and the fault record its
/// kernels fill when they stop at a fault (kiln/lowering/fault_record.hpp).
struct GpuContext {
  GpuContext(const Driver& driver, int ordinal)
      : context(driver, ordinal),
        stream(driver),
        info(driver.device_info(ordinal)),
        fault_memory(driver, sizeof(lowering::FaultRecord)) {
    new (fault_memory.host()) lowering::FaultRecord{};
  }

  lowering::FaultRecord& fault_record() const { return *static_cast<lowering::FaultRecord*>(fault_memory.host()); }

  PrimaryContext context;  // made current first: the stream and the record are created in it
  Stream stream;
  DeviceInfo info;
  MappedHostMemory fault_memory;
};

/// GPU `ordinal`'s context, made current on the calling thread. Throws
/// DriverError when the driver or the device is unavailable.
const GpuContext& current_context(int ordinal);

}  // namespace kiln::cuda
