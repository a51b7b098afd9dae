// expect: static assertion failed: kiln: pointer offsets must be integers
// A strided load whose offsets were scaled by a float stride, so they are
// f32 and cannot offset a pointer.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void strided_copy(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::f32 stride, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto scaled = offsets * stride;
  kl::store(out + offsets, kl::load(x + scaled, mask), mask);
}

void launch_strided_copy(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<strided_copy<128>>().launch({2}, x, out, 2.0f, 256);
}
