// The registry entry of each sample kernel (one source file each).
#pragma once

#include "kiln/kernels/registry.hpp"

namespace kiln::kernels {

KernelInfo vector_add_entry();
KernelInfo softmax_entry();

}  // namespace kiln::kernels
