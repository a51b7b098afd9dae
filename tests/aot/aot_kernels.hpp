// The kernels of the ahead-of-time tests (tests/aot/aot.cmake): a fused
// scale and bias, integer row sums (warp shuffles and shared memory on the
// GPU devices) and SiLU (exp through the emu's libm hooks).
#pragma once

#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BLOCK>
void scale_bias(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::f32 scale, kl::f32 bias, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) * scale + bias, mask);
}

template <int BLOCK>
void row_sums(kl::Ptr<kl::i32> x, kl::Ptr<kl::i32> sums, kl::i32 cols) {
  auto columns = kl::arange<BLOCK>();
  auto row = kl::program_id(0);
  kl::store(sums + row, kl::sum(kl::load(x + row * cols + columns, columns < cols), kl::axis<0>));
}

template <int BLOCK>
void silu(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::silu(kl::load(x + offsets, mask)), mask);
}
