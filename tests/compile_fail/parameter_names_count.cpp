// expect: parameter_names_count_check<3, 2>
// KILN_PARAMETERS names three parameters of a kernel that has two.
#include "kiln/kiln.hpp"

namespace kl = kiln;

namespace app {
template <int BLOCK>
void scale(kl::Ptr<kl::f32> x, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(x + offsets, kl::load(x + offsets, mask) * 2.f, mask);
}
}  // namespace app
KILN_PARAMETERS(app::scale, "x", "out", "n");

void launch_scale(kl::Buffer<float>& x) { kl::compile<app::scale<128>>().launch({4}, x, 500); }
