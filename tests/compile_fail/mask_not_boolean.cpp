// expect: static assertion failed: kiln: a mask must be an i1 value
// A masked load given the offsets themselves as the mask instead of the
// comparison offsets < n.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void masked_copy(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, offsets), mask);
}

void launch_masked_copy(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<masked_copy<128>>().launch({1}, x, out, 100);
}
