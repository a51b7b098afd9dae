// expect: with long int N = 12
// expect: multiple_of<N> needs N to be a positive power of two
// Rows 12 elements apart: the code generator's facts are powers of two, so a
// hint of 12 must be written as the power of two it implies (4).
#include "kiln/kiln.hpp"

namespace kl = kiln;

void copy_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 stride) {
  auto offsets = kl::program_id(0) * kl::multiple_of<12>(stride) + kl::arange<16>();
  kl::store(out + offsets, kl::load(x + offsets));
}

void launch_copy_rows(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<copy_rows>().launch({4}, x, out, 12);
}
