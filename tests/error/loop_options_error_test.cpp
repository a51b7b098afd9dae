// Bad kl::range options are refused while tracing with one line naming the
// option, its value and the loop's line, and a kernel's num_stages and
// num_warps outside their ranges by kl::compile; bad `num_stages` and `unroll`
// attributes on a `for` op are refused by the verifier (checked verbatim); an
// unrolled loop whose step never reaches hi faults as the loop itself does.
#include <gtest/gtest.h>

#include <string>

#include "error/kernel_error.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/kiln.hpp"

namespace loop_option_kernels {

namespace kl = kiln;

// The line of the loop each kernel expects to fail, recorded (with __LINE__
// on that same line) while the kernel is traced.
// clang-format off
int failing_line = 0;

template <int STAGES, int UNROLL>
void sum(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  kl::Var acc = kl::zeros<kl::f32, 16>();
  failing_line = __LINE__; for (auto k : kl::range(0, n, 16, {.num_stages = STAGES, .unroll = UNROLL}))
    acc += kl::load(x + k + kl::arange<16>());
  kl::store(out + kl::arange<16>(), acc);
}
// clang-format on

// Sums k = 0, step, 2 step, … below n; the step is a runtime value.
template <int UNROLL>
void count(kl::Ptr<kl::i32> out, kl::i32 n, kl::i32 step) {
  kl::Var total = kl::zeros<kl::i32, 16>();
  for (auto k : kl::range(0, n, step, {.unroll = UNROLL})) total += k;
  kl::store(out + kl::arange<16>(), total);
}

}  // namespace loop_option_kernels

namespace {

namespace kl = kiln;
using loop_option_kernels::failing_line;

using kiln::test::trace_error;

std::string at_line(int line) { return " (loop_options_error_test.cpp:" + std::to_string(line) + ")"; }

TEST(LoopOptionsError, NumStagesBelowOne) {
  const std::string got = trace_error<loop_option_kernels::sum<0, 1>>();
  EXPECT_EQ(got, "kernel sum: kl::range: num_stages must be at least 1 (1 turns pipelining off), got 0" +
                     at_line(failing_line));
}

// The kernel-wide options, checked by kl::compile on every device.
TEST(LoopOptionsError, KernelWideNumStagesAndNumWarps) {
  auto error_with = [](int num_stages, int num_warps) {
    kl::CompileOptions options;
    options.num_stages = num_stages;
    options.num_warps = num_warps;
    return trace_error<loop_option_kernels::sum<2, 1>>(options);
  };
  EXPECT_EQ(error_with(0, 4),
            "kernel sum: CompileOptions::num_stages must be at least 1 (1 turns pipelining off), got 0");
  for (int warps : {0, 3, 64})
    EXPECT_EQ(error_with(3, warps), "kernel sum: CompileOptions::num_warps must be a power of two from 1 to 32, got " +
                                        std::to_string(warps));
}

TEST(LoopOptionsError, UnrollOutOfRange) {
  const std::string zero = trace_error<loop_option_kernels::sum<2, 0>>();
  EXPECT_EQ(zero, "kernel sum: kl::range: unroll must be from 1 to 128, got 0" + at_line(failing_line));
  const std::string too_many = trace_error<loop_option_kernels::sum<2, 129>>();
  EXPECT_EQ(too_many, "kernel sum: kl::range: unroll must be from 1 to 128, got 129" + at_line(failing_line));
}

TEST(LoopOptionsError, AStepThatNeverReachesHiFaultsAsWithoutUnrolling) {
  kl::Buffer<int> out(16);
  auto fault = [&](auto kernel) { return kiln::test::kernel_error([&] { kernel.launch(1, out, 10, 0); }); };
  const std::string unrolled = fault(kl::compile<loop_option_kernels::count<4>>());
  EXPECT_NE(unrolled.find("has step 0, which never reaches 10 from 0"), std::string::npos) << unrolled;
  EXPECT_EQ(unrolled, fault(kl::compile<loop_option_kernels::count<1>>()));
}

std::string verify_error(const std::string& attributes, const std::string& bound_type = "i32") {
  const std::string text = "kernel @k(%0: " + bound_type + ", %1: f32) {\n  %2 = for %0, %0, %0, %1 " + attributes +
                           " : f32 loc(\"k.hpp\":7) {\n  ^(%3: " + bound_type +
                           ", %4: f32):\n    %5 = exp %4 : f32\n    yield %5\n  }\n}\n";
  try {
    kiln::ir::verify(*kiln::ir::parse_function(text));
  } catch (const kiln::ir::IRError& e) {
    return e.what();
  }
  return "<verified>";
}

TEST(LoopOptionsError, VerifierRefusesBadAttributes) {
  EXPECT_EQ(verify_error("{num_stages = 2, unroll = 4}"), "<verified>");
  EXPECT_EQ(verify_error("{num_stages = 0}"),
            "verify: for: attribute 'num_stages' must be at least 1, got 0 (k.hpp:7)");
  EXPECT_EQ(verify_error("{unroll = \"4\"}"), "verify: for: attribute 'unroll' must be an integer (k.hpp:7)");
  EXPECT_EQ(verify_error("{unroll = 200}"), "verify: for: attribute 'unroll' must be from 1 to 128, got 200 (k.hpp:7)");
  EXPECT_EQ(verify_error("{unroll = 2}", "i64"), "verify: for: an unrolled loop needs i32 bounds, %0 is i64 (k.hpp:7)");
}

}  // namespace
