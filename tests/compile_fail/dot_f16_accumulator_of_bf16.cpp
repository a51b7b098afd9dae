// expect: static assertion failed: kiln: dot accumulator must be \[M, N\] of the accumulator dtype
// An f16 accumulator for bf16 operands: only f16 operands may accumulate
// into f16; bf16 ones accumulate into f32.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void bf16_into_f16(kl::Ptr<kl::bf16> a, kl::Ptr<kl::f16> out) {
  auto i = kl::expand_dims<1>(kl::arange<16>());
  auto j = kl::expand_dims<0>(kl::arange<16>());
  auto tile = kl::load(a + i * 16 + j);
  kl::store(out + i * 16 + j, kl::dot(tile, tile, kl::zeros<kl::f16, 16, 16>()));
}

void launch(kl::Buffer<kl::bfloat16>& a, kl::Buffer<kl::half>& out) {
  kl::compile<bf16_into_f16>().launch({1}, a, out);
}
