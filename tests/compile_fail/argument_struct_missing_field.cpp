// expect: kiln: a field of the launch's arguments struct is missing
// A launch that forgets a field of the arguments struct: the count `n` would
// silently be 0 if the field had a default; it has none.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <class S = kl::traced>
struct ScaleArgs {
  kl::param<S, kl::Ptr<kl::f32>> x;
  kl::param<S, kl::i32> n;
};

template <int BLOCK>
void scale(ScaleArgs<> a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < a.n;
  kl::store(a.x + offsets, kl::load(a.x + offsets, mask) * 2.f, mask);
}

void launch_scale(kl::Buffer<float>& x) { kl::compile<scale<128>>().launch({4}, {.x = x}); }
