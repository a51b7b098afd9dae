// Bytes allocated on a device: host memory for `cpu` and `emu`, GPU memory
// for `cuda`. Buffer<T> holds one; kernels receive its address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kiln/runtime/device.hpp"

namespace kiln::cuda {
class DeviceMemory;
}

namespace kiln::runtime {

class DeviceMemory {
 public:
  /// `bytes` zero-filled bytes on `device`, aligned to 64 bytes (256 on a
  /// GPU). Throws std::runtime_error (cuda::DriverError on a GPU) when the
  /// memory cannot be allocated.
  DeviceMemory(const Device& device, std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  const Device& device() const { return device_; }
  std::size_t bytes() const { return bytes_; }
  /// The address kernels see: a host pointer on `cpu` and `emu`, the GPU
  /// address on `cuda`.
  std::uintptr_t address() const { return address_; }
  /// The memory as a host pointer; null on `cuda`, whose memory the host
  /// cannot read directly.
  void* host() const;

  /// Copies `bytes` from host memory at `source` to the start of this memory.
  void copy_from_host(const void* source, std::size_t bytes);
  /// Copies the first `bytes` of this memory to host memory at `destination`.
  void copy_to_host(void* destination, std::size_t bytes) const;
  /// Sets every byte to zero (on `cuda` with cuMemsetD8, waiting for it).
  void fill_zeros();

 private:
  Device device_;
  std::size_t bytes_;
  std::uintptr_t address_;                   // the host pointer, or the GPU address
  std::unique_ptr<cuda::DeviceMemory> gpu_;  // the driver allocation on `cuda`
};

}  // namespace kiln::runtime
