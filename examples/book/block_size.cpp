// Chapter 16, "Block size and num_warps": what the two choices change, read
// from things that do not depend on the machine: the GPU code generator's
// own report (KILN_DUMP, on the emu device) of how a tile is spread over
// threads and how much shared memory a program needs, the size of the grid,
// and the global-memory traffic a launch counts. Every launch is checked
// against plain C++.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "matmul_kernel.hpp"

namespace kl = kiln;

// [book:scale]
template <int BLOCK>
void scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n, kl::f32 a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) * a, mask);
}
// [/book:scale]

// [book:row_sums]
template <int BLOCK>
void row_sums(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> sums, kl::i32 n) {
  auto cols = kl::arange<BLOCK>();
  auto row = kl::program_id(0);
  kl::store(sums + row, kl::sum(kl::load(x + row * n + cols, cols < n), kl::axis<0>));
}
// [/book:row_sums]

// [book:transpose]
template <int BLOCK>
void transpose(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {  // out = x^T for n x n matrices
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK + kl::arange<BLOCK>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK + kl::arange<BLOCK>());
  auto tile = kl::load(x + rows * n + cols, (rows < n) & (cols < n));
  auto out_rows = kl::trans(cols), out_cols = kl::trans(rows);  // BLOCK x 1 and 1 x BLOCK
  kl::store(out + out_rows * n + out_cols, kl::trans(tile), (out_rows < n) & (out_cols < n));
}
// [/book:transpose]

// [book:report]
/// What the GPU code generator reported while `launch` compiled a kernel for
/// the emu device: the layout of the first tile of type `tile` (which register,
/// lane and warp holds which element) and its registers per thread, the
/// threads per program and the bytes of shared memory per program; or the
/// error that stopped the compilation.
struct Report {
  std::string layout, error;
  int registers = 0, threads = 0, shared_bytes = 0;
};

template <class Launch>
Report report(const std::string& tile, Launch launch) {
  std::ostringstream dump;
  std::streambuf* const stderr_buffer = std::cerr.rdbuf(dump.rdbuf());  // the code generator prints on std::cerr
  setenv("KILN_DUMP", "all", 1);  // every step of the compilation the first launch on emu does
  Report r;
  try {
    launch();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  unsetenv("KILN_DUMP");
  std::cerr.rdbuf(stderr_buffer);
  const std::string text = dump.str();
  std::smatch m;
  const std::string layouts = text.substr(std::min(text.find("// after layouts"), text.size()));
  if (std::regex_search(layouts, m, std::regex(": " + tile + "\n(register.*)\n(lane.*)\n(warp.*)\n")))
    r.layout = m.str(1) + "  " + m.str(2) + "  " + m.str(3);
  if (std::regex_search(r.layout, m, std::regex("^register\\[(\\d+)\\]"))) r.registers = std::stoi(m.str(1));
  if (std::regex_search(text, m, std::regex("\"maxntidx\", i32 (\\d+)"))) r.threads = std::stoi(m.str(1));
  if (std::regex_search(text, m, std::regex("!kiln.shared_bytes = !\\{!(\\d+)\\}")) &&
      std::regex_search(text, m, std::regex("\n!" + m.str(1) + " = !\\{i32 (\\d+)\\}")))
    r.shared_bytes = std::stoi(m.str(1));
  return r;
}
// [/book:report]

std::mt19937 random_engine(2024);
std::vector<float> uniform(std::size_t n) {
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& e : v) e = distribution(random_engine);
  return v;
}

std::vector<kl::half> halves(std::size_t n) {
  const std::vector<float> f = uniform(n);
  return std::vector<kl::half>(f.begin(), f.end());
}

int failures = 0;
const double u = std::numeric_limits<float>::epsilon() / 2;

// [book:scale_configs]
template <int BLOCK>
void show_scale(int num_warps) {
  constexpr int n = 1 << 16;
  const std::vector<float> x = uniform(n);
  auto x_buffer = kl::Buffer<float>::from(x, kl::Device::emu());
  kl::Buffer<float> out(n, kl::Device::emu());
  kl::CompileOptions options;
  options.num_warps = num_warps;
  const kl::Grid grid(kl::cdiv(n, BLOCK));
  const Report r = report("tile<" + std::to_string(BLOCK) + "xf32>",
                          [&] { kl::compile<scale<BLOCK>>(options).launch(grid, x_buffer, out, n, 0.5f); });
  std::printf("scale<%d>, num_warps %d: %d programs of %d threads, %d element%s per thread\n  %s\n", BLOCK, num_warps,
              grid.x, r.threads, r.registers, r.registers == 1 ? "" : "s", r.layout.c_str());
  const std::vector<float> y = out.to_host();
  for (int i = 0; i < n; ++i) failures += y[i] != x[i] * 0.5f;
}
// [/book:scale_configs]

