// The CPU interpreter against a plain C++ loop doing the same work, in one
// run: vector_add and softmax. Report the ratio (interpreter / loop).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kiln/kernels/softmax.hpp"
#include "kiln/kernels/vector_add.hpp"

namespace kl = kiln;

namespace {

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Single-threaded interpreter so the comparison is one core against one core.
const kl::Device kOneThread = kl::Device::cpu(1);

void vector_add_interpreter(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto x = kl::Buffer<float>::from(random_floats(n, 1), kOneThread);
  auto y = kl::Buffer<float>::from(random_floats(n, 2), kOneThread);
  kl::Buffer<float> out(n, kOneThread);
  auto kernel = kl::compile<kiln::kernels::vector_add<kl::f32, 1024>>();
  for (auto _ : state) kernel.launch(kl::Grid((n + 1023) / 1024), x, y, out, n);
  state.SetBytesProcessed(state.iterations() * 3LL * n * sizeof(float));
}

void vector_add_loop(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto x = random_floats(n, 1), y = random_floats(n, 2);
  std::vector<float> out(n);
  for (auto _ : state) {
    for (int i = 0; i < n; ++i) out[i] = x[i] + y[i];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 3LL * n * sizeof(float));
}

void softmax_interpreter(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0)), cols = static_cast<int>(state.range(1));
  auto in = kl::Buffer<float>::from(random_floats(static_cast<std::size_t>(rows) * cols, 3), kOneThread);
  kl::Buffer<float> out(static_cast<std::size_t>(rows) * cols, kOneThread);
  auto kernel = kl::compile<kiln::kernels::softmax<kl::f32, 1024>>();
  for (auto _ : state) kernel.launch(kl::Grid(rows), in, out, cols, cols, cols);
  state.SetBytesProcessed(state.iterations() * 2LL * rows * cols * sizeof(float));
}

// The same algorithm as the kernel (online max and sum, then a write pass),
// written as the straightforward single-threaded C++ a user would write.
void softmax_loop(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0)), cols = static_cast<int>(state.range(1));
  auto in = random_floats(static_cast<std::size_t>(rows) * cols, 3);
  std::vector<float> out(in.size());
  for (auto _ : state) {
    for (int r = 0; r < rows; ++r) {
      const float* x = in.data() + static_cast<std::size_t>(r) * cols;
      float* y = out.data() + static_cast<std::size_t>(r) * cols;
      float m = -INFINITY;
      for (int c = 0; c < cols; ++c) m = std::max(m, x[c]);
      float s = 0;
      for (int c = 0; c < cols; ++c) s += std::exp(x[c] - m);
      for (int c = 0; c < cols; ++c) y[c] = std::exp(x[c] - m) / s;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2LL * rows * cols * sizeof(float));
}

}  // namespace

BENCHMARK(vector_add_interpreter)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(vector_add_loop)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(softmax_interpreter)->Args({1000, 1111})->Unit(benchmark::kMillisecond);
BENCHMARK(softmax_loop)->Args({1000, 1111})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
