// Host tensors for the C API tests: elements in a std::vector with a
// DLManagedTensor describing them (any shape and strides), seeded random
// inputs, and a C API call that must succeed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kiln/ir/numeric.hpp"
#include "kiln/kiln.h"

namespace kiln::capi_test {

template <class T>
DLDataType dlpack_dtype() {
  if constexpr (std::is_same_v<T, float>) return {kDLFloat, 32, 1};
  else if constexpr (std::is_same_v<T, double>) return {kDLFloat, 64, 1};
  else if constexpr (std::is_same_v<T, half>) return {kDLFloat, 16, 1};
  else if constexpr (std::is_same_v<T, bfloat16>) return {kDLBfloat, 16, 1};
  else if constexpr (std::is_same_v<T, std::int32_t>) return {kDLInt, 32, 1};
  else static_assert(sizeof(T) == 0, "no DLPack dtype for this type");
}

/// `shape` elements of T in host memory, row-major unless `strides` (in
/// elements) say otherwise; the storage holds every element the strides reach.
template <class T>
class HostTensor {
 public:
  explicit HostTensor(std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {})
      : shape_(std::move(shape)), strides_(std::move(strides)) {
    std::size_t reach = 1;
    if (strides_.empty()) {
      for (std::int64_t size : shape_) reach *= static_cast<std::size_t>(size);
    } else {
      for (std::size_t d = 0; d < shape_.size(); ++d)
        if (shape_[d] > 0) reach += static_cast<std::size_t>((shape_[d] - 1) * strides_[d]);
    }
    values_.assign(reach, T(0.0f));
    managed_.dl_tensor = {values_.data(),
                          {kDLCPU, 0},
                          static_cast<std::int32_t>(shape_.size()),
                          dlpack_dtype<T>(),
                          shape_.data(),
                          strides_.empty() ? nullptr : strides_.data(),
                          0};
  }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  DLManagedTensor* dlpack() { return &managed_; }
  kiln_argument argument() { return kiln_tensor_argument(&managed_); }
  std::vector<T>& values() { return values_; }
  /// Element (row, col) of a 2-D tensor.
  T& at(std::int64_t row, std::int64_t col) {
    const std::int64_t row_stride = strides_.empty() ? shape_[1] : strides_[0];
    const std::int64_t col_stride = strides_.empty() ? 1 : strides_[1];
    return values_[static_cast<std::size_t>(row * row_stride + col * col_stride)];
  }
  /// Every element the strides reach, uniform in [low, high) from `seed`.
  void fill_random(std::uint32_t seed, double low, double high) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> uniform(low, high);
    for (T& value : values_) value = T(uniform(random));
  }

 private:
  std::vector<std::int64_t> shape_, strides_;
  std::vector<T> values_;
  DLManagedTensor managed_{};
};

/// Fails the test with the C API's message unless `status` is KILN_OK.
inline void expect_ok(kiln_status status) {
  ASSERT_EQ(status, KILN_OK) << kiln_status_name(status) << ": " << kiln_last_error();
}

/// A device opened for a test and closed after it.
struct OpenDevice {
  explicit OpenDevice(const char* name) { expect_ok(kiln_device_open(name, &device)); }
  ~OpenDevice() { kiln_device_close(device); }
  kiln_device* device = nullptr;
};

/// A kernel made for a test and released after it.
struct OwnedKernel {
  ~OwnedKernel() { kiln_kernel_release(kernel); }
  kiln_kernel* kernel = nullptr;
};

}  // namespace kiln::capi_test
