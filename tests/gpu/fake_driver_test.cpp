// The `cuda` device end to end against tests/gpu/fake_libcuda.cpp, which
// KILN_LIBCUDA names for this binary: a GPU whose memory is host memory and
// whose launches are recorded, not run. Checks the device choice, zero-filled
// buffers, the module kiln loads (PTX, or a cubin when ptxas is found), the
// launch's grid, block and parameter bytes, and event timing.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
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

}  // namespace
