// Chapter 17, "Coalescing and layouts": the layouts kiln's GPU code generator
// gives a kernel's tiles, the global loads and stores it emits for them, and
// what a layout conversion costs. Each kernel is compiled for sm_90a as the
// variant a launch with these arguments runs, then launched on the chosen
// device and checked against plain C++.
#include <cstdio>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/lowering/compile.hpp"

namespace kl = kiln;

// [book:scale]
template <int BLOCK>
void scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n, kl::f32 a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) * a, mask);
}
// [/book:scale]

// [book:copy_rows]
template <int ROWS, int COLS>
void copy_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 n) {  // n <= COLS
  auto rows = kl::expand_dims<1>(kl::program_id(0) * ROWS + kl::arange<ROWS>());  // ROWS x 1
  auto cols = kl::expand_dims<0>(kl::arange<COLS>());                             // 1 x COLS
  auto mask = (rows < m) & (cols < n);
  kl::store(out + rows * n + cols, kl::load(x + rows * n + cols, mask), mask);
}
// [/book:copy_rows]

// [book:gather_blocks]
template <int BLOCK>
void gather_blocks(kl::Ptr<kl::f32> x, kl::Ptr<kl::i32> at, kl::Ptr<kl::f32> out) {  // out = x[at]
  auto i = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  // at holds whole blocks of 4 elements: runs of 4 consecutive offsets, each from a multiple of 4
  auto offsets = kl::multiple_of<4>(kl::max_contiguous<4>(kl::load(at + i)));
  kl::store(out + i, kl::load(x + offsets));
}
// [/book:gather_blocks]

// [book:column]
template <int BLOCK>
void column(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 n, kl::i32 j) {  // out = column j
  auto rows = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  kl::store(out + rows, kl::load(x + rows * n + j, rows < m), rows < m);
}
// [/book:column]

// [book:transpose_by_addresses]
template <int BLOCK>
void transpose_by_addresses(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {  // chapter 5's, square
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK + kl::arange<BLOCK>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK + kl::arange<BLOCK>());
  auto mask = (rows < n) & (cols < n);
  kl::store(out + cols * n + rows, kl::load(x + rows * n + cols, mask), mask);
}
// [/book:transpose_by_addresses]

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

// [book:transpose_tile_only]
template <int BLOCK>
void transpose_tile_only(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK + kl::arange<BLOCK>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK + kl::arange<BLOCK>());
  auto tile = kl::load(x + rows * n + cols, (rows < n) & (cols < n));
  // The indices of out's block, made afresh: its rows are x's columns.
  auto out_rows = kl::expand_dims<1>(kl::program_id(1) * BLOCK + kl::arange<BLOCK>());
  auto out_cols = kl::expand_dims<0>(kl::program_id(0) * BLOCK + kl::arange<BLOCK>());
  kl::store(out + out_rows * n + out_cols, kl::trans(tile), (out_rows < n) & (out_cols < n));
}
// [/book:transpose_tile_only]

// [book:lower]
/// What the GPU code generator makes of the variant `kernel` runs for these
/// launch arguments: its layout dump (the `layouts` step, as `kiln dump
/// --stage layout` prints it) and its PTX for sm_90a.
struct Lowered {
  std::string layouts, ptx;
  int shared_bytes = 0;
};

template <class Kernel, class... Args>
Lowered lower(const Kernel& kernel, const Args&... args) {
  const std::shared_ptr<const kl::runtime::Program> variant = kernel.program_for(args...);
  kl::lowering::GpuTarget target;  // sm_90a
  target.num_warps = variant->options().num_warps;
  std::ostringstream log;
  const kl::lowering::GpuKernel gpu =
      kl::lowering::compile_for_gpu(variant->optimized(), target, {.dump_after = "layouts", .log = &log});
  return {log.str(), gpu.ptx, gpu.shared_bytes};
}
// [/book:lower]

/// The layout the dump gives the first value of type `type`: its three lines
/// (register, lane, warp) joined, or "" when there is none.
std::string layout_of(const Lowered& lowered, const std::string& type) {
  std::smatch m;
  if (!std::regex_search(lowered.layouts, m, std::regex("%\\d+ : " + type + "\n(register.*)\n(lane.*)\n(warp.*)\n")))
    return "";
  return m.str(1) + "\n  " + m.str(2) + "\n  " + m.str(3);
}

/// The dump's `convert` lines, without the source line they name.
std::string conversions(const Lowered& lowered) {
  std::string out;
  std::istringstream lines(lowered.layouts);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("convert ")) out += "  " + std::regex_replace(line, std::regex(" at [^:]+:\\d+:"), ":") + "\n";
  return out.empty() ? "  (none)\n" : out;
}

/// How many of each global load and store instruction the PTX has: "2 x ld.global.v4.f32".
std::string global_accesses(const Lowered& lowered) {
  std::map<std::string, int> count;
  std::smatch m;
  for (auto it = lowered.ptx.cbegin();
       std::regex_search(it, lowered.ptx.cend(), m, std::regex("\\b((ld|st)\\.global(\\.\\w+)+)\\s"));
       it = m.suffix().first)
    ++count[m.str(1)];
  std::string out;
  for (const auto& [instruction, times] : count)
    out += (out.empty() ? "" : ", ") + std::to_string(times) + " x " + instruction;
  return out;
}

