// The kernels file of the ahead-of-time tests: which specialisations of
// aot_kernels.hpp kiln_add_kernels compiles, under which names and facts.
#include "aot_kernels.hpp"

#include "kiln/aot/kernel_list.hpp"

void kiln_aot_kernels(kiln::aot::KernelList& kernels) {
  using kiln::aot::aligned_16, kiln::aot::anything, kiln::aot::multiple_of_16;
  kernels.add<scale_bias<256>>("scale_bias", {.facts = {aligned_16, aligned_16, anything, anything, multiple_of_16}});
  kernels.add<row_sums<512>>("row_sums", {.num_warps = 2});
  kernels.add<silu<128>>("silu");
}
