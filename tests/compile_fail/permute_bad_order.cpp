// expect: permute_check<kiln::shape<2, 4, 8>, 1, 0>
// Swapping the last two axes of a [B, M, N] tile with the 2-D order <1, 0>:
// a 3-D tile needs all three axes, e.g. permute<0, 2, 1>.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int B, int M, int N>
void batched_transpose(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto b = kl::expand_dims<1>(kl::expand_dims<1>(kl::arange<B>()));
  auto m = kl::expand_dims<0>(kl::expand_dims<1>(kl::arange<M>()));
  auto n = kl::expand_dims<0>(kl::expand_dims<0>(kl::arange<N>()));
  auto tile = kl::load(x + b * (M * N) + m * N + n);
  auto out_offsets = b * (M * N) + kl::expand_dims<0>(kl::expand_dims<1>(kl::arange<N>())) * M +
                     kl::expand_dims<0>(kl::expand_dims<0>(kl::arange<M>()));
  kl::store(out + out_offsets, kl::permute<1, 0>(tile));
}

void launch_batched_transpose(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<batched_transpose<2, 4, 8>>().launch({1}, x, out);
}
