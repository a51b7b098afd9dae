// vector_add: out = x + y, one BLOCK-element tile per program, masked tail.
#pragma once

#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

template <class T, int BLOCK>
void vector_add(kl::Ptr<T> x, kl::Ptr<T> y, kl::Ptr<T> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) + kl::load(y + offsets, mask), mask);
}

/// The reference: elementwise sum computed in double, rounded to T.
template <class C>
std::vector<C> vector_add_reference(const std::vector<C>& x, const std::vector<C>& y) {
  std::vector<C> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    out[i] = static_cast<C>(static_cast<double>(x[i]) + static_cast<double>(y[i]));
  return out;
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::vector_add, "x", "y", "out", "n");
