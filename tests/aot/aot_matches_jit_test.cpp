// The kernels of aot_kernels.hpp compiled ahead of time (the generated
// aot_app_kernels library) give the same bits as the same kernels traced and
// JIT-compiled at run time, on cpu and on emu: the emu's object file is
// compiled by the JIT's target machine with its options (runtime/emu/jit.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "aot_app_kernels.hpp"
#include "aot_kernels.hpp"

namespace {

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-8.0f, 8.0f);
  std::vector<float> values(n);
  for (float& value : values) value = uniform(random);
  return values;
}

void expect_same_bits(const std::vector<float>& aot, const std::vector<float>& jit, const std::string& what) {
  ASSERT_EQ(aot.size(), jit.size());
  for (std::size_t i = 0; i < aot.size(); ++i)
    ASSERT_EQ(std::memcmp(&aot[i], &jit[i], sizeof(float)), 0)
        << what << ": element " << i << " is " << aot[i] << " ahead of time, " << jit[i] << " at run time";
}

class AotMatchesJit : public ::testing::TestWithParam<const char*> {};

TEST_P(AotMatchesJit, Silu) {
  const kiln::Device device = kiln::Device::from_name(GetParam());
  const int n = 1000;
  const std::vector<float> x = random_floats(n, 11);
  auto x_buffer = kiln::Buffer<float>::from(x, device);
  kiln::Buffer<float> aot(n, device), jit(n, device);
  kiln_kernels::silu::launch({(n + 127) / 128}, x_buffer, aot, n);
  kiln::compile<silu<128>>().launch({(n + 127) / 128}, x_buffer, jit, n);
  expect_same_bits(aot.to_host(), jit.to_host(), "silu");
}

TEST_P(AotMatchesJit, ScaleBias) {
  const kiln::Device device = kiln::Device::from_name(GetParam());
  const int n = 2048;
  const std::vector<float> x = random_floats(n, 12);
  auto x_buffer = kiln::Buffer<float>::from(x, device);
  kiln::Buffer<float> aot(n, device), jit(n, device);
  kiln_kernels::scale_bias::launch({n / 256}, x_buffer, aot, 1.25f, -0.5f, n);
  kiln::compile<scale_bias<256>>().launch({n / 256}, x_buffer, jit, 1.25f, -0.5f, n);
  expect_same_bits(aot.to_host(), jit.to_host(), "scale_bias");
}

INSTANTIATE_TEST_SUITE_P(Devices, AotMatchesJit, ::testing::Values("cpu", "emu"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
