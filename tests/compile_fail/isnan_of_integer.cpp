// expect: static assertion failed: kiln: isnan and isinf need a float value
// A NaN test of an i32 tile: integers are never NaN, and isnan says so at compile time.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void find_nans(kl::Ptr<kl::i32> counts, kl::Ptr<kl::i1> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::isnan(kl::load(counts + offsets, mask)), mask);
}

void launch_find_nans(kl::Buffer<int>& counts, kl::Buffer<bool>& out) {
  kl::compile<find_nans<128>>().launch({1}, counts, out, 100);
}
