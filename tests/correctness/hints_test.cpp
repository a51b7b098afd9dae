// kl::multiple_of and kl::max_contiguous on the device under test (cpu here;
// emu and ptx in the reruns): the value is unchanged, so a kernel computes the
// same with and without them, and a promise that does not hold is a fault
// naming the kernel, the hint, its line and the first offending element, with
// the same message on cpu and emu (a GPU trusts hints and does not check them).
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

/// out[i] = x[at[i]] for offsets in runs of 4 consecutive integers, each
/// starting at a multiple of 4 (blocks of 4 floats picked at random).
void gather_runs(kl::Ptr<kl::f32> x, kl::Ptr<kl::i32> at, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<kBlock>();
  auto offsets = kl::multiple_of<4>(kl::max_contiguous<4>(kl::load(at + i)));
  kl::store(out + i, kl::load(x + offsets));
}

constexpr int kRows = 4, kColumns = 16;

/// The same over a 4 x 16 tile of u64 offsets in runs of 8 along each row,
/// starting anywhere.
void gather_row_runs(kl::Ptr<kl::f32> x, kl::Ptr<kl::u64> at, kl::Ptr<kl::f32> out) {
  auto i = kl::expand_dims<1>(kl::arange<kRows>()) * kColumns + kl::expand_dims<0>(kl::arange<kColumns>());
  auto offsets = kl::max_contiguous<8>(kl::load(at + i));
  kl::store(out + i, kl::load(x + offsets));
}

/// Offsets of `runs` runs of `length`, the r-th starting at `starts[r]`.
template <class T>
std::vector<T> runs_from(const std::vector<std::int64_t>& starts, int length) {
  std::vector<T> offsets;
  for (std::int64_t start : starts)
    for (int k = 0; k < length; ++k) offsets.push_back(static_cast<T>(start + k));
  return offsets;
}

/// `count` random integers in [0, limit) times `scale`.
std::vector<std::int64_t> random_starts(int count, int limit, std::int64_t scale, std::uint64_t seed) {
  const std::vector<float> picks = kiln::test::random_values<float>(static_cast<std::size_t>(count), seed, 0, limit);
  std::vector<std::int64_t> starts;
  for (float pick : picks) starts.push_back(scale * static_cast<std::int64_t>(pick));
  return starts;
}

template <class T>
std::vector<float> gathered(const std::vector<float>& x, const std::vector<T>& at) {
  std::vector<float> picked;
  for (T offset : at) picked.push_back(x[static_cast<std::size_t>(offset)]);
  return picked;
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

TEST(Hints, GatherOfHintedRunsIsUnchanged) {
  const std::vector<float> x = kiln::test::random_values<float>(8 * kBlock, 29);
  const std::vector<std::int32_t> at = runs_from<std::int32_t>(random_starts(kBlock / 4, 2 * kBlock, 4, 30), 4);
  kl::Buffer<float> out(kBlock);
  kl::compile<gather_runs>().launch(kl::Grid(1), kiln::test::to_buffer(x), kiln::test::to_buffer(at), out);
  kiln::test::expect_equal(out.to_host(), gathered(x, at), "x[at]");
}

TEST(Hints, GatherOfUnalignedRowRunsIsUnchanged) {
  const std::vector<float> x = kiln::test::random_values<float>(4 * kBlock, 31);
  const std::vector<std::uint64_t> at =
      runs_from<std::uint64_t>(random_starts(kRows * kColumns / 8, 4 * kBlock - 8, 1, 32), 8);
  kl::Buffer<float> out(kRows * kColumns);
  kl::compile<gather_row_runs>().launch(kl::Grid(1), kiln::test::to_buffer(x), kiln::test::to_buffer(at), out);
  kiln::test::expect_equal(out.to_host(), gathered(x, at), "x[at]");
}

TEST(Hints, BrokenRunIsAFaultNamingBothElements) {
  KILN_SKIP_WHERE_HINTS_ARE_TRUSTED();
  const std::vector<float> x = kiln::test::random_values<float>(8 * kBlock, 33);
  std::vector<std::int32_t> at = runs_from<std::int32_t>(random_starts(kBlock / 4, 2 * kBlock, 4, 34), 4);
  at[22] += 1;  // element 21 + 2; element 23 continues from it
  at[23] += 1;
  kl::Buffer<float> out(kBlock);
  const auto kernel = kl::compile<gather_runs>();
  const std::string fault = kiln::test::kernel_error(
      [&] { kernel.launch(kl::Grid(1), kiln::test::to_buffer(x), kiln::test::to_buffer(at), out); });
  EXPECT_EQ(fault,
            "kernel " + kernel.ir().name + ": max_contiguous(4) does not hold at hints_test.cpp:48: element 22 is " +
                std::to_string(at[22]) + " but element 21 is " + std::to_string(at[21]) + " (program (0, 0, 0))");
}

TEST(Hints, RunStartingAtNoMultipleIsAFaultNamingItsFirstElement) {
  KILN_SKIP_WHERE_HINTS_ARE_TRUSTED();
  const std::vector<float> x = kiln::test::random_values<float>(8 * kBlock + 8, 35);
  std::vector<std::int64_t> starts = random_starts(kBlock / 4, 2 * kBlock, 4, 36);
  starts[3] += 2;  // elements 12..15: consecutive, the first no multiple of 4
  const std::vector<std::int32_t> at = runs_from<std::int32_t>(starts, 4);
  kl::Buffer<float> out(kBlock);
  const auto kernel = kl::compile<gather_runs>();
  const std::string fault = kiln::test::kernel_error(
      [&] { kernel.launch(kl::Grid(1), kiln::test::to_buffer(x), kiln::test::to_buffer(at), out); });
  EXPECT_EQ(fault, "kernel " + kernel.ir().name +
                       ": multiple_of(4) does not hold at hints_test.cpp:48: element 12 is " + std::to_string(at[12]) +
                       " (program (0, 0, 0))");
}

TEST(Hints, BrokenRowRunIsAFaultAtItsRowMajorIndex) {
  KILN_SKIP_WHERE_HINTS_ARE_TRUSTED();
  const std::vector<float> x = kiln::test::random_values<float>(4 * kBlock, 37);
  std::vector<std::uint64_t> at =
      runs_from<std::uint64_t>(random_starts(kRows * kColumns / 8, 4 * kBlock - 8, 1, 38), 8);
  for (int column = 13; column < 16; ++column) at[kColumns + column] -= 1;  // row 1: column 13 repeats 12
  kl::Buffer<float> out(kRows * kColumns);
  const auto kernel = kl::compile<gather_row_runs>();
  const std::string fault = kiln::test::kernel_error(
      [&] { kernel.launch(kl::Grid(1), kiln::test::to_buffer(x), kiln::test::to_buffer(at), out); });
  EXPECT_EQ(fault,
            "kernel " + kernel.ir().name + ": max_contiguous(8) does not hold at hints_test.cpp:58: element 29 is " +
                std::to_string(at[29]) + " but element 28 is " + std::to_string(at[28]) + " (program (0, 0, 0))");
}

}  // namespace
