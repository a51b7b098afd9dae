// The library's matmul through the C API: c [m, n] = a [m, k] @ b [k, n] with
// an f32 accumulator and no epilogue, any non-negative strides; in the
// registry's configuration for the device's architecture (kMatmulSm80 or
// kMatmulSm90a, target_arch.hpp).
#include <cstdint>
#include <memory>

#include "api_error.hpp"
#include "kiln/kernels/matmul.hpp"
#include "kiln/kernels/target_arch.hpp"
#include "library_kernels.hpp"
#include "program_launch.hpp"

namespace kiln::capi {

namespace {

template <class C, kernels::MatmulConfig G>
std::shared_ptr<const runtime::Program> matmul_program() {
  namespace kl = kiln;
  return kl::compile<kernels::matmul<kl::Scalar<C>, kl::Scalar<C>, G.block_m, G.block_n, G.block_k, G.group_m,
                                     kernels::Epilogue{}>>(G.compile_options())
      .program_ptr();
}

/// The stride of dimension `dim`, 0 where the dimension has one element (its
/// stride is then never used, and may be any value).
std::uint64_t stride_bits(const TensorArgument& tensor, int dim) {
  return i32_bits(tensor.shape()[dim] > 1 ? tensor.strides()[dim] : 0);
}

template <class C, kernels::MatmulConfig G>
void launch_in(const Device& device, const TensorArgument& a, const TensorArgument& b, const TensorArgument& c) {
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  const std::int64_t programs = ((m + G.block_m - 1) / G.block_m) * ((n + G.block_n - 1) / G.block_n);
  require(programs <= INT32_MAX, "matmul of " + a.shape_string() + " by " + b.shape_string() + " needs " +
                                     std::to_string(programs) + " programs, more than a grid holds");
  const runtime::KernelArgument none{};  // p, seed and offset: the epilogue has no dropout
  launch_program(*matmul_program<C, G>(), device, {static_cast<int>(programs), 1, 1},
                 {pointer_argument(a),
                  pointer_argument(b),
                  pointer_argument(c),
                  pointer_argument(a),  // the bias: unused without one in the epilogue
                  {i32_bits(m), {}},
                  {i32_bits(n), {}},
                  {i32_bits(k), {}},
                  {stride_bits(a, 0), {}},
                  {stride_bits(a, 1), {}},
                  {stride_bits(b, 0), {}},
                  {stride_bits(b, 1), {}},
                  {stride_bits(c, 0), {}},
                  {stride_bits(c, 1), {}},
                  none,
                  none,
                  none});
}

template <class C>
void launch_as(const Device& device, const TensorArgument& a, const TensorArgument& b, const TensorArgument& c) {
  kernels::with_matmul_config(kernels::target_arch(device),
                              [&](auto config) { launch_in<C, decltype(config)::value>(device, a, b, c); });
}

}  // namespace

void launch_matmul(const Device& device, const std::vector<TensorArgument>& tensors) {
  const LibraryKernel& kernel = *find_library_kernel("matmul");
  const TensorArgument &a = tensors[0], &b = tensors[1], &c = tensors[2];
  for (const TensorArgument* tensor : {&a, &b, &c}) tensor->require_rank(2);
  require_one_of(a, kernel, {ir::DType::f32, ir::DType::f16, ir::DType::bf16});
  require(b.shape()[0] == a.shape()[1], b.label() + " has shape " + b.shape_string() + ", a has " + a.shape_string() +
                                            ": b needs as many rows (" + std::to_string(b.shape()[0]) +
                                            ") as a has columns (" + std::to_string(a.shape()[1]) + ")");
  b.require_dtype(a.dtype(), "the dtype of 'a'");
  require_shape(c, {a.shape()[0], b.shape()[1]}, "rows of 'a', columns of 'b'");
  c.require_dtype(a.dtype(), "the dtype of 'a'");
  for (const TensorArgument* tensor : {&a, &b, &c}) tensor->require_32bit_reach();
  if (c.elements() == 0) return;
  switch (a.dtype()) {
    case ir::DType::f32: return launch_as<float>(device, a, b, c);
    case ir::DType::f16: return launch_as<half>(device, a, b, c);
    default: return launch_as<bfloat16>(device, a, b, c);
  }
}

}  // namespace kiln::capi
