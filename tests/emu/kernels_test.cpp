// Kernels traced with the DSL, run through the GPU code generator on the emu
// device and compared with the cpu device (the interpreter): element-wise
// with masked tails and specialisation, softmax rows, reductions across warps,
// for and while loops, layout conversions through shared memory, launch
// statistics and the out-of-bounds error.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "correctness/test_support.hpp"
#include "emu_support.hpp"
#include "kiln/kernels/softmax.hpp"
#include "kiln/lowering/compile.hpp"

namespace {

namespace kl = kiln;
using kiln::Buffer;
using kiln::Device;
using kiln::test::expect_close;
using kiln::test::expect_equal;
using kiln::test::random_values;

template <class T>
Buffer<T> on(const Device& device, const std::vector<T>& host) {
  return Buffer<T>::from(host, device);
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& values) {
  return std::vector<double>(values.begin(), values.end());
}

template <int BLOCK>
void vector_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  kl::store(out + offs, kl::load(x + offs, mask) + kl::load(y + offs, mask), mask);
}

TEST(EmuKernels, VectorAddMatchesTheCpuWithAndWithoutSpecialisation) {
  const auto kernel = kl::compile<vector_add<256>>();
  for (int n : {1000, 4096, 1}) {
    const auto x = random_values<float>(n, 1), y = random_values<float>(n, 2);
    std::vector<float> results[2];
    kiln::runtime::LaunchStats stats[2];
    int i = 0;
    for (const Device& device : {Device::emu(), Device::cpu()}) {
      auto bx = on(device, x), by = on(device, y);
      Buffer<float> out(n, device);
      stats[i] = kernel.launch(kl::Grid(kl::cdiv(n, 256)), bx, by, out, n);
      results[i++] = out.to_host();
    }
    expect_equal(results[0], results[1], ("vector_add, n = " + std::to_string(n)).c_str());
    EXPECT_EQ(stats[0].bytes_read, stats[1].bytes_read) << "n = " << n;
    EXPECT_EQ(stats[0].bytes_written, stats[1].bytes_written) << "n = " << n;
  }
  EXPECT_GE(kernel.program().specialization_count(), 1u) << "n = 4096 and 16-byte aligned buffers specialise";
}

TEST(EmuKernels, SoftmaxRowsMatchTheCpu) {
  constexpr int kBlock = 256;
  const int rows = 6, cols = 1000;
  const auto x = random_values<float>(rows * cols, 3, -8, 8);
  const auto kernel = kl::compile<kiln::kernels::softmax<kl::f32, kBlock>>();
  std::vector<float> results[2];
  int i = 0;
  for (const Device& device : {Device::emu(), Device::cpu()}) {
    auto in = on(device, x);
    Buffer<float> out(x.size(), device);
    kernel.launch(kl::Grid(rows), in, out, cols, cols, cols);
    results[i++] = out.to_host();
  }
  // Both sum `cols` exponentials in f32 in different orders (a tree across
  // lanes and warps here, tile order there) and the emu's exp goes through
  // exp2: a relative error of at most (cols + a few roundings) units of 2^-24.
  expect_close(results[0], as_doubles(results[1]), (cols + 16) * 0x1p-24, "softmax rows");
}

// One program reduces a whole tile of 2048 elements spread over 8 warps.
template <int BLOCK>
void tile_reductions(kl::Ptr<kl::i32> values, kl::Ptr<kl::f32> reals, kl::Ptr<kl::i32> sums, kl::Ptr<kl::f32> maxima,
                     kl::i32 n) {
  auto p = kl::program_id(0);
  auto offs = p * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  kl::store(sums + p, kl::sum(kl::load(values + offs, mask, {.other = 0})));
  kl::store(maxima + p,
            kl::max(kl::load(reals + offs, mask, {.other = -std::numeric_limits<double>::infinity()}), kl::axis<0>));
}

