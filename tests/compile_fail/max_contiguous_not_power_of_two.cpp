// expect: with long int N = 6
// expect: max_contiguous<N> needs N to be a positive power of two
// Offsets in runs of 6: the code generator's vectors hold a power of two of
// elements, so the hint must be the power of two the runs contain (2).
#include "kiln/kiln.hpp"

namespace kl = kiln;

void gather(kl::Ptr<kl::f32> x, kl::Ptr<kl::i32> at, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<16>();
  kl::store(out + i, kl::load(x + kl::max_contiguous<6>(kl::load(at + i))));
}

void launch_gather(kl::Buffer<float>& x, kl::Buffer<std::int32_t>& at, kl::Buffer<float>& out) {
  kl::compile<gather>().launch({1}, x, at, out);
}