/// How many barriers (bar.sync) the PTX has.
int barriers(const Lowered& lowered) {
  int count = 0;
  for (std::size_t at = lowered.ptx.find("bar.sync"); at != std::string::npos;
       at = lowered.ptx.find("bar.sync", at + 1))
    ++count;
  return count;
}

std::mt19937 random_engine(2024);
std::vector<float> uniform(std::size_t n) {
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& e : v) e = distribution(random_engine);
  return v;
}

int failures = 0;

void show_scale(int n) {
  const std::vector<float> x = uniform(n);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(n);
  // [book:show_scale]
  auto kernel = kl::compile<scale<1024>>();
  const Lowered lowered = lower(kernel, x_buffer, out, n, 0.5f);
  std::printf("scale<1024>, n = %d\n  %s\n  PTX: %s\n", n, layout_of(lowered, "tile<1024xf32>").c_str(),
              global_accesses(lowered).c_str());
  // [/book:show_scale]
  kernel.launch(kl::Grid(kl::cdiv(n, 1024)), x_buffer, out, n, 0.5f);
  const std::vector<float> y = out.to_host();
  for (int i = 0; i < n; ++i) failures += y[i] != x[i] * 0.5f;
}

void show_copy_rows() {
  constexpr int m = 1000, n = 64;
  const std::vector<float> x = uniform(m * n);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(m * n);
  auto kernel = kl::compile<copy_rows<32, 64>>();
  const Lowered lowered = lower(kernel, x_buffer, out, m, n);
  std::printf("copy_rows<32, 64>, n = %d\n  %s\n  PTX: %s\n", n, layout_of(lowered, "tile<32x64xf32>").c_str(),
              global_accesses(lowered).c_str());
  kernel.launch(kl::Grid(kl::cdiv(m, 32)), x_buffer, out, m, n);
  failures += out.to_host() != x;
}

void show_column() {
  constexpr int m = 4096, n = 512, j = 7;
  const std::vector<float> x = uniform(m * n);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(m);
  auto kernel = kl::compile<column<1024>>();
  const Lowered lowered = lower(kernel, x_buffer, out, m, n, j);
  std::printf("column<1024>, n = %d\n  %s\n  PTX: %s\n", n, layout_of(lowered, "tile<1024xf32>").c_str(),
              global_accesses(lowered).c_str());
  kernel.launch(kl::Grid(m / 1024), x_buffer, out, m, n, j);
  const std::vector<float> y = out.to_host();
  for (int i = 0; i < m; ++i) failures += y[i] != x[i * n + j];
}

void show_gather_blocks() {
  constexpr int n = 4096, blocks = 2048;
  const std::vector<float> x = uniform(4 * blocks);
  std::uniform_int_distribution<int> block(0, blocks - 1);
  std::vector<int> at(n);
  for (int i = 0; i < n; i += 4)
    for (int k = 0, start = 4 * block(random_engine); k < 4; ++k) at[i + k] = start + k;
  auto x_buffer = kl::Buffer<float>::from(x);
  auto at_buffer = kl::Buffer<int>::from(at);
  kl::Buffer<float> out(n);
  auto kernel = kl::compile<gather_blocks<1024>>();
  const Lowered lowered = lower(kernel, x_buffer, at_buffer, out);
  std::printf("gather_blocks<1024>\n  %s\n  PTX: %s\n", layout_of(lowered, "tile<1024xf32>").c_str(),
              global_accesses(lowered).c_str());
  kernel.launch(kl::Grid(n / 1024), x_buffer, at_buffer, out);
  const std::vector<float> y = out.to_host();
  for (int i = 0; i < n; ++i) failures += y[i] != x[at[i]];
}

template <auto Transpose, int BLOCK>
void show_transpose(const char* name) {
  constexpr int n = 256;
  const std::vector<float> x = uniform(n * n);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(n * n);
  auto kernel = kl::compile<Transpose>();
  const Lowered lowered = lower(kernel, x_buffer, out, n);
  std::printf("%s<%d>: %d bytes of shared memory, %d barriers\n  %s\n  PTX: %s\n%s", name, BLOCK, lowered.shared_bytes,
              barriers(lowered), layout_of(lowered, "tile<32x32xf32>").c_str(), global_accesses(lowered).c_str(),
              conversions(lowered).c_str());
  kernel.launch(kl::Grid(n / BLOCK, n / BLOCK), x_buffer, out, n);
  const std::vector<float> y = out.to_host();
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) failures += y[k * n + i] != x[i * n + k];
}

int main() {
  show_scale(4096);
  show_scale(4095);
  show_copy_rows();
  show_column();
  show_gather_blocks();
  show_transpose<transpose_by_addresses<32>, 32>("transpose_by_addresses");
  show_transpose<transpose<32>, 32>("transpose");
  show_transpose<transpose_tile_only<32>, 32>("transpose_tile_only");
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
