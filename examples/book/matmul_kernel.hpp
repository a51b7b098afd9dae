// Chapter 9's kernel, C = A @ B with f16 inputs and f32 sums, one program
// per BLOCK_M x BLOCK_N block of C: the matmul program of that chapter and
// the examples of chapters 16, 19 and 24 launch it; the last two check its
// result with matmul_errors.
#pragma once

#include <cmath>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:kernel]
template <int BLOCK_M, int BLOCK_N, int BLOCK_K>
void matmul(kl::Ptr<kl::f16> a, kl::Ptr<kl::f16> b, kl::Ptr<kl::f32> c, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>());  // BLOCK_M x 1
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK_N + kl::arange<BLOCK_N>());  // 1 x BLOCK_N
  kl::Var acc = kl::zeros<kl::f32, BLOCK_M, BLOCK_N>();  // this program's block of C, summed in f32
  // [/book:kernel]
  // [book:loop]
  for (auto k0 : kl::range(0, k, BLOCK_K)) {
    auto k_across = kl::expand_dims<0>(k0 + kl::arange<BLOCK_K>());  // 1 x BLOCK_K: columns of A
    auto k_down = kl::expand_dims<1>(k0 + kl::arange<BLOCK_K>());    // BLOCK_K x 1: rows of B
    // Masked-off elements load as 0, so past the end of K they add nothing to the dot.
    auto a_tile = kl::load(a + rows * k + k_across, (rows < m) & (k_across < k));  // BLOCK_M x BLOCK_K
    auto b_tile = kl::load(b + k_down * n + cols, (k_down < k) & (cols < n));      // BLOCK_K x BLOCK_N
    acc = kl::dot(a_tile, b_tile, acc);  // acc + a_tile @ b_tile: f16 products, f32 sums
  }
  // [/book:loop]
  // [book:store]
  kl::store(c + rows * n + cols, acc, (rows < m) & (cols < n));
}
// [/book:store]

/// How many elements of `got` (m x n, row-major) miss A @ B, computed in
/// double from f16 A (m x k) and B (k x n), by more than chapter 9's bound:
/// 2 u k sum|a b| with u the unit roundoff of f32.
inline int matmul_errors(const std::vector<kl::half>& a, const std::vector<kl::half>& b, const std::vector<float>& got,
                         int m, int n, int k, double u) {
  int errors = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0, magnitude = 0;
      for (int t = 0; t < k; ++t) {
        const double term = double{float(a[i * k + t])} * double{float(b[t * n + j])};
        want += term, magnitude += std::abs(term);
      }
      errors += !(std::abs(got[i * n + j] - want) <= 2 * u * k * magnitude);
    }
  return errors;
}
