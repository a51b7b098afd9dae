// expect: flip_check<kiln::shape<4, 32>, 2>
// expect: flip axis out of range
// Reversing a [ROWS, COLS] tile along axis 2, which a 2-D tile does not have.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int ROWS, int COLS>
void reverse_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offsets = kl::expand_dims<1>(kl::arange<ROWS>()) * COLS + kl::expand_dims<0>(kl::arange<COLS>());
  kl::store(out + offsets, kl::flip(kl::load(x + offsets), kl::axis<2>));
}

void launch_reverse_rows(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<reverse_rows<4, 32>>().launch({1}, x, out);
}
