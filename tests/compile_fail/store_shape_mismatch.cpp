// expect: broadcast_to_check<kiln::shape<4, 8>, kiln::shape<4> >
// A row-wise kernel that forgets to reduce: it stores the whole [4, 8] tile
// through the [4] pointers of one output per row.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int ROWS, int COLS>
void row_scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::f32 scale) {
  auto rows = kl::program_id(0) * ROWS + kl::arange<ROWS>();
  auto cols = kl::arange<COLS>();
  auto tile = kl::load(x + kl::expand_dims<1>(rows) * COLS + kl::expand_dims<0>(cols));
  kl::store(out + rows, tile * scale);
}

void launch_row_scale(kl::Buffer<float>& x, kl::Buffer<float>& out) {
  kl::compile<row_scale<4, 8>>().launch({2}, x, out, 0.5f);
}
