// Chapter 7, "Reading the IR and the PTX": the tile IR of chapter 4's vector
// add as traced, the line a launch's specialisation changes, and the IR of a
// kernel with a runtime loop.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kiln/ir/printer.hpp"
#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:kernel]
template <int BLOCK>
void vector_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto start = kl::program_id(0) * BLOCK;
  auto offsets = start + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto a = kl::load(x + offsets, mask);
  auto b = kl::load(y + offsets, mask);
  kl::store(out + offsets, a + b, mask);
}
// [/book:kernel]

// [book:column_sums]
template <int COLS>
void column_sums(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m) {
  auto cols = kl::arange<COLS>();
  kl::Var sum = kl::zeros<kl::f32, COLS>();
  for (auto r : kl::range(0, m)) sum = sum + kl::load(x + r * COLS + cols);
  kl::store(out + cols, sum);
}
// [/book:column_sums]

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

int main() {
  const int n = 4096;  // a multiple of 16: the launch's variant assumes it
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = uniform(random);
    y[i] = uniform(random);
  }
  auto x_buffer = kl::Buffer<float>::from(x);
  auto y_buffer = kl::Buffer<float>::from(y);
  kl::Buffer<float> out(n);

  // [book:print]
  auto kernel = kl::compile<vector_add<1024>>();
  std::printf("%s", kl::ir::print(kernel.program().traced()).c_str());
  kernel.launch(kl::Grid(n / 1024), x_buffer, y_buffer, out, n);
  const std::string specialized = kl::ir::print(kernel.program_for(x_buffer, y_buffer, out, n)->optimized());
  std::printf("specialised for this launch:\n%s\n", first_line(specialized).c_str());
  // [/book:print]
  const std::string traced = kl::ir::print(kernel.program().traced());
  const std::string optimized = kl::ir::print(kernel.ir());
  const bool rest_same = optimized.substr(optimized.find('\n')) == specialized.substr(specialized.find('\n'));
  std::printf("its other lines: %s; the optimiser changed %s\n", rest_same ? "as above" : "different",
              optimized == traced ? "nothing" : "something");
  const std::vector<float> sums = out.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += sums[i] != x[i] + y[i];

  // [book:print_loop]
  auto loop = kl::compile<column_sums<8>>();
  std::printf("%s", kl::ir::print(loop.ir()).c_str());
  // [/book:print_loop]
  const int m = 3;
  kl::Buffer<float> totals(8);
  loop.launch(kl::Grid(1), x_buffer, totals, m);
  const std::vector<float> column = totals.to_host();
  for (int c = 0; c < 8; ++c) wrong += column[c] != ((0.0f + x[c]) + x[8 + c]) + x[16 + c];
  std::printf("%s: %d results differ from C++\n", wrong == 0 ? "ok" : "FAILED", wrong);
  return wrong == 0 ? 0 : 1;
}
