// Chapter 2, "From C++ to PTX": the first two stages of a kernel's way to the
// GPU, printed from a program: the tile IR as traced, the IR after kiln's
// passes, and the signature of the variant a launch specialises; then the
// kernel is launched and checked.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kiln/ir/printer.hpp"
#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:kernel]
template <int BLOCK>
void scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n, kl::f32 a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto y = kl::load(x + offsets, offsets < n) * a;
  kl::store(out + offsets, y, offsets < n);  // the same mask, written a second time
}
// [/book:kernel]

int main() {
  // [book:print]
  auto kernel = kl::compile<scale<64>>();
  std::printf("--- traced\n%s", kl::ir::print(kernel.program().traced()).c_str());
  std::printf("--- optimised\n%s", kl::ir::print(kernel.ir()).c_str());
  // [/book:print]

  // [book:launch]
  const int n = 1024;
  const float a = 0.5f;
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = uniform(random);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(n);
  const std::string variant = kl::ir::print(kernel.program_for(x_buffer, out, n, a)->optimized());
  std::printf("--- the variant a launch with n = %d runs\n%s\n", n, variant.substr(0, variant.find('\n')).c_str());
  kernel.launch(kl::Grid((n + 63) / 64), x_buffer, out, n, a);
  // [/book:launch]

  const std::vector<float> result = out.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (result[i] != x[i] * a) ++wrong;  // one f32 multiplication each side: the bits agree
  std::printf("%s: %d of %d elements differ from x * a\n", wrong == 0 ? "ok" : "FAILED", wrong, n);
  return wrong == 0 ? 0 : 1;
}
