// Chapter 26, "Common compile errors": the mistakes that compile and then
// fail when the program runs, each triggered on purpose and its one-line
// message printed: while tracing (kl::compile), at the launch, on the cpu
// device and on the emu device. The fixed kernel is checked against C++.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

int failures = 0;

// [book:total_wrong]
template <int BLOCK>
void total_wrong(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto acc = kl::zeros<kl::f32, BLOCK>();  // wrong: a plain value, assigned in the loop below
  for (auto start : kl::range(0, n, BLOCK)) {
    auto offsets = start + kl::arange<BLOCK>();
    acc = acc + kl::load(x + offsets, offsets < n);
  }
  kl::store(out, kl::sum(acc, kl::axis<0>));
}
// [/book:total_wrong]

// [book:total]
template <int BLOCK>
void total(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  kl::Var acc = kl::zeros<kl::f32, BLOCK>();  // carried from one iteration to the next
  for (auto start : kl::range(0, n, BLOCK)) {
    auto offsets = start + kl::arange<BLOCK>();
    acc = acc + kl::load(x + offsets, offsets < n);
  }
  kl::store(out, kl::sum(acc, kl::axis<0>));
}
// [/book:total]

// [book:relu_wrong]
template <int BLOCK>
void relu_wrong(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offsets = kl::arange<BLOCK>();
  auto v = kl::load(x + offsets);
  kl::if_(v < 0.0f, [&] { kl::store(out + offsets, 0.0f); });  // wrong: a tile condition; use kl::where
}
// [/book:relu_wrong]

// [book:scale_unmasked]
template <int BLOCK>
void scale_unmasked(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::f32 a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();  // wrong: no mask for the last block
  auto v = kl::load(x + offsets);
  kl::store(out + offsets, v * a);
}
// [/book:scale_unmasked]

// [book:store_past_end]
template <int BLOCK>
void shift_right(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets + 1, kl::load(x + offsets, mask), mask);  // wrong: out[n] is past the end
}
// [/book:store_past_end]

// [book:divide]
template <int BLOCK>
void bucket_of(kl::Ptr<kl::i32> x, kl::Ptr<kl::i32> width, kl::Ptr<kl::i32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto w = kl::load(width + offsets, mask);  // wrong: 0 where masked off, and x / 0 is a fault there too
  kl::store(out + offsets, kl::load(x + offsets, mask) / w, mask);
}
// [/book:divide]

// [book:rotate]
template <int BLOCK>
void rotate_in_place(kl::Ptr<kl::f32> x) {
  auto offsets = kl::arange<BLOCK>();
  auto v = kl::load(x + offsets);
  kl::store(x + (offsets + 1) % BLOCK, v);  // wrong: no kl::debug_barrier() between the load and the store
}
// [/book:rotate]

// [book:step]
template <int BLOCK>
void fill_strided(kl::Ptr<kl::f32> out, kl::i32 n, kl::i32 stride) {
  for (auto i : kl::range(0, n, stride)) kl::store(out + i + kl::arange<BLOCK>(), 1.0f);
}
// [/book:step]

