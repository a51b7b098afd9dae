// expect: static assertion failed: kiln: bitwise operators and shifts need integer operands
// Clearing the low mantissa bits of floats with & on the float values
// themselves (bitcast to i32 first).
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void truncate_mantissa(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto v = kl::load(x + offsets, mask);
  kl::store(out + offsets, v & 0xFFFF0000, mask);
}

void launch_truncate_mantissa(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<truncate_mantissa<128>>().launch({1}, x, out, 128);
}
