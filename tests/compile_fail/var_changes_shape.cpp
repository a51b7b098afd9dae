// expect: var_type_check<kiln::Scalar<float>, kiln::Tile<kiln::Scalar<float>, 64> >
// A running total carried across a runtime loop as a scalar kl::Var, updated
// with a whole [64] block instead of the block's sum.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void total(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  kl::Var acc = kl::full<kl::f32>(0.0);
  for (auto start : kl::range(0, n, BLOCK)) {
    auto offsets = start + kl::arange<BLOCK>();
    acc = acc + kl::load(x + offsets, offsets < n);
  }
  kl::store(out, acc);
}

void launch_total(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<total<64>>().launch({1}, x, out, static_cast<int>(x.size()));
}
