// The `cuda` device end to end against tests/gpu/fake_libcuda.cpp, which
// KILN_LIBCUDA names for this binary: a GPU whose memory is host memory and
// whose launches are recorded, not run. Checks the device choice, zero-filled
// buffers, the module kiln loads (PTX, or a cubin when ptxas is found), the
// launch's grid, block, dynamic shared memory and parameter bytes, the opt-in
// to more than 48 KiB of it, what the compile cache keeps, event timing, and
// the message of a kernel stopped at a fault, read from its fault record.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "aot_app_kernels.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/kernels/registry.hpp"
#include "kiln/kiln.hpp"
#include "kiln/runtime/cache_flush.hpp"
#include "kiln/runtime/compile_cache.hpp"
#include "kiln/runtime/cuda/driver.hpp"
#include "kiln/runtime/cuda/launch_timer.hpp"
#include "kiln/runtime/cuda/ptxas.hpp"

namespace {

namespace kl = kiln;

/// The fake driver's record of events, from the library kiln loaded.
const std::vector<std::string>& events() {
  const char* library = std::getenv("KILN_LIBCUDA");
  void* handle = library ? dlopen(library, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  if (!handle) throw std::runtime_error("the fake CUDA driver is not loaded (KILN_LIBCUDA must name it)");
  using RecordFunction = const std::vector<std::string>* (*)();
  return *reinterpret_cast<RecordFunction>(dlsym(handle, "kiln_fake_cuda_record"))();
}

/// Sets the shared memory one block of the fake GPU may opt into.
void set_shared_memory_optin(int bytes) {
  void* handle = dlopen(std::getenv("KILN_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  using SetFunction = void (*)(int);
  reinterpret_cast<SetFunction>(dlsym(handle, "kiln_fake_cuda_set_shared_memory_optin"))(bytes);
}

/// Makes the fake GPU's next launch stop at a fault with `format` and `values`.
void fault_next_launch(const char* format, const std::int64_t (&values)[6]) {
  void* handle = dlopen(std::getenv("KILN_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  using FaultFunction = void (*)(const char*, const std::int64_t*);
  reinterpret_cast<FaultFunction>(dlsym(handle, "kiln_fake_cuda_fault_next_launch"))(format, values);
}

/// The events recorded since the first `from`.
std::vector<std::string> events_since(std::size_t from) {
  return std::vector<std::string>(events().begin() + static_cast<std::ptrdiff_t>(from), events().end());
}

/// This process's compile cache directory, a fresh one (set before the first
/// compile), so that a test can read back what the cuda device cached.
const std::filesystem::path& cache_directory() {
  static const std::filesystem::path directory = [] {
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("kiln_fake_gpu_cache_" + std::to_string(getpid()));
    std::filesystem::remove_all(path);
    setenv("KILN_CACHE_DIR", path.c_str(), 1);
    return path;
  }();
  return directory;
}

class CacheInATemporaryDirectory : public ::testing::Environment {
 public:
  void SetUp() override { cache_directory(); }
  void TearDown() override { std::filesystem::remove_all(cache_directory()); }
};
const ::testing::Environment* const cache_environment =
    ::testing::AddGlobalTestEnvironment(new CacheInATemporaryDirectory);

std::string last_event() { return events().empty() ? "(none)" : events().back(); }

bool has_event(const std::string& event) {
  for (const std::string& e : events())
    if (e == event) return true;
  return false;
}

template <int BLOCK>
void add_one(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) + 1.0f, mask);
}

// N values loaded as a row and as a column: one of the two reads a copy
// converted through shared memory, N i32 (256 bytes at N = 64).
template <int N>
void row_plus_column(kl::Ptr<kl::i32> out) {
  auto r = kl::arange<N>();
  auto v = kl::load(out + r);
  kl::store(out + (kl::expand_dims<1>(r) * N + kl::expand_dims<0>(r)), kl::expand_dims<0>(v) + kl::expand_dims<1>(v));
}

// x + trans(x) over one N x N f32 tile, which one of the two reads converts
// through shared memory: 64 KiB at N = 128.
template <int N>
void transpose_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offsets = kl::expand_dims<1>(kl::arange<N>()) * N + kl::expand_dims<0>(kl::arange<N>());
  auto tile = kl::load(x + offsets);
  kl::store(out + offsets, tile + kl::trans(tile));
}

template <int BLOCK>
void divide(kl::Ptr<kl::i32> x, kl::Ptr<kl::i32> out, kl::i32 divisor) {
  auto offsets = kl::arange<BLOCK>();
  kl::store(out + offsets, kl::load(x + offsets) / divisor);
}

class FakeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const kl::cuda::ProbeResult probe = kl::cuda::probe();
    if (!probe.available) GTEST_SKIP() << "the fake CUDA driver did not load: " << probe.message;
  }
};

TEST_F(FakeGpu, IsListedAndIsTheDefaultDevice) {
  EXPECT_EQ(kl::Device::available(), (std::vector<std::string>{"cpu", "emu", "cuda"}));
  EXPECT_EQ(kl::Device::default_device(), kl::Device::cuda());
  EXPECT_EQ(kl::Device::from_name("cuda:0"), kl::Device::cuda());
  try {
    kl::Device::from_name("cuda:1");
    FAIL() << "a second fake GPU";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "device 'cuda:1' is unavailable: cuda has 1 GPU (available here: cpu, emu, cuda)");
  }
}

