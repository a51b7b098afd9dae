// kl::do_bench: how many calls it makes and in what order (prepare before
// every call), its statistics, its limits, and bad options named in one line.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kiln/kiln.hpp"

namespace {

namespace kl = kiln;

template <int BLOCK>
void increment(kl::Ptr<kl::i32> x, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(x + offsets, kl::load(x + offsets, mask) + 1, mask);
}

TEST(DoBench, PrepareRunsBeforeEveryCallAndTheTimedCallsFillTheBudget) {
  int calls = 0, prepared = 0;
  bool prepared_before_each = true;
  const auto sleep_2ms = [&] {
    prepared_before_each = prepared_before_each && prepared == calls + 1;
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  const kl::BenchResult result =
      kl::do_bench(kl::Device::cpu(1), sleep_2ms, {.warmup_ms = 10, .rep_ms = 20, .prepare = [&] { ++prepared; }});
  EXPECT_TRUE(prepared_before_each);
  EXPECT_EQ(prepared, calls);
  EXPECT_FALSE(result.gpu_time);
  // A call sleeps at least 2 ms, so 20 ms hold at most 10 of them.
  ASSERT_GE(result.ms.size(), 1u);
  EXPECT_LE(result.ms.size(), 10u);
  for (double ms : result.ms) EXPECT_GE(ms, 2.0);
  // One first call, five estimating calls, warm-up calls (at least one), then the timed ones.
  EXPECT_GE(calls, 1 + 5 + 1 + static_cast<int>(result.ms.size()));
}

TEST(DoBench, QuickCallsAreTimedAtMostMaxRepeatsTimes) {
  int calls = 0;
  // Budgets no call fills: the counts are capped.
  const kl::BenchResult result = kl::do_bench(kl::Device::cpu(1), [&] { ++calls; }, {.warmup_ms = 1e9, .rep_ms = 1e9});
  EXPECT_EQ(result.ms.size(), static_cast<std::size_t>(kl::kMaxBenchRepeats));
  EXPECT_EQ(calls, 1 + 5 + 2 * kl::kMaxBenchRepeats);
}

TEST(DoBench, StatisticsInterpolateBetweenSortedTimes) {
  kl::BenchResult result;
  result.ms = {4.0, 1.0, 3.0, 2.0};
  EXPECT_DOUBLE_EQ(result.median_ms(), 2.5);
  EXPECT_DOUBLE_EQ(result.mean_ms(), 2.5);
  EXPECT_DOUBLE_EQ(result.min_ms(), 1.0);
  EXPECT_DOUBLE_EQ(result.max_ms(), 4.0);
  EXPECT_DOUBLE_EQ(result.quantile_ms(0.25), 1.75);
  EXPECT_DOUBLE_EQ(result.quantile_ms(0.8), 3.4);
}

TEST(DoBench, BadOptionsAndQuantilesAreNamed) {
  const auto nothing = [] {};
  try {
    kl::do_bench(kl::Device::cpu(1), nothing, {.warmup_ms = 0});
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "do_bench: BenchOptions::warmup_ms must be a positive, finite number of milliseconds, not 0.000000");
  }
  EXPECT_THROW(kl::do_bench(kl::Device::cpu(1), nothing, {.rep_ms = -1}), std::invalid_argument);
  kl::BenchResult result;
  EXPECT_THROW(result.median_ms(), std::invalid_argument);
  result.ms = {1.0};
  try {
    (void)result.quantile_ms(1.5);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "BenchResult::quantile_ms: q is 1.500000, outside [0, 1]");
  }
}

TEST(DoBench, TimesKernelLaunchesOnEmuAndEveryCallRan) {
  const kl::Device emu = kl::Device::emu(2);
  const int n = 1000;
  kl::Buffer<std::int32_t> x(n, emu);
  const auto kernel = kl::compile<increment<256>>();
  int calls = 0;
  const kl::BenchResult result =
      kl::do_bench(emu,
                   [&] {
                     ++calls;
                     kernel.launch(kl::Grid((n + 255) / 256), x, n);
                   },
                   {.warmup_ms = 1, .rep_ms = 5, .prepare = [&] { x.copy_from(std::vector<std::int32_t>(n, 41)); }});
  EXPECT_FALSE(result.gpu_time);
  EXPECT_GE(result.ms.size(), 1u);
  // prepare reset x before the last call, which added one.
  EXPECT_EQ(x.to_host(), std::vector<std::int32_t>(n, 42));
  EXPECT_GE(calls, 7);
}

}  // namespace
