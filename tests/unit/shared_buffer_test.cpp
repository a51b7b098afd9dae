// The shared-buffer ops (OPS.md, "Shared buffers") in the IR and on the cpu
// device: their types and text form, and each slot's copy → wait → barrier →
// read cycle, where every step skipped is an error naming the ops' lines
// rather than an answer no GPU gives.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "interpreter_samples.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/runtime/device.hpp"

namespace kiln::runtime {
namespace {

using interpreter_samples::buffer;
using interpreter_samples::compile;

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> out(n);
  for (float& v : out) v = std::uniform_real_distribution<float>(-4.0f, 4.0f)(rng);
  return out;
}

// x's 64 elements through slot `slot` of a two-slot ring into out; `steps` is
// what happens between the copy (line 20 of k.cpp) and the read (line 30).
std::string copy_kernel(const std::string& steps, int slot = 0) {
  return R"(kernel @through_ring(%x: ptr<f32>, %out: ptr<f32>) {
  %ring = local_alloc : shared<2x64xf32>
  %slot = constant {value = )" +
         std::to_string(slot) + R"(} : i32
  %o = arange {start = 0} : tile<64xi32>
  %xs = splat %x : tile<64xptr<f32>>
  %px = addptr %xs, %o : tile<64xptr<f32>>
  async_copy %ring, %slot, %px loc("k.cpp":20)
)" + steps +
         R"(
  %v = local_load %ring, %slot : tile<64xf32> loc("k.cpp":30)
  %os = splat %out : tile<64xptr<f32>>
  %po = addptr %os, %o : tile<64xptr<f32>>
  store %po, %v {cache = none, evict = none}
}
)";
}

/// The KernelError message of `text` run on 64 random elements, two programs.
std::string run_error(const std::string& text) {
  auto x = random_floats(64, 1);
  std::vector<float> out(64);
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out")};
  return test::kernel_error([&] { compile(text).launch({2, 1, 1}, args, 1); });
}

TEST(SharedBuffer, ACopyWaitedForAndBehindABarrierIsRead) {
  auto x = random_floats(64, 2);
  std::vector<float> out(64);
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out")};
  const LaunchStats stats =
      compile(copy_kernel("  async_commit\n  async_wait {pending = 0}\n  barrier")).launch({3, 1, 1}, args, 2);
  EXPECT_EQ(out, x);
  EXPECT_EQ(stats.bytes_read, 3 * 64 * sizeof(float));
}

TEST(SharedBuffer, ReadingBeforeTheWaitIsAnError) {
  const std::string error = run_error(copy_kernel("  async_commit\n  barrier"));
  EXPECT_NE(error.find("kernel through_ring: local_load at k.cpp:30 in program (0, 0, 0) reads slot 0 before an "
                       "async_wait completed the copy of async_copy at k.cpp:20 into it"),
            std::string::npos)
      << error;
}

TEST(SharedBuffer, AnUncommittedCopyIsNotWaitedFor) {
  const std::string error = run_error(copy_kernel("  async_wait {pending = 0}\n  barrier"));
  EXPECT_NE(error.find("before an async_wait completed"), std::string::npos) << error;
}

TEST(SharedBuffer, ReadingWithoutABarrierAfterTheWaitIsAnError) {
  const std::string error = run_error(copy_kernel("  async_commit\n  async_wait {pending = 0}"));
  EXPECT_NE(error.find("landed, with no barrier since to make it visible to the whole program"), std::string::npos)
      << error;
}

TEST(SharedBuffer, AWaitLeavesTheNewestGroupsPending) {
  // Two groups, into slots 0 and 1; waiting with one pending lands slot 0 only.
  const std::string text = R"(kernel @two_groups(%x: ptr<f32>, %out: ptr<f32>) {
  %ring = local_alloc : shared<2x64xf32>
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %o = arange {start = 0} : tile<64xi32>
  %xs = splat %x : tile<64xptr<f32>>
  %px = addptr %xs, %o : tile<64xptr<f32>>
  async_copy %ring, %zero, %px
  async_commit
  async_copy %ring, %one, %px
  async_commit
  async_wait {pending = 1}
  barrier
  %v = local_load %ring, %zero : tile<64xf32>
  %w = local_load %ring, %one : tile<64xf32> loc("k.cpp":15)
  %os = splat %out : tile<64xptr<f32>>
  %po = addptr %os, %o : tile<64xptr<f32>>
  store %po, %v {cache = none, evict = none}
  store %po, %w {cache = none, evict = none}
}
)";
  const std::string error = run_error(text);
  EXPECT_NE(error.find("local_load at k.cpp:15 in program (0, 0, 0) reads slot 1 before an async_wait"),
            std::string::npos)
      << error;
}

TEST(SharedBuffer, ASlotNeverWrittenIsAnError) {
  const std::string text = copy_kernel("  async_commit\n  async_wait {pending = 0}\n  barrier", 0);
  std::string other_slot = text;
  other_slot.replace(other_slot.find("local_load %ring, %slot"), 23, "local_load %ring, %one");
  other_slot.replace(other_slot.find("  %o = arange"), 0, "  %one = constant {value = 1} : i32\n");
  const std::string error = run_error(other_slot);
  EXPECT_NE(error.find("reads slot 1, which no async_copy has written"), std::string::npos) << error;
}

