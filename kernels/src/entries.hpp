// The registry entry of each sample kernel (one source file each).
#pragma once

#include "kiln/kernels/registry.hpp"

namespace kiln::kernels {

KernelInfo vector_add_entry();
KernelInfo softmax_entry();
KernelInfo attention_entry();
KernelInfo matmul_entry();
KernelInfo matmul_unfused_entry();
KernelInfo dropout_entry();
KernelInfo conv2d_bn_silu_entry();
KernelInfo conv2d_bn_silu_unfused_entry();
KernelInfo layer_norm_entry();
KernelInfo layer_norm_backward_entry();
KernelInfo rms_norm_entry();

}  // namespace kiln::kernels
