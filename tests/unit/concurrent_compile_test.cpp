// kl::compile and first launches from many host threads at once: the same
// kernel (traced once, one program for all) and different kernels (traced side
// by side), launched on the interpreter and on emu. scripts/sanitize.sh thread
// runs these under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace {

namespace kl = kiln;

constexpr int kThreads = 8;
constexpr int kElements = 1000;
constexpr int kBlock = 128;

template <int BLOCK, int FACTOR>
void scale_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) * static_cast<float>(FACTOR) + kl::load(y + offsets, mask),
            mask);
}

/// Runs body(0) … body(kThreads - 1) on as many threads, released together.
void run_together(const std::function<void(int)>& body) {
  std::atomic<bool> go = false;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      while (!go) std::this_thread::yield();
      body(t);
    });
  go = true;
  for (auto& thread : threads) thread.join();
}

std::vector<float> random_floats(unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-4.0f, 4.0f);
  std::vector<float> values(kElements);
  for (float& v : values) v = distribution(generator);
  return values;
}

/// Launches `kernel` on `device` with seeded inputs; checks out = x * factor + y
/// (a product and a sum: within two roundings of f32).
template <class Kernel>
void launch_and_check(const Kernel& kernel, int factor, const kl::Device& device, unsigned seed) {
  const std::vector<float> x = random_floats(seed), y = random_floats(seed + 1000);
  const auto x_buffer = kl::Buffer<float>::from(x, device);
  const auto y_buffer = kl::Buffer<float>::from(y, device);
  auto out = kl::Buffer<float>::from(std::vector<float>(kElements, std::nanf("")), device);
  kernel.launch(kl::Grid(kl::cdiv(kElements, kBlock)), x_buffer, y_buffer, out, kElements);
  const std::vector<float> result = out.to_host();
  for (int i = 0; i < kElements; ++i) {
    const double expected = static_cast<double>(x[i]) * factor + y[i];
    const double tolerance = 2 * std::numeric_limits<float>::epsilon() * (std::abs(x[i] * factor) + std::abs(y[i]));
    ASSERT_NEAR(result[i], expected, tolerance) << device.name() << ", factor " << factor << ", element " << i;
  }
}

TEST(ConcurrentCompile, SameKernelIsTracedOnceAndSharedByEveryThread) {
  std::vector<std::shared_ptr<const kl::runtime::Program>> programs(kThreads);
  run_together([&](int t) {
    const auto kernel = kl::compile<scale_add<kBlock, -1>>();
    programs[t] = kernel.program_ptr();
    launch_and_check(kernel, -1, t % 2 == 0 ? kl::Device::cpu(2) : kl::Device::emu(2), 10 + t);
  });
  for (const auto& program : programs) EXPECT_EQ(program, programs[0]);
}

template <std::size_t... Factor>
void compile_different_kernels(std::index_sequence<Factor...>) {
  std::vector<std::function<void(const kl::Device&, unsigned)>> runs = {[](const kl::Device& device, unsigned seed) {
    launch_and_check(kl::compile<scale_add<kBlock, Factor + 1>>(), Factor + 1, device, seed);
  }...};
  run_together(
      [&](int t) { runs[static_cast<std::size_t>(t)](t % 2 == 0 ? kl::Device::cpu(2) : kl::Device::emu(2), 100 + t); });
}

TEST(ConcurrentCompile, DifferentKernelsAreTracedAndCompiledSideBySide) {
  compile_different_kernels(std::make_index_sequence<kThreads>());
}

}  // namespace
