// The table of library kernels the C API offers, and the checks they share.
#include "library_kernels.hpp"

#include <algorithm>
#include <cstdint>

#include "api_error.hpp"

namespace kiln::capi {

namespace {
const std::vector<LibraryKernel>& library() {
  static const std::vector<LibraryKernel> kernels = {
      {"matmul", {"a", "b", "c"}, "f32, f16 or bf16", launch_matmul},
      {"softmax", {"x", "out"}, "f32, f16, bf16 or f64", launch_softmax},
      {"vector_add", {"x", "y", "out"}, "f32, f16, bf16 or f64", launch_vector_add},
  };
  return kernels;
}

}  // namespace

const LibraryKernel* find_library_kernel(std::string_view name) {
  for (const LibraryKernel& kernel : library())
    if (kernel.name == name) return &kernel;
  return nullptr;
}

std::string library_kernel_names() {
  std::string names;
  for (const LibraryKernel& kernel : library()) names += (names.empty() ? "" : ", ") + std::string(kernel.name);
  return names;
}

void require_one_of(const TensorArgument& tensor, const LibraryKernel& kernel, std::vector<ir::DType> dtypes) {
  require(std::find(dtypes.begin(), dtypes.end(), tensor.dtype()) != dtypes.end(),
          tensor.label() + " has dtype " + std::string(ir::dtype_name(tensor.dtype())) + ", " +
              std::string(kernel.name) + " takes " + std::string(kernel.dtypes));
}

void require_shape(const TensorArgument& tensor, const std::vector<std::int64_t>& expected,
                   const std::string& because) {
  require(tensor.shape() == expected, tensor.label() + " has shape " + tensor.shape_string() + ", the kernel expects " +
                                          tuple_string(expected) + " (" + because + ")");
}

std::uint64_t i32_bits(std::int64_t value) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(value)); }

}  // namespace kiln::capi