// [book:big_tile]
template <int BLOCK>
void transpose_tile(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {  // out = x^T for one BLOCK x BLOCK matrix
  auto rows = kl::expand_dims<1>(kl::arange<BLOCK>());
  auto cols = kl::expand_dims<0>(kl::arange<BLOCK>());
  kl::store(out + rows * BLOCK + cols, kl::trans(kl::load(x + rows * BLOCK + cols)));
}
// [/book:big_tile]

// Prints `what`, then runs `run` and prints the type and message of the exception it throws ("no error" if
// none), without the directory of this file, which the emu's messages name and which differs between checkouts.
template <class Run>
void show(const std::string& what, Run run, bool expected = true) {
  std::printf("%s\n", what.c_str());
  std::fflush(stdout);  // before anything the kernel prints
  std::string error;
  try {
    run();
  } catch (const kl::TraceError& e) {
    error = std::string("kl::TraceError: ") + e.what();
  } catch (const kl::runtime::KernelError& e) {
    error = std::string("kl::runtime::KernelError: ") + e.what();
  } catch (const std::invalid_argument& e) {
    error = std::string("std::invalid_argument: ") + e.what();
  } catch (const std::exception& e) {
    error = std::string("std::exception: ") + e.what();
  }
  const std::string file = __FILE__, directory = file.substr(0, file.rfind('/') + 1);
  if (const auto at = error.find(directory); !directory.empty() && at != std::string::npos)
    error.erase(at, directory.size());
  std::printf("  %s\n", error.empty() ? "no error" : error.c_str());
  failures += error.empty() == expected;
}

int main() {
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const kl::Device cpu = kl::Device::cpu(), emu = kl::Device::emu();
  const int n = 1000;
  std::vector<float> values(n);
  for (float& v : values) v = uniform(random);

  // [book:trace]
  show("a plain value assigned in a kl::range loop", [] { kl::compile<total_wrong<64>>(); });
  show("kl::if_ on a tile", [] { kl::compile<relu_wrong<64>>(); });
  // [/book:trace]

  // [book:launch]
  auto x = kl::Buffer<float>::from(values);
  kl::Buffer<float> sum(1);
  const std::int64_t too_many = std::int64_t{1} << 32;
  show("an i64 count for an i32 parameter", [&] { kl::compile<total<64>>().launch(1, x, sum, too_many); });
  // [/book:launch]
  kl::compile<total<64>>().launch(1, x, sum, n);
  double want = 0;
  for (float v : values) want += v;
  // Any order of 1000 additions is within 1000 u of the sum of the magnitudes, at most 1000 here.
  failures += !(std::abs(sum.to_host()[0] - want) <= n * 6e-8 * n);

  // [book:bounds]
  for (const kl::Device& device : {cpu, emu}) {
    auto in = kl::Buffer<float>::from(values, device);
    kl::Buffer<float> out(n, device);
    show("a load without a mask, on " + device.name(),
         [&] { kl::compile<scale_unmasked<256>>().launch(kl::cdiv(n, 256), in, out, 2.0f); });
    show("a store one past the end, on " + device.name(),
         [&] { kl::compile<shift_right<256>>().launch(kl::cdiv(n, 256), in, out, n); });
  }
  // [/book:bounds]

  // [book:faults]
  const std::vector<int> counts(100, 7), widths(100, 3);  // no width is 0
  for (const kl::Device& device : {cpu, emu}) {
    auto x_int = kl::Buffer<int>::from(counts, device), width = kl::Buffer<int>::from(widths, device);
    kl::Buffer<int> buckets(100, device);
    show("an integer division by zero, on " + device.name(),
         [&] { kl::compile<bucket_of<64>>().launch(2, x_int, width, buckets, 100); });
  }
  auto ring = kl::Buffer<float>::from(std::vector<float>(values.begin(), values.begin() + 64), cpu);
  show("a tile rotated in place, on cpu", [&] { kl::compile<rotate_in_place<64>>().launch(1, ring); });
  for (const kl::Device& device : {cpu, emu}) {
    kl::Buffer<float> filled(n, device);
    show("a loop step of 0, on " + device.name(), [&] { kl::compile<fill_strided<64>>().launch(1, filled, 64, 0); });
  }
  // [/book:faults]

  // [book:warps]
  kl::CompileOptions three_warps;
  three_warps.num_warps = 3;
  show("num_warps = 3", [&] { kl::compile<total<64>>(three_warps); });
  for (const kl::Device& device : {cpu, emu}) {
    const bool gpu_code = device == emu;  // only the GPU code generator rejects it
    kl::Buffer<float> matrix(256 * 256, device), transposed(256 * 256, device);
    auto run_big_tile = [&] { kl::compile<transpose_tile<256>>().launch(1, matrix, transposed); };
    show("a 256 x 256 tile transposed, on " + device.name(), run_big_tile, gpu_code);
  }
  // [/book:warps]
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
