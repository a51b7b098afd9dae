// Chapter 9, "Matrix multiplication": C = A @ B for f16 A and B with an f32
// accumulator, one program per BLOCK_M x BLOCK_N block of C and a runtime
// loop over K in steps of BLOCK_K, on a shape that is a multiple of no
// block size; checked element by element against a double-precision
// reference with a bound derived from f32's unit roundoff and K.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"
#include "matmul_kernel.hpp"

namespace kl = kiln;

// [book:reference]
/// A @ B in double, and |A| @ |B|, which scales the error bound of each element.
struct Reference {
  std::vector<double> product, magnitude;
};
Reference reference(const std::vector<kl::half>& a, const std::vector<kl::half>& b, int m, int n, int k) {
  Reference r{std::vector<double>(m * n), std::vector<double>(m * n)};
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int t = 0; t < k; ++t) {
        const double term = double{float(a[i * k + t])} * double{float(b[t * n + j])};
        r.product[i * n + j] += term;
        r.magnitude[i * n + j] += std::abs(term);
      }
  return r;
}
// [/book:reference]

int main() {
  // [book:inputs]
  constexpr int kM = 200, kN = 150, kK = 300;  // a multiple of none of the block sizes
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<kl::half> a(kM * kK), b(kK * kN);  // row-major M x K and K x N
  for (auto& e : a) e = kl::half(uniform(random));
  for (auto& e : b) e = kl::half(uniform(random));
  // [/book:inputs]

  // [book:launch]
  constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32;
  auto a_buffer = kl::Buffer<kl::half>::from(a);
  auto b_buffer = kl::Buffer<kl::half>::from(b);
  kl::Buffer<float> c_buffer(kM * kN);
  const kl::Grid grid(kl::cdiv(kM, kBlockM), kl::cdiv(kN, kBlockN));  // 4 x 3 programs, one per block of C
  kl::compile<matmul<kBlockM, kBlockN, kBlockK>>().launch(grid, a_buffer, b_buffer, c_buffer, kM, kN, kK);
  const std::vector<float> c = c_buffer.to_host();
  // [/book:launch]

  // [book:tolerance]
  const double u = std::numeric_limits<float>::epsilon() / 2;  // the accumulator's unit roundoff, 2^-24
  const double per_addition = 2 * u;  // u rounding to nearest; 2u allows for tensor cores that truncate
  const double gamma = kK * per_addition / (1 - kK * per_addition);  // K additions, in any order
  // Element (i, j) may differ from the exact A @ B by gamma * sum over t of |a[i, t] * b[t, j]|.
  // [/book:tolerance]

  // [book:check]
  const Reference want = reference(a, b, kM, kN, kK);
  int outside = 0;
  double worst = 0;  // the largest error, in units of u * sum |a b|
  for (int i = 0; i < kM * kN; ++i) {
    const double error = std::abs(c[i] - want.product[i]);
    if (!(error <= gamma * want.magnitude[i])) ++outside;  // false for NaN too
    worst = std::max(worst, error / (u * want.magnitude[i]));
  }
  std::printf("C = A @ B: %d x %d = (%d x %d, f16) @ (%d x %d, f16), accumulated in f32\n", kM, kN, kM, kK, kK, kN);
  std::printf("grid %d x %d: one program per %d x %d block of C, %d steps of %d along K\n", grid.x, grid.y, kBlockM,
              kBlockN, kl::cdiv(kK, kBlockK), kBlockK);
  std::printf("tolerance: %.0f u * sum |a b| = %.2e * sum |a b| per element\n", gamma / u, gamma);
  std::printf("largest error: %.1f u * sum |a b|\n", worst);
  std::printf("elements outside the tolerance: %d of %d\n", outside, kM * kN);
  // [/book:check]
  return outside == 0 ? 0 : 1;
}
