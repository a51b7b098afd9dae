// expect: with long int N = 32
// expect: max_contiguous<N> needs N no larger than the last dimension
// Runs of 32 in rows of 16 elements: a run never crosses into the next row.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void gather(kl::Ptr<kl::f32> x, kl::Ptr<kl::i32> at, kl::Ptr<kl::f32> out) {
  auto i = kl::expand_dims<1>(kl::arange<2>()) * 16 + kl::expand_dims<0>(kl::arange<16>());
  kl::store(out + i, kl::load(x + kl::max_contiguous<32>(kl::load(at + i))));
}

void launch_gather(kl::Buffer<float>& x, kl::Buffer<std::int32_t>& at, kl::Buffer<float>& out) {
  kl::compile<gather>().launch({1}, x, at, out);
}