template <int BLOCK>
void show_row_sums(int num_warps) {
  constexpr int rows = 64, n = 1000;
  const std::vector<float> x = uniform(rows * n);
  auto x_buffer = kl::Buffer<float>::from(x, kl::Device::emu());
  kl::Buffer<float> sums(rows, kl::Device::emu());
  kl::CompileOptions options;
  options.num_warps = num_warps;
  const Report r = report("tile<" + std::to_string(BLOCK) + "xf32>",
                          [&] { kl::compile<row_sums<BLOCK>>(options).launch(rows, x_buffer, sums, n); });
  std::printf("row_sums<%d>, num_warps %d: %d threads, %d bytes of shared memory per program\n", BLOCK, num_warps,
              r.threads, r.shared_bytes);
  const std::vector<float> got = sums.to_host();
  for (int i = 0; i < rows; ++i) {
    double want = 0, magnitude = 0;
    for (int j = 0; j < n; ++j) want += x[i * n + j], magnitude += std::abs(x[i * n + j]);
    failures += !(std::abs(got[i] - want) <= n * u * magnitude);  // n - 1 additions in any order
  }
}

template <int BLOCK>
void show_transpose() {
  constexpr int n = 512;
  const std::vector<float> x = uniform(n * n);
  auto x_buffer = kl::Buffer<float>::from(x, kl::Device::emu());
  kl::Buffer<float> out(n * n, kl::Device::emu());
  const Report r =
      report("", [&] { kl::compile<transpose<BLOCK>>().launch(kl::Grid(n / BLOCK, n / BLOCK), x_buffer, out, n); });
  if (!r.error.empty()) {
    std::printf("transpose<%d>: %s\n", BLOCK, r.error.c_str());
    return;
  }
  std::printf("transpose<%d>: %d bytes of shared memory per program\n", BLOCK, r.shared_bytes);
  const std::vector<float> y = out.to_host();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) failures += y[j * n + i] != x[i * n + j];
}

// [book:traffic]
template <int BLOCK_M, int BLOCK_N>
void show_matmul() {
  constexpr int m = 256, n = 256, k = 256;
  const std::vector<kl::half> a = halves(m * k), b = halves(k * n);
  // On cpu, where the stats count each element a tile loads once, whatever the layout (see the chapter).
  auto a_buffer = kl::Buffer<kl::half>::from(a, kl::Device::cpu()),
       b_buffer = kl::Buffer<kl::half>::from(b, kl::Device::cpu());
  kl::Buffer<float> c(m * n, kl::Device::cpu());
  const kl::Grid grid(kl::cdiv(m, BLOCK_M), kl::cdiv(n, BLOCK_N));
  const kl::runtime::LaunchStats stats =
      kl::compile<matmul<BLOCK_M, BLOCK_N, 32>>().launch(grid, a_buffer, b_buffer, c, m, n, k);
  std::printf("matmul %d x %d blocks: %2d programs, %7llu bytes read (A and B are %d bytes each)\n", BLOCK_M, BLOCK_N,
              grid.x * grid.y, static_cast<unsigned long long>(stats.bytes_read), m * k * 2);
  // [/book:traffic]
  failures += matmul_errors(a, b, c.to_host(), m, n, k, u);
}

int main() {
  show_scale<64>(4);
  show_scale<256>(4);
  show_scale<1024>(4);
  show_scale<1024>(8);
  show_scale<4096>(4);
  show_scale<4096>(16);
  show_row_sums<1024>(1);
  show_row_sums<1024>(4);
  show_row_sums<1024>(8);
  show_transpose<32>();
  show_transpose<64>();
  show_transpose<128>();
  show_transpose<256>();
  show_matmul<32, 32>();
  show_matmul<64, 64>();
  show_matmul<128, 128>();
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
