// expect: error: [^"]*kiln::launch_error<[^"]*"launch argument 1 is Buffer<bf16>; parameter 1 is Ptr<f16>,
// expect: parameter 1 is Ptr<f16>, which takes a Buffer<f16>"
// An f16 kernel launched on a bf16 buffer: the first error line names the
// parameter (1-based) and both types by their dtype names, f16 and bf16.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void scale(kl::Ptr<kl::f16> x, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(x + offsets, kl::load(x + offsets, mask) * 2, mask);
}

void launch_scale(kl::Buffer<kl::bfloat16>& x) { kl::compile<scale<128>>().launch({4}, x, 500); }