TEST(EmuKernels, ReductionsAcrossWarpsAreExact) {
  constexpr int kBlock = 2048;
  const int n = 5000, programs = kl::cdiv(n, kBlock);
  const auto values = random_values<std::int32_t>(n, 4, -1000, 1000);
  const auto reals = random_values<float>(n, 5);
  kl::CompileOptions options;
  options.num_warps = 8;
  const auto kernel = kl::compile<tile_reductions<kBlock>>(options);
  std::vector<std::int32_t> sums[2];
  std::vector<float> maxima[2];
  int i = 0;
  for (const Device& device : {Device::emu(), Device::cpu()}) {
    auto bv = on(device, values);
    auto br = on(device, reals);
    Buffer<std::int32_t> s(programs, device);
    Buffer<float> m(programs, device);
    kernel.launch(kl::Grid(programs), bv, br, s, m, n);
    sums[i] = s.to_host();
    maxima[i++] = m.to_host();
  }
  expect_equal(sums[0], sums[1], "sum over 8 warps");
  expect_equal(maxima[0], maxima[1], "max over 8 warps");
}

// A runtime for loop summing a row in blocks, and a while loop counting Collatz steps.
template <int BLOCK>
void loops(kl::Ptr<kl::i32> x, kl::Ptr<kl::i32> totals, kl::Ptr<kl::i32> starts, kl::Ptr<kl::i32> steps, kl::i32 cols) {
  auto row = kl::program_id(0);
  kl::Var acc = kl::zeros<kl::i32, BLOCK>();
  for (auto k : kl::range(0, cols, BLOCK)) {
    auto offs = k + kl::arange<BLOCK>();
    acc = acc + kl::load(x + row * cols + offs, offs < cols, {.other = 0});
  }
  kl::store(totals + row, kl::sum(acc));
  kl::Var value = kl::load(starts + row);
  kl::Var count = kl::i32(0);
  kl::while_([&] { return value != 1; },
             [&] {
               value = kl::if_(value % 2 == 0, [&] { return value / 2; }, [&] { return value * 3 + 1; });
               count = count + 1;
             });
  kl::store(steps + row, count);
}

TEST(EmuKernels, ForAndWhileLoopsMatchTheCpu) {
  const int rows = 7, cols = 300;
  const auto x = random_values<std::int32_t>(rows * cols, 6, -100, 100);
  const auto starts = random_values<std::int32_t>(rows, 7, 1, 1000);
  const auto kernel = kl::compile<loops<128>>();
  std::vector<std::int32_t> totals[2], steps[2];
  int i = 0;
  for (const Device& device : {Device::emu(), Device::cpu()}) {
    auto bx = on(device, x), bs = on(device, starts);
    Buffer<std::int32_t> t(rows, device), s(rows, device);
    kernel.launch(kl::Grid(rows), bx, t, bs, s, cols);
    totals[i] = t.to_host();
    steps[i++] = s.to_host();
  }
  expect_equal(totals[0], totals[1], "for loop row sums");
  expect_equal(steps[0], steps[1], "while loop Collatz steps");
}

// The same arange as a row and as a column: one of the two expand_dims reads
// it in another layout, where code generation computes it again.
template <int N>
void row_plus_column(kl::Ptr<kl::i32> out) {
  auto r = kl::arange<N>();
  auto row = kl::expand_dims<0>(r);
  auto column = kl::expand_dims<1>(r);
  kl::store(out + (column * N + row), row * 1000 + column);
}

// The same with values loaded from `values`, which are no index arithmetic:
// one of the two expand_dims reads a copy converted through shared memory.
template <int N>
void loaded_row_plus_column(kl::Ptr<kl::i32> values, kl::Ptr<kl::i32> out) {
  auto v = kl::load(values + kl::arange<N>());
  auto row = kl::expand_dims<0>(v);
  auto column = kl::expand_dims<1>(v);
  auto r = kl::arange<N>();
  kl::store(out + (kl::expand_dims<1>(r) * N + kl::expand_dims<0>(r)), row * 1000 + column);
}

