// expect: max_contiguous needs an integer tile
// A run of consecutive integers is a fact about offsets; floats have none.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void gather(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<16>();
  kl::store(out + i, kl::max_contiguous<4>(kl::load(x + i)));
}

void launch_gather(kl::Buffer<float>& x, kl::Buffer<float>& out) { kl::compile<gather>().launch({1}, x, out); }
