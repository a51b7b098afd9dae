// softmax over the rows of a matrix of any width: one program per row, an
// online pass computing the row's maximum and the sum of exponentials block
// by block, then a pass writing exp(x - max) / sum. Numerically stable; the
// tail of each row is masked. Blocks of -inf before the row's first finite
// element add nothing (a row of only -inf gives NaN, as its softmax is 0/0).
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

// [book:softmax]
template <class T, int BLOCK>
void softmax(kl::Ptr<T> in, kl::Ptr<T> out, kl::i32 n_cols, kl::i32 in_stride, kl::i32 out_stride) {
  auto row = kl::program_id(0);
  auto in_row = in + row * in_stride;
  auto out_row = out + row * out_stride;
  kl::Var row_max = kl::full<kl::f32>(-std::numeric_limits<double>::infinity());
  kl::Var row_sum = kl::full<kl::f32>(0.0);
  for (auto start : kl::range(0, n_cols, BLOCK)) {
    auto cols = start + kl::arange<BLOCK>();
    auto mask = cols < n_cols;
    auto x = kl::cast<kl::f32>(kl::load(in_row + cols, mask, {.other = -std::numeric_limits<double>::infinity()}));
    auto new_max = kl::maximum(row_max, kl::max(x, kl::axis<0>));
    // While every element so far is -inf, subtract 0 instead: -inf - -inf is NaN.
    auto shift = kl::where(new_max == -std::numeric_limits<double>::infinity(), 0.0f, new_max);
    row_sum = row_sum * kl::exp(row_max - shift) + kl::sum(kl::exp(x - shift), kl::axis<0>);
    row_max = new_max;
  }
  for (auto start : kl::range(0, n_cols, BLOCK)) {
    auto cols = start + kl::arange<BLOCK>();
    auto mask = cols < n_cols;
    auto x = kl::cast<kl::f32>(kl::load(in_row + cols, mask));
    kl::store(out_row + cols, kl::exp(x - row_max) / row_sum, mask);
  }
}
// [/book:softmax]

/// The reference: each row's softmax in double.
template <class C>
std::vector<C> softmax_reference(const std::vector<C>& x, int rows, int cols) {
  std::vector<C> out(x.size());
  for (int r = 0; r < rows; ++r) {
    const C* in = x.data() + static_cast<std::size_t>(r) * cols;
    double m = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(in[c]));
    double s = 0;
    for (int c = 0; c < cols; ++c) s += std::exp(static_cast<double>(in[c]) - m);
    for (int c = 0; c < cols; ++c)
      out[static_cast<std::size_t>(r) * cols + c] = static_cast<C>(std::exp(static_cast<double>(in[c]) - m) / s);
  }
  return out;
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::softmax, "in", "out", "n_cols", "in_stride", "out_stride");
