// expect: with kiln::ir::OpCode Op = kiln::ir::OpCode::exp; X = kiln::Tile<kiln::Scalar<int>, 128>
// expect: static assertion failed: kiln: this math function needs a float value
// Exponentials of an i32 tile: exp needs floats (cast first).
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void exp_counts(kl::Ptr<kl::i32> counts, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::exp(kl::load(counts + offsets, mask)), mask);
}

void launch_exp_counts(kl::Buffer<int>& counts, kl::Buffer<float>& out) {
  kl::compile<exp_counts<128>>().launch({1}, counts, out, 100);
}
