// expect: same_shape_check<kiln::shape<4, 8>, kiln::shape<4, 16> >
// expect: cat and interleave need two tiles of the same shape
// Concatenating a [4, 8] tile with a [4, 16] one: cat needs equal shapes (a
// sum of two different powers of two is no power of two).
#include "kiln/kiln.hpp"

namespace kl = kiln;

void stack_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto rows = kl::expand_dims<1>(kl::arange<4>());
  auto narrow = kl::load(x + rows * 8 + kl::expand_dims<0>(kl::arange<8>()));
  auto wide = kl::load(x + rows * 16 + kl::expand_dims<0>(kl::arange<16>()));
  auto both = kl::cat(narrow, wide);
  kl::store(out + kl::expand_dims<1>(kl::arange<8>()) * 8 + kl::expand_dims<0>(kl::arange<8>()), both);
}

void launch_stack_rows(kl::Buffer<float>& x, kl::Buffer<float>& out) { kl::compile<stack_rows>().launch({1}, x, out); }
