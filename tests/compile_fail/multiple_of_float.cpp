// expect: multiple_of needs integer or pointer values
// A hint on a float tile: divisibility is a fact about integers and addresses.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offsets = kl::arange<16>();
  kl::store(out + offsets, kl::multiple_of<4>(kl::load(x + offsets)));
}

void launch_scale(kl::Buffer<float>& x, kl::Buffer<float>& out) { kl::compile<scale>().launch({1}, x, out); }
