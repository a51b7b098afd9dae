// Mistakes in kernels written with the DSL, and bad launches, give one line
// naming the kernel, the problem and the source line (checked verbatim):
// assignments across runtime control flow, values escaping a loop, tile
// conditions, break out of kl::range, bad program_id axes, floating
// constants outside an integer type at trace time;
// out-of-bounds loads and failing device_asserts at run time; bad grids and
// out-of-range integer arguments at launch.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "kiln/kiln.hpp"

namespace error_kernels {

namespace kl = kiln;

// The line of the statement each kernel expects to fail, recorded (with
// __LINE__ on that same line) while the kernel is traced.
// Each failing statement stays on the line that records it:
// clang-format off
int failing_line = 0;

void assign_in_loop(kl::Ptr<kl::f32> out, kl::i32 n) {
  auto acc = kl::zeros<kl::f32, 16>();
  for (auto k : kl::range(0, n)) {
    failing_line = __LINE__; acc += kl::cast<kl::f32>(k);
  }
  kl::store(out + kl::arange<16>(), acc);
}

void assign_in_branch(kl::Ptr<kl::f32> out, kl::i32 n) {
  auto value = kl::f32(1.0f);
  kl::if_(n > 0, [&] { failing_line = __LINE__; value *= 2.0f; });
  kl::store(out, value);
}

void use_after_loop(kl::Ptr<kl::f32> out, kl::i32 n) {
  std::optional<kl::f32> inner;
  for (auto k : kl::range(0, n)) inner.emplace(kl::cast<kl::f32>(k));
  failing_line = __LINE__; kl::store(out, *inner);
}

void tile_condition_if(kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offs = kl::arange<16>();
  failing_line = __LINE__; kl::if_(offs < n, [&] { kl::store(out + offs, 1.0f); });
}

void tile_condition_while(kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offs = kl::arange<16>();
  failing_line = __LINE__; kl::while_([&] { return offs < n; }, [&] { kl::store(out + offs, 1.0f); });
}

void break_out_of_range(kl::Ptr<kl::f32> out, kl::i32 n) {
  failing_line = __LINE__; for (auto k : kl::range(0, n)) {
    kl::store(out + k, 1.0f);
    break;
  }
}

void program_id_axis_3(kl::Ptr<kl::i32> out) {
  failing_line = __LINE__; kl::store(out, kl::program_id(3));
}

// 9223372036854775807.0 is the double 2^63, one past INT64_MAX.
void full_past_i64(kl::Ptr<kl::i64> out) {
  failing_line = __LINE__; kl::store(out + kl::arange<4>(), kl::full<kl::i64, 4>(9223372036854775807.0));
}

// The lines of the kernels two tests compile: kl::compile traces a kernel
// once per process, so only the first compile would set failing_line.
int unmasked_load_line = 0;
int load_before_start_line = 0;

// 16 elements per program, no mask.
void unmasked_load(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offs = kl::program_id(0) * 16 + kl::arange<16>();
  unmasked_load_line = __LINE__; auto v = kl::load(x + offs);
  kl::store(out + offs, v);
}

void load_before_start(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offs = kl::arange<16>();
  load_before_start_line = __LINE__; auto v = kl::load(x + (offs - 3));
  kl::store(out + offs, v);
}

void positive_inputs(kl::Ptr<kl::f32> x, kl::i32 n) {
  auto offs = kl::program_id(0) * 16 + kl::arange<16>();
  auto v = kl::load(x + offs, offs < n, {.other = 1.0});
  failing_line = __LINE__; kl::device_assert(v > 0.0f, "inputs must be positive");
}

void fill(kl::Ptr<kl::f32> out, kl::i32 n) { kl::store(out + kl::arange<16>(), kl::cast<kl::f32>(n)); }

void fill_unsigned(kl::Ptr<kl::f32> out, kl::u32 n) { kl::store(out + kl::arange<16>(), kl::cast<kl::f32>(n)); }

// clang-format on
}  // namespace error_kernels

