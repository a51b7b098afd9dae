// expect: block_rank_check<2, 1>
// An advance that moves a 2-D block pointer along one axis only.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BM, int BK>
void sum_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 k) {
  kl::Var block = kl::make_block_ptr<BM, BK>(x, {m, k}, {k, 1}, {0, 0});
  kl::Var acc = kl::zeros<kl::f32, BM>();
  for ([[maybe_unused]] auto k0 : kl::range(0, k, BK)) {
    acc = acc + kl::sum(kl::load(block, {.boundary_check = {0, 1}}), kl::axis<1>);
    block = kl::advance(block, {BK});
  }
  kl::store(out + kl::arange<BM>(), acc);
}

void launch_sum_rows(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<sum_rows<8, 16>>().launch({1}, x, out, 8, 40);
}