TEST_F(FakeGpu, BuffersAreZeroFilledAndCopied) {
  kl::Buffer<float> zeros(1000, kl::Device::cuda());
  EXPECT_TRUE(has_event("memset 4000"));
  EXPECT_EQ(zeros.to_host(), std::vector<float>(1000, 0.0f));
  const std::vector<float> values = {1.5f, -2.0f, 3.25f};
  auto copied = kl::Buffer<float>::from(values, kl::Device::cuda());
  EXPECT_EQ(copied.to_host(), values);
  try {
    copied.data();
    FAIL() << "a host pointer to GPU memory";
  } catch (const std::logic_error& error) {
    EXPECT_STREQ(error.what(),
                 "Buffer::data: the buffer's 3 elements are in cuda memory, which the host cannot read; use to_host()");
  }
}

TEST_F(FakeGpu, LaunchPassesPointersAndScalarsAndTheBlockOfNumWarps) {
  setenv("KILN_PTXAS", "none", 1);  // PTX, whose .entry tells the fake the parameter sizes
  auto x = kl::Buffer<float>::from(std::vector<float>(100, 1.0f), kl::Device::cuda());
  kl::Buffer<float> out(100, kl::Device::cuda());
  kl::CompileOptions two_warps;
  two_warps.num_warps = 2;
  kl::compile<add_one<64>>(two_warps).launch(kl::Grid(2), x, out, 100);
  unsetenv("KILN_PTXAS");
  EXPECT_TRUE(has_event("load ptx"));
  const std::string expected = "launch [A-Za-z0-9_]+ grid 2x1x1 block 64 shared 0 params " +
                               std::to_string(x.range("x").begin) + ":8 " + std::to_string(out.range("out").begin) +
                               ":8 100:4";
  EXPECT_TRUE(std::regex_match(last_event(), std::regex(expected))) << last_event() << "\nexpected " << expected;
}

TEST_F(FakeGpu, LoadsACubinWhenPtxasIsFound) {
  if (!kl::cuda::find_ptxas()) GTEST_SKIP() << "no ptxas here";
  auto x = kl::Buffer<float>::from(std::vector<float>(10, 1.0f), kl::Device::cuda());
  kl::Buffer<float> out(10, kl::Device::cuda());
  kl::compile<add_one<128>>().launch(kl::Grid(1), x, out, 10);
  EXPECT_TRUE(has_event("load cubin"));
  EXPECT_TRUE(last_event().starts_with("launch ")) << last_event();
  EXPECT_NE(last_event().find(" grid 1x1x1 block 128 shared 0"), std::string::npos) << last_event();
}

TEST_F(FakeGpu, LaunchPassesTheKernelsDynamicSharedMemory) {
  setenv("KILN_PTXAS", "none", 1);
  kl::Buffer<std::int32_t> out(64 * 64, kl::Device::cuda());
  const std::size_t first = events().size();
  kl::compile<row_plus_column<64>>().launch(kl::Grid(1), out);
  unsetenv("KILN_PTXAS");
  const std::string expected =
      "launch [A-Za-z0-9_]+ grid 1x1x1 block 128 shared 256 params " + std::to_string(out.range("out").begin) + ":8";
  EXPECT_TRUE(std::regex_match(last_event(), std::regex(expected))) << last_event() << "\nexpected " << expected;
  for (const std::string& event : events_since(first))
    EXPECT_FALSE(event.starts_with("set attribute")) << "no opt-in under 48 KiB: " << event;
}

