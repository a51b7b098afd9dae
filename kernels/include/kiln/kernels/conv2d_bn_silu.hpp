// The library's fused conv2d + batchnorm + SiLU as one call on the caller's
// buffers: the shape rule (conv2d_select.hpp) picks the variant and tiles for
// the parallelism of the device the buffers live on, and the fused kernel
// runs. Compiled into kiln::kernels for f32, f16 and bf16.
#pragma once

#include "kiln/kernels/conv2d_select.hpp"
#include "kiln/kernels/conv2d_shape.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

/// y = silu(scale[o] conv2d(x, w)[o] + shift[o]) for each output channel o:
/// x is [n, c, h, w], w is [k, c / groups, r, s], y is [n, k, p, q] (NCHW,
/// shape.p() by shape.q()), scale and shift hold k f32 values (an inference
/// batchnorm folded in). Returns the plan it ran with. Throws
/// std::invalid_argument naming the layer when the shape is invalid, a buffer
/// has the wrong number of elements, or the buffers are on different devices.
template <class T>
Conv2dPlan conv2d_bn_silu(const Conv2dShape& shape, const Buffer<T>& x, const Buffer<T>& w, const Buffer<float>& scale,
                          const Buffer<float>& shift, const Buffer<T>& y);

extern template Conv2dPlan conv2d_bn_silu<float>(const Conv2dShape&, const Buffer<float>&, const Buffer<float>&,
                                                 const Buffer<float>&, const Buffer<float>&, const Buffer<float>&);
extern template Conv2dPlan conv2d_bn_silu<half>(const Conv2dShape&, const Buffer<half>&, const Buffer<half>&,
                                                const Buffer<float>&, const Buffer<float>&, const Buffer<half>&);
extern template Conv2dPlan conv2d_bn_silu<bfloat16>(const Conv2dShape&, const Buffer<bfloat16>&,
                                                    const Buffer<bfloat16>&, const Buffer<float>&, const Buffer<float>&,
                                                    const Buffer<bfloat16>&);

}  // namespace kiln::kernels
