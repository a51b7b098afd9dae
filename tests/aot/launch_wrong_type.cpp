// expect: launch_argument_check<1, kiln::aot::Pointer<float>, kiln::Buffer<int> >
// The generated launcher of an ahead-of-time kernel checks its arguments at
// compile time as Kernel::launch does: scale_bias's `out` is a Ptr<f32>.
#include "aot_app_kernels.hpp"

void launch_with_int_output(kiln::Buffer<float>& x, kiln::Buffer<int>& out) {
  kiln_kernels::scale_bias::launch({4}, x, out, 2.0f, 1.0f, 1024);
}
