// expect: error: [^"]*kiln::launch_error<[^"]*"a named launch argument is Buffer<f16>;
// expect: its field is Ptr<f32>, which takes a Buffer<f32>"
// A Buffer of the wrong element type given to a named pointer field: the
// message spells both types.
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

void launch_scale(kl::Buffer<kl::half>& x) { kl::compile<scale<128>>().launch({4}, {.x = x, .n = 500}); }
