// The `cuda` device without a GPU (the toolkit's stub libcuda, whose every
// call fails): one-line errors from device names, KILN_DEVICE, buffers and
// launches; ptxas found and run; launch timers; and a kernel on a real GPU
// where there is one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/runtime/cuda/driver.hpp"
#include "kiln/runtime/cuda/launch_timer.hpp"
#include "kiln/runtime/cuda/ptxas.hpp"
#include "scoped_environment.hpp"

namespace {

namespace kl = kiln;

constexpr const char* stub_library = "/usr/local/cuda/lib64/stubs/libcuda.so";
constexpr const char* stub_reason = "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)";

using kiln::test::ScopedEnvironment;

/// Points the process's driver at the stub library for one test.
class StubDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(stub_library)) GTEST_SKIP() << "no CUDA toolkit stub library at " << stub_library;
    // The process keeps a driver it loaded once: on a GPU machine an earlier
    // test may have loaded the real one.
    if (kl::cuda::probe().available) GTEST_SKIP() << "this process already uses a working CUDA driver";
  }
  ScopedEnvironment library{"KILN_LIBCUDA", stub_library};
};

template <int BLOCK>
void add_one(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) + 1.0f, mask);
}

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(no exception)";
}

TEST(CudaDevice, NamesAndOrdinals) {
  EXPECT_EQ(kl::Device::cuda().name(), "cuda");
  EXPECT_EQ(kl::Device::cuda(2).name(), "cuda:2");
  EXPECT_EQ(kl::Device::cuda(2).ordinal(), 2);
  EXPECT_EQ(kl::Device::cuda(2).threads(), 0);
  EXPECT_EQ(kl::Device::cpu(3).ordinal(), 0);
  EXPECT_THROW(kl::Device::from_name("cuda:x"), std::invalid_argument);
  EXPECT_THROW(kl::Device::from_name("cuda:-1"), std::invalid_argument);
}

TEST_F(StubDriver, CudaByNameIsUnavailableWithTheDriversReason) {
  EXPECT_EQ(message_of([] { kl::Device::from_name("cuda"); }),
            std::string("device 'cuda' is unavailable: ") + stub_reason + " (available here: cpu, emu)");
  EXPECT_EQ(message_of([] { kl::Device::from_name("cuda:1"); }),
            std::string("device 'cuda:1' is unavailable: ") + stub_reason + " (available here: cpu, emu)");
  EXPECT_EQ(kl::Device::available(), (std::vector<std::string>{"cpu", "emu"}));
}

TEST_F(StubDriver, KilnDeviceCudaNamesTheVariable) {
  ScopedEnvironment device("KILN_DEVICE", "cuda");
  EXPECT_EQ(
      message_of([] { kl::Device::default_device(); }),
      std::string("KILN_DEVICE=cuda: device 'cuda' is unavailable: ") + stub_reason + " (available here: cpu, emu)");
}

TEST_F(StubDriver, BufferOnCudaFailsWithTheDriversReason) {
  EXPECT_EQ(message_of([] { kl::Buffer<float> buffer(1000, kl::Device::cuda()); }),
            std::string("cannot allocate 4000 bytes on cuda: ") + stub_reason);
  try {
    kl::Buffer<float> buffer(4, kl::Device::cuda(1));
    FAIL() << "allocated on the stub driver";
  } catch (const kl::cuda::DriverError& error) {
    EXPECT_EQ(error.result(), kl::cuda::abi::CUDA_ERROR_STUB_LIBRARY);
  }
}

TEST_F(StubDriver, LaunchOnCudaFailsWithTheDriversReason) {
  auto x = kl::Buffer<float>::from(std::vector<float>{1, 2, 3}, kl::Device::cpu());
  kl::Buffer<float> out(3, kl::Device::cpu());
  const auto kernel = kl::compile<add_one<64>>();
  EXPECT_EQ(message_of([&] { kernel.launch_on(kl::Device::cuda(), kl::Grid(1), x, out, 3); }), stub_reason);
}