// Named kernels: their messages use these names; the others count their
// parameters from 1 and give the type.
KILN_PARAMETERS(error_kernels::unmasked_load, "x", "out");
KILN_PARAMETERS(error_kernels::fill, "out", "n");

namespace {

namespace kl = kiln;
using error_kernels::failing_line;
using kiln::test::invalid_argument_error;
using kiln::test::kernel_error;
using kiln::test::trace_error;

std::string at_line(int line) { return "dsl_error_test.cpp:" + std::to_string(line); }

const std::string kUseVar =
    "assignment inside a runtime loop or branch to a value declared outside it; declare it as kl::Var to carry it "
    "across iterations and branches";

TEST(TraceError, AssignmentToPlainValueInsideRange) {
  const std::string got = trace_error<error_kernels::assign_in_loop>();
  EXPECT_EQ(got, "kernel assign_in_loop: " + kUseVar + " (" + at_line(failing_line) + ")");
}

TEST(TraceError, AssignmentToPlainValueInsideIf) {
  const std::string got = trace_error<error_kernels::assign_in_branch>();
  EXPECT_EQ(got, "kernel assign_in_branch: " + kUseVar + " (" + at_line(failing_line) + ")");
}

TEST(TraceError, ValueFromInsideALoopUsedAfterIt) {
  const std::string got = trace_error<error_kernels::use_after_loop>();
  EXPECT_EQ(
      got,
      "kernel use_after_loop: store: uses a value computed inside a runtime loop or branch outside of it; declare "
      "the variable before the loop as kl::Var to carry it out (" +
          at_line(failing_line) + ")");
}

TEST(TraceError, TileConditionOfIf) {
  const std::string got = trace_error<error_kernels::tile_condition_if>();
  EXPECT_EQ(got,
            "kernel tile_condition_if: if_: the condition must be a scalar i1, got tile<16xi1>; reduce it first "
            "(e.g. kl::max of the mask) (" +
                at_line(failing_line) + ")");
}

TEST(TraceError, TileConditionOfWhile) {
  const std::string got = trace_error<error_kernels::tile_condition_while>();
  EXPECT_EQ(got,
            "kernel tile_condition_while: while_: the condition must be a scalar i1, got tile<16xi1>; reduce it "
            "first (e.g. kl::max of the mask) (" +
                at_line(failing_line) + ")");
}

TEST(TraceError, BreakOutOfRange) {
  const std::string got = trace_error<error_kernels::break_out_of_range>();
  EXPECT_EQ(got,
            "kernel break_out_of_range: the body of a kl::range loop was left early (break, return or goto); use "
            "kl::while_ for loops that stop early (" +
                at_line(failing_line) + ")");
}

TEST(TraceError, FloatingConstantPastTheRangeOfI64) {
  const std::string got = trace_error<error_kernels::full_past_i64>();
  EXPECT_EQ(got,
            "kernel full_past_i64: constant 9.2233720368547758e+18 is outside the range of i64 (a double holds "
            "integers exactly only up to 2^53: give an integer, such as INT64_MAX, for a wide one) (" +
                at_line(failing_line) + ")");
}

TEST(TraceError, ProgramIdAxis3) {
  const std::string got = trace_error<error_kernels::program_id_axis_3>();
  EXPECT_EQ(got, "kernel program_id_axis_3: program_id: axis must be 0, 1 or 2, got 3 (" + at_line(failing_line) + ")");
}

TEST(KernelError, UnmaskedLoadPastTheEnd) {
  const auto kernel = kl::compile<error_kernels::unmasked_load>();
  const int line = error_kernels::unmasked_load_line;
  // Program 1 reads elements 16..31 of a buffer of 20.
  auto x = kl::Buffer<float>::from(std::vector<float>(20, 1.5f));
  kl::Buffer<float> out(32);
  EXPECT_EQ(kernel_error([&] { kernel.launch(kl::Grid(2), x, out); }),
            "kernel unmasked_load: load out of bounds at " + at_line(line) +
                ": element offset 20 is past the end of 'x' (20 elements of f32)");
}

TEST(KernelError, UnmaskedLoadBeforeTheStart) {
  const auto kernel = kl::compile<error_kernels::load_before_start>();
  const int line = error_kernels::load_before_start_line;
  auto x = kl::Buffer<float>::from(std::vector<float>(16, 1.5f));
  kl::Buffer<float> out(16);
  EXPECT_EQ(kernel_error([&] { kernel.launch(kl::Grid(1), x, out); }),
            "kernel load_before_start: load out of bounds at " + at_line(line) +
                ": element offset -3 is before the start of parameter 1 (Ptr<f32>) (16 elements of f32)");
}

TEST(KernelError, EmuNamesTheSameLineElementAndParameterAsCpu) {
  // The emu runs the GPU code generator's output; its bounds check reads the
  // op's line from the access and reports in the buffer's elements, naming
  // the parameter as the cpu does (registered name, else number and type).
  const auto unmasked = kl::compile<error_kernels::unmasked_load>();
  const int unmasked_line = error_kernels::unmasked_load_line;
  const auto before_start = kl::compile<error_kernels::load_before_start>();
  const int before_start_line = error_kernels::load_before_start_line;
  for (const kl::Device device : {kl::Device::cpu(), kl::Device::emu()}) {
    auto x = kl::Buffer<float>::from(std::vector<float>(20, 1.5f), device);
    kl::Buffer<float> out(32, device);
    EXPECT_EQ(kernel_error([&] { unmasked.launch(kl::Grid(2), x, out); }),
              "kernel unmasked_load: load out of bounds at " + at_line(unmasked_line) +
                  ": element offset 20 is past the end of 'x' (20 elements of f32)")
        << device.name();
    auto y = kl::Buffer<float>::from(std::vector<float>(16, 1.5f), device);
    kl::Buffer<float> y_out(16, device);
    EXPECT_EQ(kernel_error([&] { before_start.launch(kl::Grid(1), y, y_out); }),
              "kernel load_before_start: load out of bounds at " + at_line(before_start_line) +
                  ": element offset -3 is before the start of parameter 1 (Ptr<f32>) (16 elements of f32)")
        << device.name();
  }
}

TEST(KernelError, FailingDeviceAssertNamesItsMessage) {
  const auto kernel = kl::compile<error_kernels::positive_inputs>();
  const int line = failing_line;
  std::vector<float> x(40, 2.0f);
  x[21] = -0.5f;  // program 1, element 5
  auto bx = kl::Buffer<float>::from(x);
  EXPECT_EQ(kernel_error([&] { kernel.launch(kl::Grid(3), bx, 40); }),
            "kernel positive_inputs: assert failed at " + at_line(line) +
                ": inputs must be positive (program (1, 0, 0), element 5)");
}

TEST(LaunchError, EmptyGrid) {
  const auto kernel = kl::compile<error_kernels::fill>();
  kl::Buffer<float> out(16);
  EXPECT_EQ(invalid_argument_error([&] { kernel.launch(kl::Grid(0), out, 3); }),
            "launch error_kernels::fill: grid dimensions must be positive, got (0, 1, 1)");
  EXPECT_EQ(invalid_argument_error([&] { kernel.launch(kl::Grid(2, 1, 0), out, 3); }),
            "launch error_kernels::fill: grid dimensions must be positive, got (2, 1, 0)");
}

TEST(LaunchError, IntegerArgumentOutOfRange) {
  kl::Buffer<float> out(16);
  EXPECT_EQ(invalid_argument_error(
                [&] { kl::compile<error_kernels::fill>().launch(kl::Grid(1), out, std::int64_t{1} << 33); }),
            "launch error_kernels::fill: 'n': the value 8589934592 does not fit in i32");
  EXPECT_EQ(invalid_argument_error([&] { kl::compile<error_kernels::fill_unsigned>().launch(kl::Grid(1), out, -1); }),
            "launch error_kernels::fill_unsigned: parameter 2 (u32): the value -1 does not fit in u32");
}

}  // namespace
