// expect: reshape_check<kiln::shape<128>, kiln::shape<8, 8> >
// Viewing a block of 128 elements as an 8 x 8 matrix: the element count changes.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void column_sums(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto matrix = kl::reshape<8, 8>(kl::load(x + offsets));
  kl::store(out + kl::program_id(0) * 8 + kl::arange<8>(), kl::sum(matrix, kl::axis<0>));
}

void launch_column_sums(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<column_sums<128>>().launch({2}, x, out);
}
