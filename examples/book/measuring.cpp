// Chapter 19, "Measuring": the global-memory traffic a launch counts against
// the traffic its problem needs at least (compulsory traffic), the arithmetic
// intensity of three kernels, and timing launches with kl::do_bench, whose
// times are a GPU's (CUDA events) only on the cuda device. Every result is
// checked against plain C++.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"
#include "matmul_kernel.hpp"

namespace kl = kiln;

template <int BLOCK>
void add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) + kl::load(y + offsets, mask), mask);
}

// [book:center_rows]
/// Subtracts each row's mean from it, one program per row, BLOCK columns at a
/// time: a first loop sums the row, a second reads it again to subtract.
template <int BLOCK>
void center_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto row = kl::program_id(0);
  kl::Var sum = kl::zeros<kl::f32, BLOCK>();
  for (auto start : kl::range(0, n, BLOCK)) {
    auto cols = start + kl::arange<BLOCK>();
    sum = sum + kl::load(x + row * n + cols, cols < n);
  }
  auto mean = kl::sum(sum, kl::axis<0>) / kl::cast<kl::f32>(n);
  for (auto start : kl::range(0, n, BLOCK)) {
    auto cols = start + kl::arange<BLOCK>();
    kl::store(out + row * n + cols, kl::load(x + row * n + cols, cols < n) - mean, cols < n);
  }
}
// [/book:center_rows]

// [book:center_row_in_tile]
/// The same for rows of at most BLOCK columns: the row stays in one tile, read once.
template <int BLOCK>
void center_row_in_tile(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto row = kl::program_id(0);
  auto cols = kl::arange<BLOCK>();
  auto values = kl::load(x + row * n + cols, cols < n);
  auto mean = kl::sum(values, kl::axis<0>) / kl::cast<kl::f32>(n);
  kl::store(out + row * n + cols, values - mean, cols < n);
}
// [/book:center_row_in_tile]

// [book:timer]
/// The median GPU time of one call of `launch` on `device`, timed by
/// kl::do_bench; none when the times are not a GPU's (`cpu` and `emu`).
template <class Launch>
std::optional<double> median_gpu_seconds(const kl::Device& device, Launch launch) {
  const kl::BenchResult timed = kl::do_bench(device, launch);
  if (!timed.gpu_time) return std::nullopt;
  return timed.median_ms() / 1e3;
}
// [/book:timer]

// [book:report]
/// One line: the bytes a launch counted against the compulsory bytes (every
/// input read once, every output written once), and the arithmetic
/// intensity, flops per compulsory byte.
void report(const char* name, const kl::runtime::LaunchStats& stats, double compulsory_read, double compulsory_written,
            double flops) {
  const double counted = static_cast<double>(stats.bytes_read + stats.bytes_written);
  std::printf("%-22s read %9llu B, wrote %8llu B; compulsory %8.0f B; counted/compulsory %.2f; %.3g flop/B\n", name,
              static_cast<unsigned long long>(stats.bytes_read), static_cast<unsigned long long>(stats.bytes_written),
              compulsory_read + compulsory_written, counted / (compulsory_read + compulsory_written),
              flops / (compulsory_read + compulsory_written));
}
// [/book:report]

std::mt19937 random_engine(2024);
std::vector<float> uniform(std::size_t n) {
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& e : v) e = distribution(random_engine);
  return v;
}

int failures = 0;
const double u = std::numeric_limits<float>::epsilon() / 2;

void measure_add() {
  constexpr int n = 1 << 20;
  const std::vector<float> x = uniform(n), y = uniform(n);
  auto x_buffer = kl::Buffer<float>::from(x), y_buffer = kl::Buffer<float>::from(y);
  kl::Buffer<float> out(n);
  auto kernel = kl::compile<add<1024>>();
  const kl::Grid grid(n / 1024);
  // [book:measure_add]
  const kl::runtime::LaunchStats stats = kernel.launch(grid, x_buffer, y_buffer, out, n);
  report("add, n = 2^20", stats, 2.0 * n * 4, 1.0 * n * 4, n);
  const auto seconds = median_gpu_seconds(x_buffer.device(), [&] { kernel.launch(grid, x_buffer, y_buffer, out, n); });
  if (seconds)
    std::printf("  %.1f us per launch, %.0f GB/s of compulsory traffic\n", *seconds * 1e6, 12.0 * n / *seconds / 1e9);
  else std::printf("  no GPU time: the launches ran on %s\n", x_buffer.device().name().c_str());
  // [/book:measure_add]
  const std::vector<float> got = out.to_host();
  for (int i = 0; i < n; ++i) failures += got[i] != x[i] + y[i];
}

/// Reports the traffic of one launch of a centring kernel and checks it;
/// returns its median GPU time when it runs on a GPU.
template <class Kernel>
std::optional<double> measure_centering(const char* name, const Kernel& kernel) {
  constexpr int rows = 256, n = 1000;
  const std::vector<float> x = uniform(static_cast<std::size_t>(rows) * n);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(rows * n);
  report(name, kernel.launch(rows, x_buffer, out, n), 4.0 * rows * n, 4.0 * rows * n, 2.0 * rows * n);
  const auto seconds = median_gpu_seconds(x_buffer.device(), [&] { kernel.launch(rows, x_buffer, out, n); });
  const std::vector<float> got = out.to_host();
  for (int r = 0; r < rows; ++r) {
    double sum = 0, magnitude = 0;
    for (int c = 0; c < n; ++c) sum += x[r * n + c], magnitude += std::abs(x[r * n + c]);
    // The sum and the division (n u magnitude / n), the subtraction (u (1 + magnitude / n)): |x| <= 1.
    const double mean = sum / n, bound = (n + 2) * u * (magnitude / n) + 2 * u;
    for (int c = 0; c < n; ++c) failures += !(std::abs(got[r * n + c] - (x[r * n + c] - mean)) <= bound);
  }
  return seconds;
}

void measure_matmul() {
  constexpr int m = 256, n = 256, k = 256;
  const std::vector<float> a_float = uniform(m * k), b_float = uniform(k * n);
  const std::vector<kl::half> a(a_float.begin(), a_float.end()), b(b_float.begin(), b_float.end());
  auto a_buffer = kl::Buffer<kl::half>::from(a), b_buffer = kl::Buffer<kl::half>::from(b);
  kl::Buffer<float> c(m * n);
  const kl::runtime::LaunchStats stats =
      kl::compile<matmul<64, 64, 32>>().launch(kl::Grid(m / 64, n / 64), a_buffer, b_buffer, c, m, n, k);
  report("matmul 256^3, f16", stats, 2.0 * (m * k + k * n), 4.0 * m * n, 2.0 * m * n * k);
  failures += matmul_errors(a, b, c.to_host(), m, n, k, u);
}

int main() {
  measure_add();
  // [book:ratio]
  const auto two_reads = measure_centering("center_rows", kl::compile<center_rows<256>>());
  const auto one_read = measure_centering("center_row_in_tile", kl::compile<center_row_in_tile<1024>>());
  if (two_reads && one_read)
    std::printf("  center_rows takes %.2fx the time of center_row_in_tile\n", *two_reads / *one_read);
  // [/book:ratio]
  measure_matmul();
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