TEST_F(FakeGpu, AKernelAbove48KibOptsInOnceAfterLoading) {
  setenv("KILN_PTXAS", "none", 1);
  auto x = kl::Buffer<float>::from(std::vector<float>(128 * 128, 1.0f), kl::Device::cuda());
  kl::Buffer<float> out(128 * 128, kl::Device::cuda());
  kl::CompileOptions eight_warps;
  eight_warps.num_warps = 8;
  const auto kernel = kl::compile<transpose_add<128>>(eight_warps);
  const std::size_t first = events().size();
  kernel.launch(kl::Grid(1), x, out);
  kernel.launch(kl::Grid(2), x, out);
  unsetenv("KILN_PTXAS");
  const std::vector<std::string> recorded = events_since(first);
  ASSERT_EQ(recorded.size(), 4u) << ::testing::PrintToString(recorded);
  EXPECT_EQ(recorded[0], "load ptx");
  EXPECT_EQ(recorded[1], "set attribute transpose_add 8 = 65536");  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  const std::string params =
      " params " + std::to_string(x.range("x").begin) + ":8 " + std::to_string(out.range("out").begin) + ":8";
  EXPECT_EQ(recorded[2], "launch transpose_add grid 1x1x1 block 256 shared 65536" + params);
  EXPECT_EQ(recorded[3], "launch transpose_add grid 2x1x1 block 256 shared 65536" + params);
}

TEST_F(FakeGpu, AKernelAboveTheDevicesOptInLimitIsAnError) {
  setenv("KILN_PTXAS", "none", 1);
  set_shared_memory_optin(64 * 1024 - 16);
  auto x = kl::Buffer<float>::from(std::vector<float>(128 * 128, 1.0f), kl::Device::cuda());
  kl::Buffer<float> out(128 * 128, kl::Device::cuda());
  kl::CompileOptions eight_warps;
  eight_warps.num_warps = 8;
  std::string message;
  try {
    kl::compile<transpose_add<128>>(eight_warps).launch(kl::Grid(1), x, out);
  } catch (const std::exception& error) {
    message = error.what();
  }
  set_shared_memory_optin(227 * 1024);
  unsetenv("KILN_PTXAS");
  EXPECT_EQ(message,
            "cuda: kernel {anonymous}::transpose_add<128> needs 65536 bytes of shared memory per block, more than the "
            "65520 bytes cuda (Fake GPU) allows one block");
}

TEST_F(FakeGpu, TheCachedKernelKeepsItsSharedMemorySize) {
  setenv("KILN_PTXAS", "none", 1);
  auto x = kl::Buffer<float>::from(std::vector<float>(128 * 128, 1.0f), kl::Device::cuda());
  kl::Buffer<float> out(128 * 128, kl::Device::cuda());
  kl::CompileOptions unspecialised;  // the launch compiles the program itself, whose IR the key holds
  unspecialised.num_warps = 8;
  unspecialised.specialize = false;
  const auto kernel = kl::compile<transpose_add<128>>(unspecialised);
  kernel.launch(kl::Grid(1), x, out);
  unsetenv("KILN_PTXAS");
  // The entry on disk, read by a cache of its own: the entry name, the
  // dynamic shared memory, then the PTX.
  kl::runtime::CacheKey key;
  key.ir = kl::ir::print(kernel.program().traced(), {.locations = true});
  key.options = "passes num_stages=3 num_warps=8 max_registers=0 arguments_do_not_overlap=0";
  key.target = "ptx sm_90a";
  kl::runtime::CompileCache cache(cache_directory());
  const std::string payload = cache.get_or_compile(key, [] {
    ADD_FAILURE() << "the cuda device cached no entry for the kernel";
    return std::string();
  });
  EXPECT_EQ(cache.counters().disk_hits, 1u);
  EXPECT_TRUE(payload.starts_with("transpose_add\n65536\n")) << payload.substr(0, 200);
  EXPECT_NE(payload.find(".extern .shared .align 16 .b8 kiln_shared[];"), std::string::npos) << payload;
}

