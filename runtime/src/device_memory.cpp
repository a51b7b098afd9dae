// Device memory: aligned host memory for `cpu` and `emu` (recorded in the
// registry of live allocations), driver allocations in the GPU's primary
// context for `cuda`.
#include "kiln/runtime/device_memory.hpp"

#include <cstring>
#include <new>
#include <string>

#include "cuda/gpu_context.hpp"
#include "live_allocations.hpp"

namespace kiln::runtime {

namespace {

constexpr std::align_val_t kHostAlignment{64};

}  // namespace

DeviceMemory::DeviceMemory(const Device& device, std::size_t bytes) : device_(device), bytes_(bytes), address_(0) {
  if (device.kind() == Device::Kind::cuda) {
    try {
      cuda::current_context(device.ordinal());
      gpu_ = std::make_unique<cuda::DeviceMemory>(cuda::Driver::instance(), bytes);
      gpu_->fill_zeros();
    } catch (const cuda::DriverError& error) {
      throw cuda::DriverError(
          "cannot allocate " + std::to_string(bytes) + " bytes on " + device.name() + ": " + error.what(),
          error.result());
    }
    address_ = gpu_->address();
    return;
  }
  void* host = ::operator new(bytes == 0 ? 1 : bytes, kHostAlignment);
  std::memset(host, 0, bytes);
  address_ = reinterpret_cast<std::uintptr_t>(host);
  live_allocations::add(address_, bytes);
}

DeviceMemory::~DeviceMemory() {
  if (device_.kind() != Device::Kind::cuda) {
    live_allocations::remove(address_);
    ::operator delete(reinterpret_cast<void*>(address_), kHostAlignment);
    return;
  }
  // cuMemFree needs the allocation's context current on this thread, which
  // may not be the one that allocated. The context exists (the allocation
  // was made in it); if the driver is shutting down, freeing fails quietly.
  try {
    cuda::current_context(device_.ordinal());
  } catch (const cuda::DriverError&) {
  }
  gpu_.reset();
}

void* DeviceMemory::host() const {
  return device_.kind() == Device::Kind::cuda ? nullptr : reinterpret_cast<void*>(address_);
}

void DeviceMemory::copy_from_host(const void* source, std::size_t bytes) {
  if (device_.kind() == Device::Kind::cuda) {
    cuda::current_context(device_.ordinal());
    gpu_->copy_from_host(source, bytes);
    return;
  }
  std::memcpy(host(), source, bytes);
}

void DeviceMemory::copy_to_host(void* destination, std::size_t bytes) const {
  if (device_.kind() == Device::Kind::cuda) {
    cuda::current_context(device_.ordinal());
    gpu_->copy_to_host(destination, bytes);
    return;
  }
  std::memcpy(destination, host(), bytes);
}

void DeviceMemory::fill_zeros() {
  if (device_.kind() == Device::Kind::cuda) {
    cuda::current_context(device_.ordinal());
    gpu_->fill_zeros();
    return;
  }
  std::memset(host(), 0, bytes_);
}

}  // namespace kiln::runtime
