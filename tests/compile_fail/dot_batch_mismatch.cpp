// expect: dot_check<kiln::shape<4, 16, 32>, kiln::shape<2, 32, 16> >
// expect: dot's 3-D tiles differ in their batch
// A batch of four [16, 32] tiles times a batch of two [32, 16] ones: a dot of
// 3-D tiles multiplies slice i by slice i, so both batches must have one size.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void batched_products(kl::Ptr<kl::f16> a, kl::Ptr<kl::f16> b, kl::Ptr<kl::f32> out) {
  auto a_tile = kl::load(a + kl::reshape<4, 16, 32>(kl::arange<2048>()));
  auto b_tile = kl::load(b + kl::reshape<2, 32, 16>(kl::arange<1024>()));
  auto products = kl::dot(a_tile, b_tile);
  kl::store(out + kl::reshape<4, 16, 16>(kl::arange<1024>()), products);
}

void launch_batched_products(kl::Buffer<kl::half>& a, kl::Buffer<kl::half>& b, kl::Buffer<float>& out) {
  kl::compile<batched_products>().launch({1}, a, b, out);
}
