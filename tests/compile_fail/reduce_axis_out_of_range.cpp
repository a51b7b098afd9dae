// expect: axis_check<kiln::shape<4, 64>, 2>
// Row sums of a [ROWS, COLS] tile reduced along axis 2, which a 2-D tile does
// not have.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int ROWS, int COLS>
void row_sum(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto rows = kl::program_id(0) * ROWS + kl::arange<ROWS>();
  auto cols = kl::arange<COLS>();
  auto tile = kl::load(x + kl::expand_dims<1>(rows) * COLS + kl::expand_dims<0>(cols));
  kl::store(out + rows, kl::sum(tile, kl::axis<2>));
}

void launch_row_sum(kl::Buffer<float>& x, kl::Buffer<float>& out) { kl::compile<row_sum<4, 64>>().launch({3}, x, out); }
