// expect: topk_check<128, 64>
// expect: topk needs k <= the last dimension
// The 128 largest of a row of 64 elements.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void largest(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  kl::store(out + kl::arange<128>(), kl::topk<128>(kl::load(x + kl::arange<64>())));
}

void launch_largest(kl::Buffer<float>& x, kl::Buffer<float>& out) { kl::compile<largest>().launch({1}, x, out); }
