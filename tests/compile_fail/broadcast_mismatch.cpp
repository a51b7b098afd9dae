// expect: broadcast_check<kiln::shape<4, 8>, kiln::shape<4> >
// Bias add over a [BM, BN] tile whose per-column bias is loaded with the row
// block size: a [4, 8] tile plus a [4] tile does not broadcast.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BM, int BN>
void bias_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> bias, kl::Ptr<kl::f32> out, kl::i32 stride) {
  auto rows = kl::program_id(0) * BM + kl::arange<BM>();
  auto cols = kl::arange<BN>();
  auto offsets = kl::expand_dims<1>(rows) * stride + kl::expand_dims<0>(cols);
  auto b = kl::load(bias + kl::arange<BM>());
  kl::store(out + offsets, kl::load(x + offsets) + b);
}

void launch_bias_add(kl::Buffer<float>& x, kl::Buffer<float>& bias, kl::Buffer<float>& out) {
  kl::compile<bias_add<4, 8>>().launch({2}, x, bias, out, 8);
}
