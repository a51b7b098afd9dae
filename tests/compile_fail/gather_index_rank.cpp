// expect: gather_check<kiln::shape<8, 16>, kiln::shape<16>, 1>
// expect: gather needs an index of the source's rank
// Gathering from a [8, 16] tile with a 1-D index: the index must be 2-D too.
#include "kiln/kiln.hpp"

namespace kl = kiln;

void pick_columns(kl::Ptr<kl::f32> x, kl::Ptr<kl::i32> columns, kl::Ptr<kl::f32> out) {
  auto src = kl::load(x + kl::expand_dims<1>(kl::arange<8>()) * 16 + kl::expand_dims<0>(kl::arange<16>()));
  auto index = kl::load(columns + kl::arange<16>());
  kl::store(out + kl::arange<16>(), kl::gather(src, index, kl::axis<1>));
}

void launch_pick_columns(kl::Buffer<float>& x, kl::Buffer<int>& columns, kl::Buffer<float>& out) {
  kl::compile<pick_columns>().launch({1}, x, columns, out);
}
