// expect: error: [^"]*kiln::launch_error<[^"]*"launch argument 2 is Buffer<f32>; parameter 2 is Ptr<i32>,
// expect: parameter 2 is Ptr<i32>, which takes a Buffer<i32>"
// A gather launched with indices kept in a float buffer on the host: the
// kernel's index parameter is a Ptr<i32>.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void gather(kl::Ptr<kl::f32> values, kl::Ptr<kl::i32> indices, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto index = kl::load(indices + offsets, mask);
  kl::store(out + offsets, kl::load(values + index, mask), mask);
}

void launch_gather(kl::Buffer<float>& values, kl::Buffer<float>& indices, kl::Buffer<float>& out) {
  kl::compile<gather<128>>().launch({4}, values, indices, out, 500);
}