// The compile cache's key is the traced IR, so a launch whose kernel it
// holds (on disk, from another process, or in memory) runs no IR pass: two
// programs of one traced kernel, as two processes build them, log what their
// passes do; only the first one's launch compiles, and only its passes run.
// A third, for 8 warps, is not in the cache and runs them again.
TEST_F(FakeGpu, ALaunchOfAKernelTheCacheHoldsRunsNoIrPass) {
  setenv("KILN_PTXAS", "none", 1);
  auto x = kl::Buffer<float>::from(std::vector<float>(100, 1.0f), kl::Device::cuda());
  kl::Buffer<float> out(100, kl::Device::cuda());
  const auto traced = kl::compile<add_one<32>>();
  auto program_logging_passes = [&](std::ostringstream& log, int num_warps) {
    kl::runtime::ProgramOptions options;
    options.specialize = false;
    options.num_warps = num_warps;
    options.passes.emplace().timing = true;
    options.passes->log = &log;
    return std::make_shared<const kl::runtime::Program>(kl::ir::clone(traced.program().traced()), traced.name(),
                                                        options);
  };
  std::ostringstream first, second, third;
  kl::Kernel<kl::Ptr<kl::f32>, kl::Ptr<kl::f32>, kl::i32>(program_logging_passes(first, 4))
      .launch(kl::Grid(4), x, out, 100);
  const std::size_t from = events().size();
  kl::Kernel<kl::Ptr<kl::f32>, kl::Ptr<kl::f32>, kl::i32>(program_logging_passes(second, 4))
      .launch(kl::Grid(4), x, out, 100);
  kl::Kernel<kl::Ptr<kl::f32>, kl::Ptr<kl::f32>, kl::i32>(program_logging_passes(third, 8))
      .launch(kl::Grid(4), x, out, 100);
  unsetenv("KILN_PTXAS");
  EXPECT_NE(first.str().find("canonicalize"), std::string::npos) << first.str();
  EXPECT_EQ(second.str(), "");
  EXPECT_NE(third.str().find("canonicalize"), std::string::npos) << third.str();
  const std::vector<std::string> loads = events_since(from);
  EXPECT_EQ(std::count(loads.begin(), loads.end(), "load ptx"), 2) << "each program loads its module";
}

TEST_F(FakeGpu, LaunchTimerReadsTheEventsAroundEachLaunch) {
  setenv("KILN_PTXAS", "none", 1);
  auto x = kl::Buffer<float>::from(std::vector<float>(10, 1.0f), kl::Device::cuda());
  kl::Buffer<float> out(10, kl::Device::cuda());
  const auto kernel = kl::compile<add_one<64>>();
  kernel.launch(kl::Grid(1), x, out, 10);  // compiles outside the timer
  unsetenv("KILN_PTXAS");
  kl::cuda::LaunchTimer timer;
  kernel.launch(kl::Grid(1), x, out, 10);
  kernel.launch(kl::Grid(1), x, out, 10);
  EXPECT_EQ(timer.launches(), 2);
  EXPECT_DOUBLE_EQ(timer.seconds(), 2 * 0.25e-3);  // the fake's events are a quarter millisecond apart
}

TEST_F(FakeGpu, FlushCachesZeroesAQuarterGibibyteEachCallAllocatedOnce) {
  const std::size_t from = events().size();
  kl::runtime::flush_caches(kl::Device::cuda());
  kl::runtime::flush_caches(kl::Device::cuda());
  kl::runtime::flush_caches(kl::Device::cpu());
  const std::string bytes = std::to_string(kl::runtime::kCacheFlushBytes);
  int allocations = 0, memsets = 0;
  for (const std::string& event : events_since(from)) {
    allocations += event == "alloc " + bytes;
    memsets += event == "memset " + bytes;
  }
  // A fresh allocation is zero-filled once more when it is made.
  EXPECT_LE(allocations, 1);
  EXPECT_EQ(memsets, 2 + allocations);
}

