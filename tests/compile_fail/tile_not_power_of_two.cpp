// expect: tile_dims_check<kiln::shape<96> >
// expect: static assertion failed: kiln: tile dimensions must be powers of two; pad the tile to std::bit_ceil
// A row of head_dim 96 held in a tile of 96 elements: tiles are padded to a
// power of two (128) and masked instead.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int HEAD_DIM>
void scale_rows(kl::Ptr<kl::f32> x, kl::f32 scale) {
  auto offsets = kl::program_id(0) * HEAD_DIM + kl::arange<HEAD_DIM>();
  kl::store(x + offsets, kl::load(x + offsets) * scale);
}

void launch_scale_rows(kl::Buffer<float>& x) { kl::compile<scale_rows<96>>().launch({4}, x, 0.5f); }
