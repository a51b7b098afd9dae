// The library's softmax through the C API: x [rows, cols] into out of the
// same shape and dtype, rows strided, columns contiguous; one program per row.
#include <cstdint>
#include <memory>
#include <type_traits>

#include "api_error.hpp"
#include "kiln/kernels/softmax.hpp"
#include "library_kernels.hpp"
#include "program_launch.hpp"

namespace kiln::capi {

namespace {

// The library's choice (kernels/src/softmax.cpp): rows up to 128 wide in one
// tile, wider ones in steps of 1024.
template <class C>
std::shared_ptr<const runtime::Program> softmax_program(std::int64_t cols) {
  namespace kl = kiln;
  if (cols <= 128) return kl::compile<kernels::softmax<kl::Scalar<C>, 128>>().program_ptr();
  return kl::compile<kernels::softmax<kl::Scalar<C>, 1024>>().program_ptr();
}

template <class C>
void launch_as(const Device& device, const TensorArgument& x, const TensorArgument& out) {
  const std::int64_t rows = x.shape()[0], cols = x.shape()[1];
  // A row stride matters only when there is a second row.
  const std::int64_t x_stride = rows > 1 ? x.strides()[0] : cols, out_stride = rows > 1 ? out.strides()[0] : cols;
  launch_program(*softmax_program<C>(cols), device, {static_cast<int>(rows), 1, 1},
                 {pointer_argument(x),
                  pointer_argument(out),
                  {i32_bits(cols), {}},
                  {i32_bits(x_stride), {}},
                  {i32_bits(out_stride), {}}});
}

}  // namespace

void launch_softmax(const Device& device, const std::vector<TensorArgument>& tensors) {
  const LibraryKernel& kernel = *find_library_kernel("softmax");
  const TensorArgument &x = tensors[0], &out = tensors[1];
  x.require_rank(2);
  require_one_of(x, kernel, {ir::DType::f32, ir::DType::f16, ir::DType::bf16, ir::DType::f64});
  out.require_rank(2);
  require_shape(out, x.shape(), "the shape of 'x'");
  out.require_dtype(x.dtype(), "the dtype of 'x'");
  for (const TensorArgument* tensor : {&x, &out}) {
    tensor->require_unit_stride(1);
    tensor->require_32bit_reach();
  }
  if (x.elements() == 0) return;
  switch (x.dtype()) {
    case ir::DType::f32: return launch_as<float>(device, x, out);
    case ir::DType::f16: return launch_as<half>(device, x, out);
    case ir::DType::bf16: return launch_as<bfloat16>(device, x, out);
    default: return launch_as<double>(device, x, out);
  }
}

}  // namespace kiln::capi
