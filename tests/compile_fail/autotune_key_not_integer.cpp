// expect: autotune_key_check<0, 3, kiln::Ptr<kiln::Scalar<float> > >
// expect: static assertion failed: kiln: autotune key argument Index is not an integer kernel parameter
// An autotune key that names the input pointer (argument 0) instead of the
// size (argument 2).
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void twice(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  kl::store(out + offsets, kl::load(x + offsets, offsets < n) * 2.0f, offsets < n);
}

void tune_twice() { kl::autotune(kl::config<twice<64>>(), kl::config<twice<128>>()).key<0>(); }
