// expect: launch_argument_check<0, kiln::Ptr<kiln::Scalar<kiln::half> >, kiln::Buffer<kiln::bfloat16> >
// An f16 kernel launched on a bf16 buffer: the error names both narrow float
// types by their own names (kiln::half, kiln::bfloat16), not by the
// parameters of the template that implements them.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void scale(kl::Ptr<kl::f16> x, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(x + offsets, kl::load(x + offsets, mask) * 2, mask);
}

void launch_scale(kl::Buffer<kl::bfloat16>& x) { kl::compile<scale<128>>().launch({4}, x, 500); }
