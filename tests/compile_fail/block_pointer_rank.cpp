// expect: block_rank_check<2, 3>
// expect: one entry per block dimension
// A 2-D block pointer given three strides, as for a 3-D tensor.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BM, int BN>
void copy_block(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 n) {
  auto block = kl::make_block_ptr<BM, BN>(x, {m, n}, {n, 1, 1}, {0, 0});
  kl::store(kl::make_block_ptr<BM, BN>(out, {m, n}, {n, 1}, {0, 0}), kl::load(block));
}

void launch_copy_block(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<copy_block<8, 8>>().launch({1}, x, out, 8, 8);
}