TEST_F(FakeGpu, BenchmarksFlushTheCachesBeforeEveryTimedLaunch) {
  setenv("KILN_PTXAS", "none", 1);
  const kiln::kernels::KernelInfo& vector_add = kiln::kernels::find_kernel("vector_add");
  kiln::kernels::RunOptions options =
      kiln::kernels::make_options(vector_add, {{"n", "4096"}}, "f32", kl::Device::cuda());
  options.bench = true;
  const std::size_t from = events().size();
  const kiln::kernels::RunReport report = vector_add.run(options);
  unsetenv("KILN_PTXAS");
  ASSERT_TRUE(report.seconds);
  const std::string flush = "memset " + std::to_string(kl::runtime::kCacheFlushBytes);
  // The run's own launch and the warm-up, then each timed launch right after
  // a flush (the first flush's buffer is also zeroed when it is allocated).
  std::vector<std::string> launches_and_flushes;
  for (const std::string& event : events_since(from))
    if (event.starts_with("launch ") || event == flush) launches_and_flushes.push_back(event);
  ASSERT_GE(launches_and_flushes.size(), 2u);
  EXPECT_TRUE(launches_and_flushes[0].starts_with("launch ")) << launches_and_flushes[0];
  EXPECT_TRUE(launches_and_flushes[1].starts_with("launch ")) << launches_and_flushes[1];
  int timed = 0;
  for (std::size_t i = 2; i < launches_and_flushes.size(); ++i)
    if (launches_and_flushes[i].starts_with("launch ")) {
      ++timed;
      EXPECT_EQ(launches_and_flushes[i - 1], flush) << "the launch at event " << i << " follows no flush";
    }
  EXPECT_GE(timed, 3);
  EXPECT_EQ(launches_and_flushes.back().starts_with("launch "), true);
}

// A kernel compiled ahead of time (tests/aot) loads the image the build
// embedded for the GPU: the cubin for sm_90a when ptxas was there (as it is
// where it runs now), else the newest PTX, and launches with its num_warps.
TEST_F(FakeGpu, AnAheadOfTimeKernelLoadsItsEmbeddedImage) {
  auto x = kl::Buffer<float>::from(std::vector<float>(1024, 1.0f), kl::Device::cuda());
  kl::Buffer<float> out(1024, kl::Device::cuda());
  const std::size_t first = events().size();
  kiln_kernels::scale_bias::launch({4}, x, out, 2.0f, 1.0f, 1024);
  const std::vector<std::string> recorded = events_since(first);
  ASSERT_EQ(recorded.size(), 2u) << ::testing::PrintToString(recorded);
  const bool cubin = kl::cuda::find_ptxas().has_value();
  EXPECT_EQ(recorded[0], cubin ? "load cubin" : "load ptx");
  // The fake driver lists the parameters of a PTX image only (it reads their sizes from the PTX).
  const std::string parameters = " " + std::to_string(x.range("x").begin) + ":8 " +
                                 std::to_string(out.range("out").begin) + ":8 " +
                                 std::to_string(std::bit_cast<std::uint32_t>(2.0f)) + ":4 " +
                                 std::to_string(std::bit_cast<std::uint32_t>(1.0f)) + ":4 1024:4";
  EXPECT_EQ(recorded[1], "launch scale_bias grid 4x1x1 block 128 shared 0 params" + (cubin ? "" : parameters));
}

TEST_F(FakeGpu, AKernelStoppedAtAFaultIsReportedFromTheFaultRecord) {
  setenv("KILN_PTXAS", "none", 1);  // PTX, whose globals the fake reads
  const auto kernel = kl::compile<divide<128>>();
  auto x = kl::Buffer<std::int32_t>::from(std::vector<std::int32_t>(128, 7), kl::Device::cuda());
  kl::Buffer<std::int32_t> out(128, kl::Device::cuda());
  // The fake fills the record as the kernel's fault code would: the record's
  // address reached the module's kiln_fault_record global when it loaded.
  fault_next_launch(
      "kernel divide: integer division by zero in div at f.hpp:%d: 100%% of %d (program (%d, %d)) "
      "%d %u",
      {3, 128, 5, 0, -5000000000, -1});
  try {
    kernel.launch(kl::Grid(1), x, out, 0);
    FAIL() << "no fault";
  } catch (const kl::runtime::KernelError& error) {
    EXPECT_STREQ(error.what(),
                 "kernel divide: integer division by zero in div at f.hpp:3: 100% of 128 (program (5, 0)) "
                 "-5000000000 18446744073709551615");
  }
  // A kernel that cannot fault has no record; a failure is the driver's.
  const auto adding = kl::compile<add_one<64>>();
  kl::Buffer<float> y(100, kl::Device::cuda()), sum(100, kl::Device::cuda());
  fault_next_launch("unused", {});
  try {
    adding.launch(kl::Grid(2), y, sum, 100);
    FAIL() << "no error";
  } catch (const kl::cuda::DriverError& error) {
    EXPECT_NE(std::string(error.what()).find("cuStreamSynchronize failed: CUDA_ERROR_FAKE (715): running kernel"),
              std::string::npos)
        << error.what();
  }
  unsetenv("KILN_PTXAS");
  // The next launch starts from an empty record.
  kernel.launch(kl::Grid(1), x, out, 7);
}

}  // namespace