TEST(SharedBuffer, OverwritingASlotReadSinceTheLastBarrierIsAnError) {
  const std::string text = copy_kernel("  async_commit\n  async_wait {pending = 0}\n  barrier");
  std::string again = text;
  again.replace(again.find("  %os = splat"), 0, "  async_copy %ring, %slot, %px loc(\"k.cpp\":31)\n");
  const std::string error = run_error(again);
  EXPECT_NE(error.find("async_copy at k.cpp:31 in program (0, 0, 0) overwrites slot 0, which local_load at "
                       "k.cpp:30 read with no barrier between"),
            std::string::npos)
      << error;
}

TEST(SharedBuffer, CopyingIntoASlotWhoseCopyIsInFlightIsAnError) {
  const std::string error = run_error(copy_kernel("  async_copy %ring, %slot, %px loc(\"k.cpp\":21)\n  async_commit"));
  EXPECT_NE(error.find("async_copy at k.cpp:21 in program (0, 0, 0) copies into slot 0 while the copy of async_copy "
                       "at k.cpp:20 into it is in flight"),
            std::string::npos)
      << error;
}

TEST(SharedBuffer, ASlotOutsideTheRingIsAnError) {
  const std::string error = run_error(copy_kernel("  async_commit", 2));
  EXPECT_NE(error.find("async_copy at k.cpp:20 in program (0, 0, 0): slot 2 of a ring of 2"), std::string::npos)
      << error;
}

TEST(SharedBuffer, MaskedOffElementsLandAsZeroAndAreNotRead) {
  // x holds 40 elements: the copy's mask keeps it inside them.
  auto x = random_floats(40, 3);
  std::vector<float> out(64, 7.0f);
  std::string text = copy_kernel("  async_commit\n  async_wait {pending = 0}\n  barrier");
  text.replace(text.find("  async_copy %ring, %slot, %px"), 30,
               "  %n = constant {value = 40} : tile<64xi32>\n  %in = cmp %o, %n {pred = lt} : tile<64xi1>\n"
               "  async_copy %ring, %slot, %px, %in");
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out")};
  const LaunchStats stats = compile(text).launch({1, 1, 1}, args, 1);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(out[i], x[i]) << i;
  for (int i = 40; i < 64; ++i) EXPECT_EQ(out[i], 0.0f) << i;
  EXPECT_EQ(stats.bytes_read, 40 * sizeof(float));
}

TEST(SharedBuffer, ACopyPastTheEndIsABoundsError) {
  auto x = random_floats(40, 4);
  std::vector<float> out(64);
  const KernelArgument args[] = {buffer(x, "x"), buffer(out, "out")};
  const std::string error = test::kernel_error([&] {
    compile(copy_kernel("  async_commit\n  async_wait {pending = 0}\n  barrier")).launch({1, 1, 1}, args, 1);
  });
  EXPECT_NE(error.find("async_copy out of bounds at k.cpp:20: element offset 40 is past the end of 'x'"),
            std::string::npos)
      << error;
}

TEST(SharedBuffer, TheTextFormRoundTrips) {
  const std::string text = copy_kernel("  async_commit\n  async_wait {pending = 1}\n  barrier");
  auto fn = ir::parse_function(text, "test.kiln");
  ir::verify(*fn);
  const std::string printed = ir::print(*fn);
  EXPECT_NE(printed.find("local_alloc : shared<2x64xf32>"), std::string::npos) << printed;
  EXPECT_NE(printed.find("async_wait {pending = 1}"), std::string::npos) << printed;
  auto again = ir::parse_function(printed, "printed.kiln");
  ir::verify(*again);
  EXPECT_EQ(ir::print(*again), printed);
}

std::string verify_error(const std::string& text) {
  try {
    ir::verify(*ir::parse_function(text, "test.kiln"));
  } catch (const ir::IRError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SharedBuffer, TheVerifierKeepsBuffersToTheirOps) {
  const std::string head = "kernel @k(%x: ptr<f32>) {\n  %ring = local_alloc : shared<2x64xf32>\n";
  EXPECT_NE(verify_error(head + "  %s = constant {value = 0} : i32\n  %v = local_load %ring, %s : tile<32xf32>\n}\n")
                .find("verify: local_load: result must be tile<64xf32>"),
            std::string::npos);
  EXPECT_NE(verify_error(head + "  %v = add %ring, %ring : shared<2x64xf32>\n}\n")
                .find("operand 0 is a shared buffer, which only async_copy and local_load take"),
            std::string::npos);
  EXPECT_NE(verify_error(head + "  %s = constant {value = 0} : i64\n  %v = local_load %ring, %s : tile<64xf32>\n}\n")
                .find("the slot index must be i32"),
            std::string::npos);
  EXPECT_NE(verify_error("kernel @k(%x: ptr<f32>) {\n  %ring = local_alloc : shared<64xf32>\n}\n")
                .find("must be a shared buffer of slots"),
            std::string::npos);
  EXPECT_NE(verify_error(head + "  %s = constant {value = 0} : i32\n  %o = arange {start = 0} : tile<64xi32>\n"
                                "  %xs = splat %x : tile<64xptr<f32>>\n  %p = addptr %xs, %o : tile<64xptr<f32>>\n"
                                "  %h = cast %p : tile<64xptr<f16>>\n  async_copy %ring, %s, %h\n}\n")
                .find("the pointers must point to one slot's elements"),
            std::string::npos);
  EXPECT_NE(verify_error("kernel @k(%r: shared<2x64xf32>) {\n}\n").find("only local_alloc makes a shared buffer"),
            std::string::npos);
  EXPECT_NE(verify_error(head + "  async_wait {pending = -1}\n}\n").find("'pending' must be at least 0"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::runtime
