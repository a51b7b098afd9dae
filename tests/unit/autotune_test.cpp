// kl::autotune without a GPU: on `cpu` and `emu` the first configuration that
// compiles and is not pruned launches; the shape key separates choices;
// pruning, reset_to_zero and the disk cache are checked through a stand-in
// measurement (measure_with), which exercises the measured path itself; the
// configurations compile on threads of their own, side by side; when none can
// run, one line names the kernel and every configuration's reason.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "autotune_support.hpp"
#include "kiln/kiln.hpp"
#include "scoped_environment.hpp"

namespace {

namespace kl = kiln;
namespace fs = std::filesystem;
using kl::test::Block;
using kl::test::grid_of_blocks;
using kl::test::random_floats;

template <int BLOCK>
void twice(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) * 2.0f, mask);
}

// Assigns to a plain value inside a runtime loop: the tracer rejects it, so
// this configuration does not compile.
template <int BLOCK>
void twice_rejected(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::arange<BLOCK>();
  auto doubled = kl::zeros<kl::f32, BLOCK>();
  for (auto start : kl::range(0, n, BLOCK)) {
    doubled = kl::load(x + start + offsets, start + offsets < n) * 2.0f;
    kl::store(out + start + offsets, doubled, start + offsets < n);
  }
}

// Adds the number of elements each program covers to *count: one launch
// counts n, whatever the block.
template <int BLOCK>
void count_elements(kl::Ptr<kl::i32> count, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  kl::atomic_add(count, kl::sum(kl::cast<kl::i32>(offsets < n)));
}

/// Launches `tuned` on `device` over n random elements; checks out = 2 x (exact in f32).
template <class Tuned>
void launch_twice_and_check(const Tuned& tuned, const kl::Device& device, int n) {
  const std::vector<float> x = random_floats(n, 7 + n);
  const auto x_buffer = kl::Buffer<float>::from(x, device);
  kl::Buffer<float> out(n, device);
  tuned.launch(grid_of_blocks(n), x_buffer, out, n);
  const std::vector<float> got = out.to_host();
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.0f * x[i]) << device.name() << ", element " << i;
}

/// A stand-in timer: the i-th measured configuration takes times[i] seconds;
/// counts its calls.
struct ScriptedTimes {
  std::vector<double> times;
  std::shared_ptr<int> calls = std::make_shared<int>(0);

  kl::runtime::Measurement measurement() const {
    return {"scripted",
            [times = times, calls = calls](const std::function<void()>& prepare, const std::function<void()>& launch) {
              prepare();
              launch();
              return times.at((*calls)++ % times.size());
            }};
  }
};

TEST(Autotune, FirstConfigurationThatCompilesLaunchesOnCpuAndEmu) {
  for (const kl::Device& device : {kl::Device::cpu(2), kl::Device::emu(2)}) {
    const auto tuned = kl::autotune(kl::config<twice_rejected<64>>({.num_warps = 2}, Block{64}),
                                    kl::config<twice<128>>({.num_warps = 4}, Block{128}),
                                    kl::config<twice<64>>({.num_warps = 2}, Block{64}));
    EXPECT_EQ(tuned.name(), "twice_rejected");
    launch_twice_and_check(tuned, device, 1000);
    const auto choice = tuned.choice({});
    ASSERT_TRUE(choice) << device.name();
    EXPECT_EQ(choice->index, 1u) << device.name();
    EXPECT_NE(choice->skipped[0].find("does not compile: kernel twice_rejected: assignment inside a runtime loop"),
              std::string::npos)
        << choice->skipped[0];
    for (const auto& seconds : choice->seconds) EXPECT_FALSE(seconds) << "nothing is timed on " << device.name();
  }
}

TEST(Autotune, KeySeparatesShapesAndPruneDropsConfigurations) {
  const auto tuned = kl::autotune(kl::config<twice<256>>({}, Block{256}), kl::config<twice<64>>({}, Block{64}))
                         .key<2>()
                         .prune([](const Block& b, const kl::CompileOptions&, const kl::TuneKey& key) {
                           return b.size > key[0];  // a block wider than the whole array
                         });
  launch_twice_and_check(tuned, kl::Device::cpu(2), 1000);
  launch_twice_and_check(tuned, kl::Device::cpu(2), 100);
  EXPECT_EQ(tuned.choice({1000})->index, 0u);
  EXPECT_EQ(tuned.choice({100})->index, 1u);
  EXPECT_EQ(tuned.choice({100})->skipped[0], "pruned for this key");
  EXPECT_FALSE(tuned.choice({500}));
}

