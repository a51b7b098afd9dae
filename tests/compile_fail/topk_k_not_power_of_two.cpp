// expect: topk_check<3, 64>
// expect: topk needs k to be a power of two
// The 3 largest of a row of 64 elements: k must be a power of two.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void largest(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  kl::store(out + kl::arange<4>(), kl::topk<3>(kl::load(x + kl::arange<64>())));
}

void launch_largest(kl::Buffer<float>& x, kl::Buffer<float>& out) { kl::compile<largest>().launch({1}, x, out); }
