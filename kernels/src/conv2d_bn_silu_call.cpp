// conv2d_bn_silu on the caller's buffers (kiln/kernels/conv2d_bn_silu.hpp):
// size and device checks, the plan for the buffers' device, one launch.
#include "kiln/kernels/conv2d_bn_silu.hpp"

#include <stdexcept>
#include <string>

#include "kiln/kernels/conv2d_launch.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {

template <class B>
void check_size(const Conv2dShape& shape, const char* name, const B& buffer, std::int64_t elements) {
  if (static_cast<std::int64_t>(buffer.size()) != elements)
    throw std::invalid_argument("conv2d_bn_silu " + shape.to_string() + ": " + name + " has " +
                                std::to_string(buffer.size()) + " elements, the layer needs " +
                                std::to_string(elements));
}

template <class B>
void check_device(const Conv2dShape& shape, const char* name, const B& buffer, const Device& device) {
  if (buffer.device() != device)
    throw std::invalid_argument("conv2d_bn_silu " + shape.to_string() + ": " + name + " is on " +
                                buffer.device().name() + ", x on " + device.name());
}

}  // namespace

template <class T>
Conv2dPlan conv2d_bn_silu(const Conv2dShape& shape, const Buffer<T>& x, const Buffer<T>& w, const Buffer<float>& scale,
                          const Buffer<float>& shift, const Buffer<T>& y) {
  validate(shape);
  check_size(shape, "x", x, shape.input_size());
  check_size(shape, "w", w, shape.weight_size());
  check_size(shape, "scale", scale, shape.k);
  check_size(shape, "shift", shift, shape.k);
  check_size(shape, "y", y, shape.output_size());
  const Device& device = x.device();
  check_device(shape, "w", w, device);
  check_device(shape, "scale", scale, device);
  check_device(shape, "shift", shift, device);
  check_device(shape, "y", y, device);
  const Conv2dPlan plan = plan_conv2d(shape, compute_units(device));
  launch_conv2d<T>(plan, shape, x, w, scale, shift, y);
  return plan;
}

template Conv2dPlan conv2d_bn_silu<float>(const Conv2dShape&, const Buffer<float>&, const Buffer<float>&,
                                          const Buffer<float>&, const Buffer<float>&, const Buffer<float>&);
template Conv2dPlan conv2d_bn_silu<half>(const Conv2dShape&, const Buffer<half>&, const Buffer<half>&,
                                         const Buffer<float>&, const Buffer<float>&, const Buffer<half>&);
template Conv2dPlan conv2d_bn_silu<bfloat16>(const Conv2dShape&, const Buffer<bfloat16>&, const Buffer<bfloat16>&,
                                             const Buffer<float>&, const Buffer<float>&, const Buffer<bfloat16>&);

}  // namespace kiln::kernels