TEST(Ptxas, KilnPtxasChoosesOrDisablesIt) {
  {
    ScopedEnvironment ptxas("KILN_PTXAS", "none");
    EXPECT_FALSE(kl::cuda::find_ptxas());
  }
  {
    ScopedEnvironment ptxas("KILN_PTXAS", "/nonexistent/ptxas");
    EXPECT_EQ(message_of([] { kl::cuda::find_ptxas(); }),
              "ptxas: KILN_PTXAS names /nonexistent/ptxas, which does not exist");
  }
  ScopedEnvironment ptxas("KILN_PTXAS", "");
  if (std::filesystem::exists("/usr/local/cuda/bin/ptxas")) {
    EXPECT_EQ(kl::cuda::find_ptxas(), std::filesystem::path("/usr/local/cuda/bin/ptxas"));
  }
}

constexpr const char* empty_kernel_ptx = R"(.version 8.5
.target sm_90a
.address_size 64
.visible .entry empty_kernel()
{
  ret;
}
)";

TEST(Ptxas, AssemblesACubinForTheExactArchitecture) {
  const std::optional<std::filesystem::path> ptxas = kl::cuda::find_ptxas();
  if (!ptxas) GTEST_SKIP() << "no ptxas here";
  const std::string cubin = kl::cuda::assemble_cubin(*ptxas, empty_kernel_ptx, "sm_90a", "empty_kernel");
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(cubin.find("empty_kernel"), std::string::npos);
}

TEST(Ptxas, FailureIsOneLineNamingTheKernelAndArchitecture) {
  const std::optional<std::filesystem::path> ptxas = kl::cuda::find_ptxas();
  if (!ptxas) GTEST_SKIP() << "no ptxas here";
  std::string broken = empty_kernel_ptx;
  broken.replace(broken.find("ret;"), 4, "frobnicate;");
  const std::string message = message_of([&] { kl::cuda::assemble_cubin(*ptxas, broken, "sm_90a", "broken<64>"); });
  EXPECT_TRUE(message.starts_with("ptxas " + ptxas->string() + " failed on kernel `broken<64>` for sm_90a (exit "))
      << message;
  EXPECT_NE(message.find("frobnicate"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(LaunchTimer, InnermostTimerOfTheThreadCounts) {
  EXPECT_EQ(kl::cuda::LaunchTimer::active(), nullptr);
  kl::cuda::LaunchTimer outer;
  EXPECT_EQ(kl::cuda::LaunchTimer::active(), &outer);
  {
    kl::cuda::LaunchTimer inner;
    EXPECT_EQ(kl::cuda::LaunchTimer::active(), &inner);
    kl::cuda::LaunchTimer::active()->add_launch(0.25);
    kl::cuda::LaunchTimer::active()->add_launch(0.5);
    EXPECT_EQ(inner.launches(), 2);
    EXPECT_DOUBLE_EQ(inner.seconds(), 0.75);
  }
  EXPECT_EQ(kl::cuda::LaunchTimer::active(), &outer);
  EXPECT_EQ(outer.launches(), 0);
}

TEST(CudaGpu, KernelRunsAndIsTimedWithEvents) {
  const kl::cuda::ProbeResult found = kl::cuda::probe();
  if (!found.available) GTEST_SKIP() << "no GPU: " << found.message;
  const int n = 100003;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 977) * 0.5f - 100.0f;
  auto x = kl::Buffer<float>::from(host, kl::Device::cuda());
  kl::Buffer<float> out(n, kl::Device::cuda());
  EXPECT_EQ(out.to_host(), std::vector<float>(n, 0.0f)) << "new buffers are zero-filled";
  EXPECT_THROW(out.data(), std::logic_error);
  const auto kernel = kl::compile<add_one<1024>>();
  kl::cuda::LaunchTimer timer;
  kernel.launch(kl::Grid((n + 1023) / 1024), x, out, n);
  EXPECT_EQ(timer.launches(), 1);
  EXPECT_GT(timer.seconds(), 0.0);
  EXPECT_LT(timer.seconds(), 1.0);
  const std::vector<float> got = out.to_host();
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], host[i] + 1.0f) << "element " << i;
}

}  // namespace
