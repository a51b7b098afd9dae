// expect: dot_check<kiln::shape<16, 8>, kiln::shape<32, 8> >
// One tile of a matmul where b is loaded as [BN, BK] (b^T's layout) instead
// of [BK, BN]: the inner dimensions of a [16, 8] and a [32, 8] tile differ.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BM, int BN, int BK>
void matmul_tile(kl::Ptr<kl::f32> a, kl::Ptr<kl::f32> b, kl::Ptr<kl::f32> c, kl::i32 k) {
  auto rm = kl::arange<BM>();
  auto rn = kl::arange<BN>();
  auto rk = kl::arange<BK>();
  auto a_tile = kl::load(a + kl::expand_dims<1>(rm) * k + kl::expand_dims<0>(rk));
  auto b_tile = kl::load(b + kl::expand_dims<1>(rn) * k + kl::expand_dims<0>(rk));
  auto acc = kl::dot(a_tile, b_tile);
  kl::store(c + kl::expand_dims<1>(rm) * BN + kl::expand_dims<0>(rn), acc);
}

void launch_matmul_tile(kl::Buffer<float>& a, kl::Buffer<float>& b, kl::Buffer<float>& c) {
  kl::compile<matmul_tile<16, 32, 8>>().launch({1}, a, b, c, 8);
}
