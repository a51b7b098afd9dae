// Chapter 4, "Vector add end to end": a kernel, its launch over a grid of
// programs, and the check of its result against plain C++.
// [book:header]
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;  // the short name every kiln program of this book uses
// [/book:header]

// [book:kernel]
template <int BLOCK>
void vector_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();  // this program's BLOCK indices
  auto mask = offsets < n;                                         // false past the end of the vectors
  kl::store(out + offsets, kl::load(x + offsets, mask) + kl::load(y + offsets, mask), mask);
}
// [/book:kernel]

int main() {
  // [book:inputs]
  const int n = 1000;
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = uniform(random);
    y[i] = uniform(random);
  }
  // [/book:inputs]

  // [book:launch]
  constexpr int kBlock = 256;
  auto x_buffer = kl::Buffer<float>::from(x);
  auto y_buffer = kl::Buffer<float>::from(y);
  kl::Buffer<float> out(n);
  auto kernel = kl::compile<vector_add<kBlock>>();
  const int programs = (n + kBlock - 1) / kBlock;  // 4 programs; the last one is masked past n
  kernel.launch(kl::Grid(programs), x_buffer, y_buffer, out, n);
  const std::vector<float> result = out.to_host();
  // [/book:launch]

  // [book:check]
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (result[i] != x[i] + y[i]) ++wrong;  // one f32 addition each side: the bits agree
  std::printf("%d programs of %d elements added %d pairs\n", programs, kBlock, n);
  std::printf("out[0] = %.6f = %.6f + %.6f\n", result[0], x[0], y[0]);
  std::printf("%s: %d of %d elements differ from x + y\n", wrong == 0 ? "ok" : "FAILED", wrong, n);
  // [/book:check]
  return wrong == 0 ? 0 : 1;
}
