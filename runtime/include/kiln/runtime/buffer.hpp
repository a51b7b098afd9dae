// Buffer<T>: an array in a device's memory, with copies to and from the host.
#pragma once

#include <algorithm>
#include <memory>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/runtime/device.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln {

/// `n` elements of T on a device. On the cpu device the memory is host memory
/// aligned to 64 bytes. Movable, not copyable.
template <class T>
class Buffer {
 public:
  using value_type = T;

  explicit Buffer(std::size_t n, Device device = Device::default_device()) : device_(device), size_(n) {
    if (n > 0) data_.reset(static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t{64})));
    std::uninitialized_fill_n(data_.get(), n, T{});
  }
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
  /// Host pointer (the cpu device's memory is host memory).
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }

  void copy_from(std::span<const T> host) {
    if (host.size() != size_)
      throw std::invalid_argument("Buffer::copy_from: " + std::to_string(host.size()) + " elements into a buffer of " +
                                  std::to_string(size_));
    std::copy(host.begin(), host.end(), data_.get());
  }
  std::vector<T> to_host() const { return std::vector<T>(data_.get(), data_.get() + size_); }

  /// The memory range a kernel argument pointing at this buffer may touch.
  runtime::MemoryRange range(std::string name) const {
    auto begin = reinterpret_cast<std::uintptr_t>(data_.get());
    return {begin, begin + bytes(), std::move(name)};
  }

 private:
  struct Free {
    void operator()(T* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  Device device_;
  std::size_t size_;
  std::unique_ptr<T, Free> data_;
};

}  // namespace kiln
