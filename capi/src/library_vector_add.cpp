// The library's vector_add through the C API: out = x + y for three
// contiguous tensors of one shape and dtype, 1024 elements per program.
#include <cstdint>
#include <memory>

#include "api_error.hpp"
#include "kiln/kernels/vector_add.hpp"
#include "library_kernels.hpp"
#include "program_launch.hpp"

namespace kiln::capi {

namespace {

constexpr int kBlock = 1024;

template <class C>
void launch_as(const Device& device, const TensorArgument& x, const TensorArgument& y, const TensorArgument& out) {
  namespace kl = kiln;
  const std::int64_t n = x.elements();
  const auto program = kl::compile<kernels::vector_add<kl::Scalar<C>, kBlock>>().program_ptr();
  launch_program(*program, device, {static_cast<int>((n + kBlock - 1) / kBlock), 1, 1},
                 {pointer_argument(x), pointer_argument(y), pointer_argument(out), {i32_bits(n), {}}});
}

}  // namespace

void launch_vector_add(const Device& device, const std::vector<TensorArgument>& tensors) {
  const LibraryKernel& kernel = *find_library_kernel("vector_add");
  const TensorArgument &x = tensors[0], &y = tensors[1], &out = tensors[2];
  require_one_of(x, kernel, {ir::DType::f32, ir::DType::f16, ir::DType::bf16, ir::DType::f64});
  for (const TensorArgument* tensor : {&y, &out}) {
    require_shape(*tensor, x.shape(), "the shape of 'x'");
    tensor->require_dtype(x.dtype(), "the dtype of 'x'");
  }
  for (const TensorArgument* tensor : {&x, &y, &out}) tensor->require_contiguous();
  // The last program's offsets, up to a whole tile past the end, are i32.
  constexpr std::int64_t kLargest = INT32_MAX - kBlock;
  require(x.elements() <= kLargest, x.label() + " has " + std::to_string(x.elements()) +
                                        " elements, beyond the kernel's 32-bit indices (at most " +
                                        std::to_string(kLargest) + ")");
  if (x.elements() == 0) return;
  switch (x.dtype()) {
    case ir::DType::f32: return launch_as<float>(device, x, y, out);
    case ir::DType::f16: return launch_as<half>(device, x, y, out);
    case ir::DType::bf16: return launch_as<bfloat16>(device, x, y, out);
    default: return launch_as<double>(device, x, y, out);
  }
}

}  // namespace kiln::capi
