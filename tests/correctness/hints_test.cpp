// kl::multiple_of on the device under test (cpu here; emu and ptx in the
// reruns): the value is unchanged, so a kernel computes the same with and
// without it, and a promise that does not hold is a fault naming the kernel,
// the hint, its line and the first offending element, with the same message
// on cpu and emu (a GPU trusts hints and does not check them).
#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;

constexpr int kBlock = 64;

/// out[row, :n] = 2 * x[row, :n] for rows `stride` elements apart.
void double_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 stride, kl::i32 n) {
  auto cols = kl::arange<kBlock>();
  auto mask = cols < n;
  auto offsets = kl::program_id(0) * kl::multiple_of<8>(stride) + cols;
  kl::store(out + offsets, kl::load(x + offsets, mask) * 2.f, mask);
}

/// out[i] = x[starts[i]] for starts promised to be multiples of 4.
void gather_at_starts(kl::Ptr<kl::f32> x, kl::Ptr<kl::i32> starts, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<kBlock>();
  auto at = kl::multiple_of<4>(kl::load(starts + i));
  kl::store(out + i, kl::load(x + at));
}

/// out[:BLOCK] = x[offset:offset + BLOCK], through a pointer promised to be 16-byte aligned.
void copy_from_aligned(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 offset) {
  auto from = kl::multiple_of<16>(x + offset);
  auto i = kl::arange<kBlock>();
  kl::store(out + i, kl::load(from + i));
}

/// A GPU trusts hints: a false one there is not reported but makes vector
/// accesses at misaligned addresses, which would end the CUDA context.
#define KILN_SKIP_WHERE_HINTS_ARE_TRUSTED()                          \
  if (kl::Device::default_device().kind() == kl::Device::Kind::cuda) \
  GTEST_SKIP() << "a GPU trusts hints and does not check them"

class Hints : public ::testing::TestWithParam<int> {};

// 37 columns: masked, scalar accesses; 32 (specialised as a multiple of 16):
// with the hint on the stride, 4-float vectors on the GPU.
TEST_P(Hints, RowsAtAHintedStrideAreUnchanged) {
  const int rows = 3, stride = 40, n = GetParam();
  const std::vector<float> x = kiln::test::random_values<float>(rows * stride, 21);
  const std::vector<float> before = kiln::test::random_values<float>(rows * stride, 22);
  kl::Buffer<float> out = kiln::test::to_buffer(before);
  kl::compile<double_rows>().launch(kl::Grid(rows), kiln::test::to_buffer(x), out, stride, n);
  std::vector<float> want = before;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c) want[r * stride + c] = 2 * x[r * stride + c];
  kiln::test::expect_equal(out.to_host(), want, "2 x");
}
INSTANTIATE_TEST_SUITE_P(Columns, Hints, ::testing::Values(37, 32));

TEST(Hints, GatherAtHintedStartsIsUnchanged) {
  const std::vector<float> x = kiln::test::random_values<float>(4 * kBlock, 23);
  std::vector<std::int32_t> starts(kBlock);
  const std::vector<float> picks = kiln::test::random_values<float>(kBlock, 24, 0, kBlock);
  for (int i = 0; i < kBlock; ++i) starts[i] = 4 * static_cast<std::int32_t>(picks[i]);
  kl::Buffer<float> out(kBlock);
  kl::compile<gather_at_starts>().launch(kl::Grid(1), kiln::test::to_buffer(x), kiln::test::to_buffer(starts), out);
  std::vector<float> want(kBlock);
  for (int i = 0; i < kBlock; ++i) want[i] = x[starts[i]];
  kiln::test::expect_equal(out.to_host(), want, "x[starts]");
}

TEST(Hints, AlignedPointerIsUnchanged) {
  const std::vector<float> x = kiln::test::random_values<float>(2 * kBlock, 25);
  kl::Buffer<float> out(kBlock);
  kl::compile<copy_from_aligned>().launch(kl::Grid(1), kiln::test::to_buffer(x), out, 8);
  kiln::test::expect_equal(out.to_host(), std::vector<float>(x.begin() + 8, x.begin() + 8 + kBlock), "x[8:]");
}

TEST(Hints, ScalarThatIsNoMultipleIsAFault) {
  KILN_SKIP_WHERE_HINTS_ARE_TRUSTED();
  const std::vector<float> x = kiln::test::random_values<float>(2 * kBlock, 26);
  kl::Buffer<float> out(2 * kBlock);
  const auto kernel = kl::compile<double_rows>();
  const std::string fault =
      kiln::test::kernel_error([&] { kernel.launch(kl::Grid(1), kiln::test::to_buffer(x), out, kBlock + 4, kBlock); });
  EXPECT_EQ(fault, "kernel " + kernel.ir().name + ": multiple_of(8) does not hold at hints_test.cpp:26: the value is " +
                       std::to_string(kBlock + 4) + " (program (0, 0, 0))");
}

TEST(Hints, TileElementThatIsNoMultipleIsAFault) {
  KILN_SKIP_WHERE_HINTS_ARE_TRUSTED();
  const std::vector<float> x = kiln::test::random_values<float>(4 * kBlock, 27);
  std::vector<std::int32_t> starts(kBlock);
  for (int i = 0; i < kBlock; ++i) starts[i] = 4 * ((i * 7) % kBlock);
  starts[5] = 42;
  kl::Buffer<float> out(kBlock);
  const auto kernel = kl::compile<gather_at_starts>();
  const std::string fault = kiln::test::kernel_error(
      [&] { kernel.launch(kl::Grid(1), kiln::test::to_buffer(x), kiln::test::to_buffer(starts), out); });
  EXPECT_EQ(fault, "kernel " + kernel.ir().name +
                       ": multiple_of(4) does not hold at hints_test.cpp:33: element 5 is 42 (program (0, 0, 0))");
}

TEST(Hints, MisalignedPointerIsAFaultShowingTheAddress) {
  KILN_SKIP_WHERE_HINTS_ARE_TRUSTED();
  const std::vector<float> x = kiln::test::random_values<float>(2 * kBlock, 28);
  kl::Buffer<float> out(kBlock);
  const auto kernel = kl::compile<copy_from_aligned>();
  const std::string fault =
      kiln::test::kernel_error([&] { kernel.launch(kl::Grid(1), kiln::test::to_buffer(x), out, 3); });
  const std::regex want(
      "kernel .+: multiple_of\\(16\\) does not hold at hints_test\\.cpp:39: the value is "
      "0x[0-9a-f]+c \\(program \\(0, 0, 0\\)\\)");
  EXPECT_TRUE(std::regex_match(fault, want)) << fault;
}

}  // namespace
