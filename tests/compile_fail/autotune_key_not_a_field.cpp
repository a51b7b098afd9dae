// expect: autotune_field_check<
// expect: static assertion failed: kiln: autotune names a member that is not a field of the kernel's arguments struct
// An autotune key that names a field of another struct than the kernel's
// arguments struct.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <class S = kl::traced>
struct TwiceArgs {
  kl::param<S, kl::Ptr<kl::f32>> x;
  kl::param<S, kl::i32> n;
};

struct Sizes {
  int n;
};

template <int BLOCK>
void twice(TwiceArgs<> a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  kl::store(a.x + offsets, kl::load(a.x + offsets, offsets < a.n) * 2.0f, offsets < a.n);
}

void tune_twice() { kl::autotune(kl::config<twice<64>>(), kl::config<twice<128>>()).key<&Sizes::n>(); }
