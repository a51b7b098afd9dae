// expect: block_store_shape_check<kiln::shape<8, 16>, kiln::shape<16, 8> >
// expect: must have the block's shape
// A transposed tile stored through a block pointer of the untransposed shape.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BM, int BN>
void transpose_block(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 n) {
  auto tile = kl::load(kl::make_block_ptr<BM, BN>(x, {m, n}, {n, 1}, {0, 0}), {.boundary_check = {0, 1}});
  kl::store(kl::make_block_ptr<BM, BN>(out, {m, n}, {n, 1}, {0, 0}), kl::trans(tile), {.boundary_check = {0, 1}});
}

void launch_transpose_block(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<transpose_block<8, 16>>().launch({1}, x, out, 8, 16);
}
