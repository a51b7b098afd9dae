// expect: autotune_parameters_check<1, std::tuple<kiln::Ptr<kiln::Scalar<float> >, kiln::Ptr<kiln::Scalar<float> >,
// kiln::Scalar<int> >, std::tuple<kiln::Ptr<kiln::Scalar<float> >, kiln::Ptr<kiln::Scalar<float> >, kiln::Scalar<long
// int> > > expect: static assertion failed: kiln: autotune configuration Index has other kernel parameters than
// configuration 0 Two configurations of one kernel family whose size parameter differs (i32 in one, i64 in the other):
// one launch cannot fit both.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK, class Size>
void twice(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, Size n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  kl::store(out + offsets, kl::load(x + offsets, offsets < n) * 2.0f, offsets < n);
}

void tune_twice() { kl::autotune(kl::config<twice<64, kl::i32>>(), kl::config<twice<128, kl::i64>>()); }
