// expect: sort_check<kiln::shape<64>, bool>
// expect: sort and topk take integers \(not i1\)
// Sorting a mask: sort takes numbers, not i1.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void sorted_mask(kl::Ptr<kl::f32> x, kl::Ptr<kl::i1> out) {
  auto positive = kl::load(x + kl::arange<64>()) > 0.f;
  kl::store(out + kl::arange<64>(), kl::sort(positive));
}

void launch_sorted_mask(kl::Buffer<float>& x, kl::Buffer<bool>& out) { kl::compile<sorted_mask>().launch({1}, x, out); }
