// How each sample kernel runs (one source file each); registry.cpp pairs
// each with its spec (kernel_catalog.cpp).
#pragma once

#include "kiln/kernels/registry.hpp"

namespace kiln::kernels {

RunReport run_vector_add(const RunOptions& options);
RunReport run_softmax(const RunOptions& options);
RunReport run_attention(const RunOptions& options);
RunReport run_matmul(const RunOptions& options);
RunReport run_matmul_unfused(const RunOptions& options);
RunReport run_dropout(const RunOptions& options);
RunReport run_conv2d_bn_silu(const RunOptions& options);
RunReport run_conv2d_bn_silu_unfused(const RunOptions& options);
RunReport run_layer_norm(const RunOptions& options);
RunReport run_layer_norm_backward(const RunOptions& options);
RunReport run_rms_norm(const RunOptions& options);

}  // namespace kiln::kernels
