// A DLPack tensor passed to kiln_launch, checked once: its element type as a
// kiln dtype, its shape and strides in elements, its first element's address
// and the memory range a kernel may touch through it, and the checks the
// kernels ask of it (rank, dtype, contiguity, 32-bit index reach), each
// failing with one line naming the argument and the values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/dlpack_abi.h"
#include "kiln/ir/dtype.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::capi {

class TensorArgument {
 public:
  /// Checks `tensor` (not null, a known dtype of one lane, shape and strides
  /// present, no negative extents or strides, element-aligned) and that
  /// `device` can address its memory. `label` names it in messages:
  /// "softmax argument 1 'out'".
  TensorArgument(const DLManagedTensor* tensor, const Device& device, std::string label);

  const std::string& label() const { return label_; }
  ir::DType dtype() const { return dtype_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  const std::vector<std::int64_t>& strides() const { return strides_; }
  std::int64_t elements() const;
  std::uintptr_t address() const { return address_; }
  /// The bytes from the first element to one past the last one reachable.
  runtime::MemoryRange range() const;
  /// "(4, 8)"; "()" for a 0-d tensor.
  std::string shape_string() const;

  void require_rank(int rank) const;
  /// `expected_because`: why the kernel expects that dtype, for the message.
  void require_dtype(ir::DType expected, const std::string& expected_because) const;
  /// Row-major contiguous (dimensions of size 1 may have any stride).
  void require_contiguous() const;
  /// Dimension `dim` has stride 1 (or size 1).
  void require_unit_stride(int dim) const;
  /// Every element offset the kernel forms (up to the last element's) fits
  /// its 32-bit indices.
  void require_32bit_reach() const;
  /// The strides of a contiguous tensor of this shape, "(8, 1)".
  std::string contiguous_strides() const;

 private:
  std::string label_;
  ir::DType dtype_;
  std::vector<std::int64_t> shape_;
  std::vector<std::int64_t> strides_;
  std::uintptr_t address_;
};

/// Sizes or strides as Python writes a tuple: "(4, 8)", "(5,)", "()".
std::string tuple_string(const std::vector<std::int64_t>& values);

/// "f32", "bf16"... for a DLPack dtype kiln knows, else its code, bits and lanes.
std::string dlpack_dtype_string(const DLDataType& dtype);

}  // namespace kiln::capi
