// expect: error: [^"]*kiln::launch_error<[^"]*"the kernel has 4 parameters but the launch passes 3 arguments"
// vector_add launched without its element count.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void vector_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) + kl::load(y + offsets, mask), mask);
}

void launch_vector_add(kl::Buffer<float>& x, kl::Buffer<float>& y, kl::Buffer<float>& out) {
  kl::compile<vector_add<256>>().launch({4}, x, y, out);
}