TEST(Autotune, KeyFunctionGroupsShapes) {
  const auto tuned = kl::autotune(kl::config<twice<64>>({}, Block{64})).key<2>([](kl::TuneKey key) {
    std::int64_t bucket = 1;
    while (bucket < key[0]) bucket *= 2;
    return kl::TuneKey{bucket};
  });
  launch_twice_and_check(tuned, kl::Device::cpu(2), 100);
  launch_twice_and_check(tuned, kl::Device::cpu(2), 120);
  EXPECT_TRUE(tuned.choice({128}));
  EXPECT_FALSE(tuned.choice({100}));
}

TEST(Autotune, MeasuredChoiceIsTheFastestAndResetToZeroZeroesBeforeEveryTimedLaunch) {
  const fs::path cache = fs::temp_directory_path() / "kiln_autotune_test_reset";
  fs::remove_all(cache);
  const kl::test::ScopedEnvironment cache_dir("KILN_CACHE_DIR", cache.c_str());
  const int n = 1000;
  kl::Buffer<std::int32_t> count(1, kl::Device::cpu(2));
  std::vector<std::int32_t> seen_before, seen_after;
  const kl::runtime::Measurement watching{
      "watching", [&, call = 0](const std::function<void()>& prepare, const std::function<void()>& launch) mutable {
        double seconds = 0;
        for (int repeat = 0; repeat < 3; ++repeat) {
          prepare();
          seen_before.push_back(count.to_host()[0]);
          launch();
          seen_after.push_back(count.to_host()[0]);
          seconds += std::vector<double>{3.0, 1.0, 2.0}.at(call);
        }
        ++call;
        return seconds;
      }};
  const auto tuned =
      kl::autotune(kl::config<count_elements<64>>({}, Block{64}), kl::config<count_elements<128>>({}, Block{128}),
                   kl::config<count_elements<256>>({}, Block{256}))
          .reset_to_zero<0>()
          .measure_with(watching);
  count.copy_from(std::vector<std::int32_t>{12345});
  tuned.launch(grid_of_blocks(n), count, n);
  EXPECT_EQ(seen_before, std::vector<std::int32_t>(9, 0));
  EXPECT_EQ(seen_after, std::vector<std::int32_t>(9, n));
  // Zeroed once more after measuring, then counted by the launch that followed.
  EXPECT_EQ(count.to_host()[0], n);
  const auto choice = tuned.choice({});
  EXPECT_EQ(choice->index, 1u);
  EXPECT_EQ(choice->seconds, (std::vector<std::optional<double>>{9.0, 3.0, 6.0}));
  // The choice is made once: a second launch only launches.
  tuned.launch(grid_of_blocks(n), count, n);
  EXPECT_EQ(seen_before.size(), 9u);
  EXPECT_EQ(count.to_host()[0], 2 * n);
  fs::remove_all(cache);
}

TEST(Autotune, MeasuredChoicesAreKeptOnDiskAndReadBackByAnotherTuner) {
  const fs::path cache = fs::temp_directory_path() / "kiln_autotune_test_disk";
  fs::remove_all(cache);
  const kl::test::ScopedEnvironment cache_dir("KILN_CACHE_DIR", cache.c_str());
  const auto make = [](const ScriptedTimes& times) {
    return kl::autotune(kl::config<twice<64>>({}, Block{64}), kl::config<twice<128>>({}, Block{128}),
                        kl::config<twice<128>>({.num_warps = 8}, Block{128}))
        .key<2>()
        .measure_with(times.measurement());
  };
  const ScriptedTimes first_times{{2.0, 3.0, 1.0}};
  launch_twice_and_check(make(first_times), kl::Device::cpu(2), 300);
  EXPECT_EQ(*first_times.calls, 3);
  std::size_t entries = 0;
  for (const auto& entry : fs::recursive_directory_iterator(cache / "autotune")) entries += entry.is_regular_file();
  EXPECT_EQ(entries, 1u);

  // Another tuner (as a second process would be) reads the choice back.
  const ScriptedTimes second_times{{1.0, 1.0, 1.0}};
  const auto second = make(second_times);
  launch_twice_and_check(second, kl::Device::cpu(2), 300);
  EXPECT_EQ(*second_times.calls, 0);
  EXPECT_EQ(second.choice({300})->index, 2u);
  EXPECT_EQ(second.choice({300})->seconds[0], 2.0);
  // A new key is measured.
  launch_twice_and_check(second, kl::Device::cpu(2), 301);
  EXPECT_EQ(*second_times.calls, 3);
  EXPECT_EQ(second.choice({301})->index, 0u);
  fs::remove_all(cache);
}

