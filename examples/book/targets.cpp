// Chapter 24, "Building for sm_80 and sm_90a, and what is portable": the same
// kernels compiled by the GPU code generator for both targets, the lines of
// their PTX that differ, which matrix instructions a dot gets on each, the
// shared memory each target gives a program, the cpu and emu devices
// computing the same bits whatever the host, and inline PTX with the host
// reference those devices run in its place.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/emu_machine.hpp"
#include "matmul_kernel.hpp"

namespace kl = kiln;

template <int BLOCK>
void scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n, kl::f32 a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) * a, mask);
}

// Chapter 16's transpose: its tile crosses shared memory once.
template <int BLOCK>
void transpose(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK + kl::arange<BLOCK>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK + kl::arange<BLOCK>());
  auto tile = kl::load(x + rows * n + cols, (rows < n) & (cols < n));
  auto out_rows = kl::trans(cols), out_cols = kl::trans(rows);
  kl::store(out + out_rows * n + out_cols, kl::trans(tile), (out_rows < n) & (out_cols < n));
}

// [book:fast_tanh]
/// What the cpu and emu devices compute for one element in place of the PTX.
float host_tanh(float x) { return std::tanh(x); }

/// tanh by the GPU's approximate instruction (relative error under 2^-10.98).
template <int BLOCK>
void fast_tanh(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto y = kl::inline_asm_elementwise<kl::f32>("tanh.approx.f32 $0, $1;", "=f,f",
                                               kl::asm_args(kl::load(x + offsets, mask)), host_tanh);
  kl::store(out + offsets, y, mask);
}
// [/book:fast_tanh]

// [book:for_arch]
/// The GPU code generator's output for `arch` ("sm_80" or "sm_90a") for the
/// kernel as kl::compile returns it, before a launch specialises it (as
/// `kiln dump --arch` compiles the library's kernels).
template <class Kernel>
kl::lowering::GpuKernel for_arch(const Kernel& kernel, const std::string& arch) {
  kl::lowering::GpuTarget target;
  target.arch = arch;
  target.num_warps = kernel.program().options().num_warps;
  return kl::lowering::compile_for_gpu(kernel.ir(), target);
}
// [/book:for_arch]

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The lines at which two PTX modules differ, side by side.
void print_differences(const std::string& sm80, const std::string& sm90a) {
  const std::vector<std::string> a = lines_of(sm80), b = lines_of(sm90a);
  int differing = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string left = i < a.size() ? a[i] : "", right = i < b.size() ? b[i] : "";
    if (left == right) continue;
    ++differing;
    std::printf("  line %zu: sm_80 `%s`, sm_90a `%s`\n", i + 1, left.c_str(), right.c_str());
  }
  std::printf("  %d of %zu lines differ\n", differing, b.size());
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

int failures = 0;

int main() {
  auto scale_kernel = kl::compile<scale<1024>>();
  std::printf("scale<1024>, PTX for sm_80 against sm_90a:\n");
  print_differences(for_arch(scale_kernel, "sm_80").ptx, for_arch(scale_kernel, "sm_90a").ptx);

  // [book:instructions]
  auto matmul_kernel = kl::compile<matmul<64, 64, 32>>();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const std::string ptx = for_arch(matmul_kernel, arch).ptx;
    std::printf("matmul<64, 64, 32> for %s: mma.sync %s, wgmma %s\n", arch,
                yes_no(ptx.find("mma.sync.aligned") != std::string::npos),
                yes_no(ptx.find("wgmma") != std::string::npos));
  }
  // [/book:instructions]

  // [book:shared_limit]
  auto small = kl::compile<transpose<128>>();
  auto large = kl::compile<transpose<256>>();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    std::printf("transpose<128> for %s: %d bytes of shared memory\n", arch, for_arch(small, arch).shared_bytes);
    try {
      for_arch(large, arch);
    } catch (const kl::lowering::LoweringError& e) {
      std::printf("transpose<256> for %s: %s\n", arch, e.what());
    }
  }
  // [/book:shared_limit]

  std::printf("emu compiles for: %s\n", kl::runtime::emu_machine().cpu.c_str());
  // [book:same_bits]
  constexpr int n = 10000;
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = uniform(random);
  std::vector<std::vector<float>> results;
  for (const kl::Device& device : {kl::Device::cpu(), kl::Device::emu()}) {
    auto x_buffer = kl::Buffer<float>::from(x, device);
    kl::Buffer<float> out(n, device);
    scale_kernel.launch(kl::Grid(kl::cdiv(n, 1024)), x_buffer, out, n, 0.1f);
    results.push_back(out.to_host());
  }
  const bool same = std::memcmp(results[0].data(), results[1].data(), n * sizeof(float)) == 0;
  std::printf("scale<1024> on cpu and on emu: %s\n", same ? "the same bits" : "different bits");
  // [/book:same_bits]
  failures += !same;
  for (int i = 0; i < n; ++i) failures += results[0][i] != x[i] * 0.1f;

  // [book:fast_tanh_run]
  auto tanh_kernel = kl::compile<fast_tanh<1024>>();
  const std::string tanh_ptx = for_arch(tanh_kernel, "sm_90a").ptx;
  std::printf("fast_tanh<1024> for sm_90a: tanh.approx.f32 %s\n",
              yes_no(tanh_ptx.find("tanh.approx.f32") != std::string::npos));
  for (const kl::Device& device : {kl::Device::cpu(), kl::Device::emu()}) {
    auto x_buffer = kl::Buffer<float>::from(x, device);
    kl::Buffer<float> out(n, device);
    tanh_kernel.launch(kl::Grid(kl::cdiv(n, 1024)), x_buffer, out, n);
    const std::vector<float> y = out.to_host();
    int equal = 0;
    for (int i = 0; i < n; ++i) equal += y[i] == std::tanh(x[i]);
    std::printf("fast_tanh<1024> on %s: %d of %d elements are std::tanh's\n", device.name().c_str(), equal, n);
    failures += equal != n;
  }
  // [/book:fast_tanh_run]
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
