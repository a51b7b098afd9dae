// Buffer<T>: an array in a device's memory, with copies to and from the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/runtime/device.hpp"
#include "kiln/runtime/device_memory.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln {

/// `n` elements of T on a device, zero-filled. On `cpu` and `emu` the memory
/// is host memory aligned to 64 bytes; on `cuda` it is GPU memory, reached
/// through copy_from/to_host. Movable, not copyable.
template <class T>
class Buffer {
 public:
  using value_type = T;

  explicit Buffer(std::size_t n, Device device = Device::default_device())
      : device_(device),
        size_(n),
        memory_(n > 0 ? std::make_unique<runtime::DeviceMemory>(device, n * sizeof(T)) : nullptr) {}
  /// A buffer holding a copy of `host`.
  static Buffer from(std::span<const T> host, Device device = Device::default_device()) {
    Buffer b(host.size(), device);
    b.copy_from(host);
    return b;
  }
  static Buffer from(const std::vector<T>& host, Device device = Device::default_device()) {
    return from(std::span<const T>(host), device);
  }

  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  const Device& device() const { return device_; }
  /// The address a kernel sees for element 0 (0 when empty): the host address
  /// on `cpu` and `emu`, the GPU address on `cuda`. Store it in an i64 buffer
  /// and a kernel can load it and cast it to a pointer (kl::cast<kl::Ptr<T>>);
  /// the `cpu` and `emu` bounds checks accept such a pointer anywhere inside
  /// a live buffer of the device.
  std::uint64_t address() const { return memory_ ? memory_->address() : 0; }
  /// Host pointer to the elements (null when empty). Throws std::logic_error
  /// on `cuda`, whose memory the host cannot read: use to_host().
  T* data() { return host_elements(); }
  const T* data() const { return host_elements(); }

  void copy_from(std::span<const T> host) {
    if (host.size() != size_)
      throw std::invalid_argument("Buffer::copy_from: " + std::to_string(host.size()) + " elements into a buffer of " +
                                  std::to_string(size_));
    if (memory_) memory_->copy_from_host(host.data(), bytes());
  }
  std::vector<T> to_host() const {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> stores bits, not bools
      const std::unique_ptr<bool[]> host(new bool[size_]);
      if (memory_) memory_->copy_to_host(host.get(), bytes());
      return std::vector<bool>(host.get(), host.get() + size_);
    } else {
      std::vector<T> host(size_);
      if (memory_) memory_->copy_to_host(host.data(), bytes());
      return host;
    }
  }

  /// The memory range a kernel argument pointing at this buffer may touch.
  runtime::MemoryRange range(std::string name) const {
    const std::uintptr_t begin = memory_ ? memory_->address() : 0;
    return {begin, begin + bytes(), std::move(name)};
  }

 private:
  T* host_elements() const {
    if (!memory_) return nullptr;
    if (void* host = memory_->host()) return static_cast<T*>(host);
    throw std::logic_error("Buffer::data: the buffer's " + std::to_string(size_) + " elements are in " +
                           device_.name() + " memory, which the host cannot read; use to_host()");
  }

  Device device_;
  std::size_t size_;
  std::unique_ptr<runtime::DeviceMemory> memory_;
};

}  // namespace kiln