// Configurations whose tracing waits, up to 20 s, until every one of them is
// being traced: they finish together only when traced in parallel.
std::atomic<int> tracing_now = 0;
constexpr int kRendezvous = 3;

template <int BLOCK>
void twice_after_rendezvous(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  ++tracing_now;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (tracing_now < kRendezvous && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  if (tracing_now < kRendezvous) throw std::runtime_error("traced alone");
  twice<BLOCK>(x, out, n);
}

TEST(Autotune, ConfigurationsCompileInParallel) {
  const auto tuned = kl::autotune(kl::config<twice_after_rendezvous<64>>({}, Block{64}),
                                  kl::config<twice_after_rendezvous<128>>({}, Block{128}),
                                  kl::config<twice_after_rendezvous<128>>({.num_stages = 1}, Block{128}));
  const auto& compiled = tuned.compiled();
  ASSERT_EQ(compiled.size(), 3u);
  std::set<std::thread::id> threads;
  for (const auto& c : compiled) {
    EXPECT_TRUE(c.kernel) << c.description << ": " << c.error;
    threads.insert(c.thread);
  }
  EXPECT_EQ(threads.size(), 3u);
  EXPECT_FALSE(threads.count(std::this_thread::get_id()));
  EXPECT_EQ(compiled[2].description, "twice_after_rendezvous<128> num_warps=4 num_stages=1");
  launch_twice_and_check(tuned, kl::Device::cpu(2), 200);
}

TEST(Autotune, RegisterCapIsPartOfTheConfiguration) {
  const auto tuned =
      kl::autotune(kl::config<twice<64>>({}, Block{64}), kl::config<twice<64>>({.max_registers = 128}, Block{64}));
  const auto& compiled = tuned.compiled();
  ASSERT_EQ(compiled.size(), 2u);
  EXPECT_EQ(compiled[0].description, "twice<64> num_warps=4 num_stages=3");
  EXPECT_EQ(compiled[1].description, "twice<64> num_warps=4 num_stages=3 max_registers=128");
  ASSERT_TRUE(compiled[0].kernel && compiled[1].kernel);
  EXPECT_EQ(compiled[0].kernel->program().options().max_registers, 0);
  EXPECT_EQ(compiled[1].kernel->program().options().max_registers, 128);
  EXPECT_NE(compiled[0].kernel->program_ptr(), compiled[1].kernel->program_ptr());
  launch_twice_and_check(tuned, kl::Device::cpu(2), 200);
}

TEST(Autotune, WhenNoConfigurationCanRunOneLineNamesEachReason) {
  const auto tuned =
      kl::autotune(kl::config<twice_rejected<64>>({}, Block{64}), kl::config<twice<128>>({}, Block{128}))
          .key<2>()
          .prune([](const Block& b, const kl::CompileOptions&, const kl::TuneKey&) { return b.size == 128; });
  kl::Buffer<float> x(10, kl::Device::cpu(2)), out(10, kl::Device::cpu(2));
  try {
    tuned.launch(grid_of_blocks(10), x, out, 10);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(
        message.starts_with("autotune twice_rejected: no configuration can run for key (10) on cpu: "
                            "twice_rejected<64> num_warps=4 num_stages=3: does not compile: kernel "
                            "twice_rejected: assignment inside a runtime loop"))
        << message;
    EXPECT_TRUE(message.ends_with("; twice<128> num_warps=4 num_stages=3: pruned for this key")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Autotune, TimedLaunchesThatFailAreSkippedWithTheirReason) {
  const fs::path cache = fs::temp_directory_path() / "kiln_autotune_test_failing";
  fs::remove_all(cache);
  const kl::test::ScopedEnvironment cache_dir("KILN_CACHE_DIR", cache.c_str());
  const kl::runtime::Measurement failing_first{
      "failing first", [call = 0](const std::function<void()>& prepare, const std::function<void()>& launch) mutable {
        if (call++ == 0) throw std::runtime_error("launch failed: too much shared memory");
        prepare();
        launch();
        return 1.0;
      }};
  const auto tuned = kl::autotune(kl::config<twice<64>>({}, Block{64}), kl::config<twice<128>>({}, Block{128}))
                         .measure_with(failing_first);
  launch_twice_and_check(tuned, kl::Device::cpu(2), 100);
  EXPECT_EQ(tuned.choice({})->index, 1u);
  EXPECT_EQ(tuned.choice({})->skipped[0], "launch failed: too much shared memory");
  fs::remove_all(cache);
}

}  // namespace
