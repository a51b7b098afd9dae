// Chapter 16, "Letting kl::autotune choose": chapter 9's matmul compiled for
// three configurations of block sizes, warps and stages, one chosen per
// (M, N, K) key. On `cpu` and `emu` the first configuration that compiles and
// is not pruned launches, so the program prints the same lines there; on
// `cuda` each configuration is timed and the fastest launches. Every launch
// is checked against a double-precision reference.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "matmul_kernel.hpp"

namespace kl = kiln;

namespace {

std::vector<kl::half> halves(int count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<kl::half> values(count);
  for (kl::half& v : values) v = kl::half(distribution(generator));
  return values;
}

}  // namespace

// [book:configs]
/// What the launch grid of a configuration depends on.
struct Blocks {
  int m, n;
};

kl::CompileOptions warps_and_stages(int num_warps, int num_stages) {
  kl::CompileOptions options;
  options.num_warps = num_warps;
  options.num_stages = num_stages;
  return options;
}

const auto tuned_matmul =
    kl::autotune(kl::config<matmul<128, 64, 32>>(warps_and_stages(8, 3), Blocks{128, 64}),
                 kl::config<matmul<64, 64, 32>>(warps_and_stages(4, 3), Blocks{64, 64}),
                 kl::config<matmul<32, 32, 32>>(warps_and_stages(4, 2), Blocks{32, 32}))
        .key<3, 4, 5>()  // m, n and k choose the configuration
        .prune([](const Blocks& blocks, const kl::CompileOptions&, const kl::TuneKey& key) {
          return blocks.m > key[0] || blocks.n > key[1];  // a block larger than C wastes most of its program
        });
// [/book:configs]

int failures = 0;

void multiply(int m, int n, int k) {
  const std::vector<kl::half> a = halves(m * k, 1 + m), b = halves(k * n, 2 + n);
  const auto a_buffer = kl::Buffer<kl::half>::from(a), b_buffer = kl::Buffer<kl::half>::from(b);
  kl::Buffer<float> c(m * n);
  // [book:launch]
  int programs = 0;
  tuned_matmul.launch(
      [&](const Blocks& blocks) {
        const kl::Grid grid(kl::cdiv(m, blocks.m), kl::cdiv(n, blocks.n));
        programs = grid.x * grid.y;
        return grid;
      },
      a_buffer, b_buffer, c, m, n, k);
  // [/book:launch]
  // [book:choice]
  const kl::runtime::TuningChoice choice = *tuned_matmul.choice({m, n, k});
  const auto& configurations = tuned_matmul.compiled();
  std::printf("key (%d, %d, %d): %s, %d programs\n", m, n, k, configurations[choice.index].description.c_str(),
              programs);
  for (std::size_t i = 0; i < configurations.size(); ++i) {
    if (choice.seconds[i])
      std::printf("  %s: %.1f us\n", configurations[i].description.c_str(), *choice.seconds[i] * 1e6);
    if (!choice.skipped[i].empty())
      std::printf("  %s: skipped, %s\n", configurations[i].description.c_str(), choice.skipped[i].c_str());
  }
  // [/book:choice]
  failures += matmul_errors(a, b, c.to_host(), m, n, k, 0x1p-24);
}

int main() {
  for (const auto& c : tuned_matmul.compiled())
    std::printf("%s: %s\n", c.description.c_str(), c.kernel ? "compiled" : c.error.c_str());
  multiply(128, 128, 64);
  multiply(40, 100, 64);
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