TEST(EmuKernels, AnArangeComputedAgainInAnotherLayoutMatchesTheCpu) {
  constexpr int kN = 64;
  const auto kernel = kl::compile<row_plus_column<kN>>();
  kiln::lowering::LoweringOptions options;
  options.stop_after = "codegen";
  const auto gpu = kiln::lowering::compile_for_gpu(kernel.program().optimized(), {.arch = "sm_80"}, options);
  ASSERT_EQ(gpu.shared_bytes, 0) << "the arange should be computed again, not converted";
  std::vector<std::int32_t> results[2];
  int i = 0;
  for (const Device& device : {Device::emu(), Device::cpu()}) {
    auto out = on(device, random_values<std::int32_t>(kN * kN, 8));
    kernel.launch(kl::Grid(1), out);
    results[i++] = out.to_host();
  }
  expect_equal(results[0], results[1], "row * 1000 + column");
}

TEST(EmuKernels, LayoutConversionThroughSharedMemoryMatchesTheCpu) {
  constexpr int kN = 64;
  const auto kernel = kl::compile<loaded_row_plus_column<kN>>();
  kiln::lowering::LoweringOptions options;
  options.stop_after = "codegen";
  const auto gpu = kiln::lowering::compile_for_gpu(kernel.program().optimized(), {.arch = "sm_80"}, options);
  ASSERT_EQ(gpu.shared_bytes, kN * 4) << "the conversion should use shared memory";
  const std::vector<std::int32_t> values = random_values<std::int32_t>(kN, 9);
  std::vector<std::int32_t> results[2];
  int i = 0;
  for (const Device& device : {Device::emu(), Device::cpu()}) {
    auto in = on(device, values);
    auto out = on(device, random_values<std::int32_t>(kN * kN, 8));
    kernel.launch(kl::Grid(1), in, out);
    results[i++] = out.to_host();
  }
  expect_equal(results[0], results[1], "v[column] * 1000 + v[row]");
}

// x + trans(x) over one N x N tile: one of the two reads of x is a copy of
// the whole tile converted through shared memory.
template <int N>
void transpose_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offsets = kl::expand_dims<1>(kl::arange<N>()) * N + kl::expand_dims<0>(kl::arange<N>());
  auto tile = kl::load(x + offsets);
  kl::store(out + offsets, tile + kl::trans(tile));
}

TEST(EmuKernels, SharedMemoryAbove48KibMatchesTheCpu) {
  constexpr int kN = 128;
  kl::CompileOptions eight_warps;
  eight_warps.num_warps = 8;
  const auto kernel = kl::compile<transpose_add<kN>>(eight_warps);
  kiln::lowering::LoweringOptions options;
  options.stop_after = "codegen";
  const auto gpu =
      kiln::lowering::compile_for_gpu(kernel.program().optimized(), {.arch = "sm_80", .num_warps = 8}, options);
  ASSERT_EQ(gpu.shared_bytes, kN * kN * 4) << "the 128x128 f32 tile through shared memory: 64 KiB";
  const std::vector<float> x = random_values<float>(kN * kN, 21);
  std::vector<float> results[2];
  int i = 0;
  for (const Device& device : {Device::emu(), Device::cpu()}) {
    auto bx = on(device, x);
    Buffer<float> out(kN * kN, device);
    kernel.launch(kl::Grid(1), bx, out);
    results[i++] = out.to_host();
  }
  expect_equal(results[0], results[1], "x + trans(x), 128x128 f32");
}

// Stores 32 elements into a buffer of 20, unmasked.
template <int BLOCK>
void store_past_the_end(kl::Ptr<kl::f32> out) {
  kl::store(out + kl::arange<BLOCK>(), kl::full<kl::f32, BLOCK>(1.0));
}

TEST(EmuKernels, AnUnmaskedStorePastTheEndIsTheCpuDevicesError) {
  const auto kernel = kl::compile<store_past_the_end<32>>();
  std::string messages[2];
  int i = 0;
  for (const Device& device : {Device::emu(), Device::cpu()}) {
    Buffer<float> out(20, device);
    messages[i++] = kiln::emu_test::kernel_error([&] { kernel.launch(kl::Grid(1), out); });
  }
  // The same message, the op's source line included (the emu reads it from the access's !kiln.place).
  EXPECT_EQ(messages[0], messages[1]);
  EXPECT_NE(messages[0].find("store out of bounds at kernels_test.cpp:"), std::string::npos) << messages[0];
}

}  // namespace
