// The sample library's kernels the C API offers by name (kiln/kiln.h lists
// them): each checks its tensors, picks its dtype, tile sizes and grid from
// them, and launches.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kiln/ir/dtype.hpp"
#include "kiln/runtime/device.hpp"
#include "tensor_argument.hpp"

namespace kiln::capi {

struct LibraryKernel {
  std::string_view name;
  std::vector<std::string_view> parameters;  // every argument is a tensor
  std::string_view dtypes;                   // "f32, f16, bf16 or f64", for messages
  void (*launch)(const Device& device, const std::vector<TensorArgument>& tensors);
};

/// Null when the library has no kernel `name`.
const LibraryKernel* find_library_kernel(std::string_view name);
/// "matmul, softmax, vector_add".
std::string library_kernel_names();

void launch_softmax(const Device& device, const std::vector<TensorArgument>& tensors);
void launch_matmul(const Device& device, const std::vector<TensorArgument>& tensors);
void launch_vector_add(const Device& device, const std::vector<TensorArgument>& tensors);

/// Fails unless `tensor` has one of `dtypes` (whose names `kernel.dtypes` lists).
void require_one_of(const TensorArgument& tensor, const LibraryKernel& kernel, std::vector<ir::DType> dtypes);
/// Fails unless `tensor` has the shape `expected`, naming `because`.
void require_shape(const TensorArgument& tensor, const std::vector<std::int64_t>& expected, const std::string& because);
/// A size or stride the kernel takes as an i32 (tensor checks bound it first).
std::uint64_t i32_bits(std::int64_t value);

}  // namespace kiln::capi
