// kl::autotune of kernels that take an arguments struct: launched with
// designated initialisers on cpu and emu; the key and reset_to_zero name
// fields (`.key<&Args<>::n>()`), whatever their position in the struct; a
// value that does not fit names its field.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
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

// The size comes first and the pointers after it: the key is field 0, the
// reset buffer field 2, not the positions a positional kernel would give.
template <class S = kl::traced>
struct AxpyArgs {
  kl::param<S, kl::i32> n;
  kl::param<S, kl::f32> alpha;
  kl::param<S, kl::Ptr<kl::f32>> x;
  kl::param<S, kl::Ptr<kl::f32>> out;
};

template <int BLOCK>
void axpy(AxpyArgs<> a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < a.n;
  auto x = kl::load(a.x + offsets, mask);
  kl::store(a.out + offsets, a.alpha * x + kl::load(a.out + offsets, mask), mask);
}

template <class S = kl::traced>
struct CountArgs {
  kl::param<S, kl::i32> n;
  kl::param<S, kl::i32> unused;
  kl::param<S, kl::Ptr<kl::i32>> count;
};

// Adds the number of elements each program covers to *count.
template <int BLOCK>
void count_elements(CountArgs<> a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  kl::atomic_add(a.count, kl::sum(kl::cast<kl::i32>(offsets < a.n)));
}

/// Launches `tuned` over n random elements on `device`; checks out = 0.5 x + y
/// (0.5 x is exact, so one rounding as the reference's).
template <class Tuned>
void launch_axpy_and_check(const Tuned& tuned, const kl::Device& device, int n) {
  const std::vector<float> x = random_floats(n, 11 + n), y = random_floats(n, 23 + n);
  const auto x_buffer = kl::Buffer<float>::from(x, device);
  auto out = kl::Buffer<float>::from(y, device);
  tuned.launch(grid_of_blocks(n), {.n = n, .alpha = 0.5f, .x = x_buffer, .out = out});
  const std::vector<float> got = out.to_host();
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 0.5f * x[i] + y[i]) << device.name() << ", element " << i;
}

TEST(AutotuneArgumentsStruct, FirstConfigurationLaunchesWithDesignatedInitialisersOnCpuAndEmu) {
  for (const kl::Device& device : {kl::Device::cpu(2), kl::Device::emu(2)}) {
    const auto tuned = kl::autotune(kl::config<axpy<128>>({.num_warps = 4}, Block{128}),
                                    kl::config<axpy<64>>({.num_warps = 2}, Block{64}));
    EXPECT_EQ(tuned.name(), "axpy");
    launch_axpy_and_check(tuned, device, 1000);
    const auto choice = tuned.choice({});
    ASSERT_TRUE(choice) << device.name();
    EXPECT_EQ(choice->index, 0u) << device.name();
    // The fields' names are the parameters' names in each configuration.
    for (const auto& c : tuned.compiled()) {
      ASSERT_TRUE(c.kernel) << c.description << ": " << c.error;
      EXPECT_EQ(kl::ir::parameter_label(c.kernel->program().traced(), 2), "'x'");
    }
  }
}

TEST(AutotuneArgumentsStruct, KeyNamesAFieldAndPruneDropsConfigurationsPerKey) {
  const auto tuned = kl::autotune(kl::config<axpy<256>>({}, Block{256}), kl::config<axpy<64>>({}, Block{64}))
                         .key<&AxpyArgs<>::n>()
                         .prune([](const Block& b, const kl::CompileOptions&, const kl::TuneKey& key) {
                           return b.size > key[0];  // a block wider than the whole array
                         });
  launch_axpy_and_check(tuned, kl::Device::cpu(2), 1000);
  launch_axpy_and_check(tuned, kl::Device::emu(2), 100);
  EXPECT_EQ(tuned.choice({1000})->index, 0u);
  EXPECT_EQ(tuned.choice({100})->index, 1u);
  EXPECT_EQ(tuned.choice({100})->skipped[0], "pruned for this key");
  EXPECT_FALSE(tuned.choice({500}));
}

TEST(AutotuneArgumentsStruct, ResetToZeroNamesAFieldAndZeroesItBeforeEveryTimedLaunch) {
  const fs::path cache = fs::temp_directory_path() / "kiln_autotune_struct_test_reset";
  fs::remove_all(cache);
  const kl::test::ScopedEnvironment cache_dir("KILN_CACHE_DIR", cache.c_str());
  const int n = 1000;
  kl::Buffer<std::int32_t> count(1, kl::Device::cpu(2));
  std::vector<std::int32_t> seen_before, seen_after;
  const kl::runtime::Measurement watching{
      "watching", [&, call = 0](const std::function<void()>& prepare, const std::function<void()>& launch) mutable {
        prepare();
        seen_before.push_back(count.to_host()[0]);
        launch();
        seen_after.push_back(count.to_host()[0]);
        return std::vector<double>{3.0, 1.0}.at(call++);
      }};
  const auto tuned =
      kl::autotune(kl::config<count_elements<64>>({}, Block{64}), kl::config<count_elements<128>>({}, Block{128}))
          .key<&CountArgs<>::n>()
          .reset_to_zero<&CountArgs<>::count>()
          .measure_with(watching);
  count.copy_from(std::vector<std::int32_t>{12345});
  tuned.launch(grid_of_blocks(n), {.n = n, .unused = 7, .count = count});
  EXPECT_EQ(seen_before, std::vector<std::int32_t>(2, 0));
  EXPECT_EQ(seen_after, std::vector<std::int32_t>(2, n));
  // Zeroed once more after measuring, then counted by the launch that followed.
  EXPECT_EQ(count.to_host()[0], n);
  EXPECT_EQ(tuned.choice({n})->index, 1u);
  fs::remove_all(cache);
}

TEST(AutotuneArgumentsStruct, AValueThatDoesNotFitNamesItsField) {
  const auto tuned = kl::autotune(kl::config<axpy<64>>({}, Block{64})).key<&AxpyArgs<>::n>();
  kl::Buffer<float> x(10, kl::Device::cpu(2)), out(10, kl::Device::cpu(2));
  try {
    tuned.launch(grid_of_blocks(10), {.n = std::int64_t{1} << 40, .alpha = 1.0f, .x = x, .out = out});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'n': the value 1099511627776 does not fit in i32"), std::string::npos) << message;
  }
}

}  // namespace
