// Bounds errors of pointers that do not come straight from one argument, on
// cpu and emu with identical messages: a pointer loaded from memory that
// runs past the end of the live buffer it points into (named by its address,
// counted in the access's elements), and a pointer derived from one argument
// that reaches into another argument's buffer (an error on both devices: an
// access must stay inside the argument it derives from).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "kiln/kiln.hpp"

namespace pointer_kernels {

namespace kl = kiln;

// clang-format off
int loaded_line = 0, strayed_line = 0;

// Loads 64 f16 elements, unmasked, from the address in table[0].
void load_through_table(kl::Ptr<kl::i64> table, kl::Ptr<kl::f16> out) {
  auto x = kl::cast<kl::Ptr<kl::f16>>(kl::load(table));
  auto offs = kl::arange<64>();
  loaded_line = __LINE__; auto v = kl::load(x + offs);
  kl::store(out + offs, v);
}

// Copies 16 elements from x + shift: a shift that leaves x is an error even
// where the address falls inside another argument.
void load_shifted(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i64 shift) {
  auto offs = kl::arange<16>();
  strayed_line = __LINE__; auto v = kl::load(x + shift + offs);
  kl::store(out + offs, v);
}
// clang-format on

}  // namespace pointer_kernels

namespace {

namespace kl = kiln;
using kiln::test::kernel_error;

std::string at_line(int line) { return "pointer_error_test.cpp:" + std::to_string(line); }

std::string hex(std::uint64_t address) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

const std::vector<kl::Device> kDevices{kl::Device::cpu(), kl::Device::emu()};

TEST(PointerError, LoadedPointerPastTheEndNamesItsBufferInTheAccessElements) {
  const auto kernel = kl::compile<pointer_kernels::load_through_table>();
  for (const kl::Device& device : kDevices) {
    // 30 f16 elements: the load's elements 30..63 lie past its end.
    const auto data = kl::Buffer<kl::half>::from(std::vector<kl::half>(30, kl::half(1.5f)), device);
    const auto table = kl::Buffer<std::int64_t>::from({static_cast<std::int64_t>(data.address())}, device);
    kl::Buffer<kl::half> out(64, device);
    EXPECT_EQ(kernel_error([&] { kernel.launch(kl::Grid(1), table, out); }),
              "kernel load_through_table: load out of bounds at " + at_line(pointer_kernels::loaded_line) +
                  ": element offset 30 is past the end of the buffer at " + hex(data.address()) +
                  " (30 elements of f16)")
        << device.name();
  }
}

TEST(PointerError, LoadedPointerInsideALiveBufferRuns) {
  const auto kernel = kl::compile<pointer_kernels::load_through_table>();
  for (const kl::Device& device : kDevices) {
    std::vector<kl::half> values(80);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = kl::half(static_cast<float>(i) - 40.5f);
    const auto data = kl::Buffer<kl::half>::from(values, device);
    // Element 16 onwards: 64 elements inside the 80.
    const auto table = kl::Buffer<std::int64_t>::from({static_cast<std::int64_t>(data.address() + 32)}, device);
    kl::Buffer<kl::half> out(64, device);
    kernel.launch(kl::Grid(1), table, out);
    const std::vector<kl::half> got = out.to_host();
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(static_cast<float>(got[i]), static_cast<float>(values[i + 16])) << device.name() << " element " << i;
  }
}

TEST(PointerError, PointerFromOneArgumentMayNotReachIntoAnother) {
  const auto kernel = kl::compile<pointer_kernels::load_shifted>();
  for (const kl::Device& device : kDevices) {
    const auto x = kl::Buffer<float>::from(std::vector<float>(16, 2.0f), device);
    const auto other = kl::Buffer<float>::from(std::vector<float>(16, 3.0f), device);
    kl::Buffer<float> out(16, device);
    // x + shift is the start of `other`, 16-element aligned relative to x.
    const auto shift = (static_cast<std::int64_t>(other.address()) - static_cast<std::int64_t>(x.address())) /
                       static_cast<std::int64_t>(sizeof(float));
    const std::int64_t offset = shift;
    const std::string side = offset < 0 ? " is before the start of" : " is past the end of";
    EXPECT_EQ(kernel_error([&] { kernel.launch(kl::Grid(1), x, other, shift); }),
              "kernel load_shifted: load out of bounds at " + at_line(pointer_kernels::strayed_line) +
                  ": element offset " + std::to_string(offset) + side + " parameter 1 (Ptr<f32>) (16 elements of f32)")
        << device.name();
  }
}

}  // namespace
