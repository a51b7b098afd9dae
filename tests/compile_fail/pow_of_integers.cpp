// expect: static assertion failed: kiln: this math function needs float values
// Powers of i32 tiles: pow needs floats (cast first), as every math function does.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void square_counts(kl::Ptr<kl::i32> counts, kl::Ptr<kl::i32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto c = kl::load(counts + offsets, mask);
  kl::store(out + offsets, kl::pow(c, c), mask);
}

void launch_square_counts(kl::Buffer<int>& counts, kl::Buffer<int>& out) {
  kl::compile<square_counts<128>>().launch({1}, counts, out, 100);
}
