// expect: error: [^"]*kiln::launch_error<[^"]*"launch argument 2 is double; parameter 2 is i32,
// expect: parameter 2 is i32, which takes a C\+\+ integer"
// A row count computed in floating point and passed to an i32 parameter: the
// message says what the parameter takes.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void scale(kl::Ptr<kl::f32> x, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(x + offsets, kl::load(x + offsets, mask) * 2.f, mask);
}

void launch_scale(kl::Buffer<float>& x) { kl::compile<scale<128>>().launch({4}, x, 500.0); }
