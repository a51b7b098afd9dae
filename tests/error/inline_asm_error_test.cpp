// Mistakes with inline assembly give one line naming the thing, the place and
// the values (checked verbatim): constraint strings the verifier and the DSL
// reject (no output first, a count that does not match the operands, a class
// that does not fit a dtype, 8-bit values, a placeholder past the operands, a
// wrong key), two host references for one asm, and a kernel without a host
// reference on the cpu and emu devices.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "error/kernel_error.hpp"
#include "kiln/ir/inline_asm.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/kiln.hpp"

namespace {

namespace kl = kiln;

std::string verify_error(const std::string& text) {
  try {
    kiln::ir::verify(*kiln::ir::parse_function(text));
  } catch (const kiln::ir::IRError& e) {
    return e.what();
  }
  return "<verified>";
}

/// A kernel of one inline_asm of `operands` (their types in `arguments`)
/// giving `type`; the key computed for `dtypes` unless `key` is given.
std::string asm_kernel(const std::string& arguments, const std::string& operands, const std::string& text,
                       const std::string& constraints, kiln::ir::DType result,
                       const std::vector<kiln::ir::DType>& dtypes, const std::string& type, std::string key = "") {
  if (key.empty()) key = kiln::ir::inline_asm_key(text, constraints, result, dtypes);
  return "kernel @k(" + arguments + ") {\n  %9 = inline_asm " + operands + " {asm = \"" + text +
         "\", constraints = \"" + constraints + "\", pure = true, key = \"" + key + "\"} : " + type +
         " loc(\"kernels/fast.hpp\":7)\n}\n";
}

using kiln::ir::DType;

TEST(InlineAsmError, ConstraintsWithoutAnOutputFirst) {
  EXPECT_EQ(
      verify_error(asm_kernel("%0: f32", "%0", "tanh.approx.f32 $0, $1;", "f,=f", DType::f32, {DType::f32}, "f32")),
      "verify: inline_asm: constraints \"f,=f\" do not start with the result's output constraint ('=r') "
      "(fast.hpp:7)");
}

TEST(InlineAsmError, ConstraintCountDiffersFromTheOperands) {
  EXPECT_EQ(verify_error(asm_kernel("%0: tile<8xi32>, %1: tile<8xi32>", "%0, %1", "add.s32 $0, $1, $1;", "=r,r",
                                    DType::i32, {DType::i32, DType::i32}, "tile<8xi32>")),
            "verify: inline_asm: constraints \"=r,r\" name 1 input for 2 operands (fast.hpp:7)");
}

TEST(InlineAsmError, SecondOutputAndUnknownClass) {
  EXPECT_EQ(verify_error(asm_kernel("%0: i32", "%0", "mov.b32 $0, $1;", "=r,=r", DType::i32, {DType::i32}, "i32")),
            "verify: inline_asm: constraints \"=r,=r\" name a second output ('=r'); inline_asm has one result "
            "(fast.hpp:7)");
  EXPECT_EQ(verify_error(asm_kernel("%0: i32", "%0", "mov.b32 $0, $1;", "=r,x", DType::i32, {DType::i32}, "i32")),
            "verify: inline_asm: constraint 'x' does not fit operand 0 (i32): 'x' is not a register class (h, r, l, f "
            "or d) (fast.hpp:7)");
}

TEST(InlineAsmError, RegisterClassDoesNotFitTheDtype) {
  EXPECT_EQ(verify_error(asm_kernel("%0: f64", "%0", "neg.f64 $0, $1;", "=d,f", DType::f64, {DType::f64}, "f64")),
            "verify: inline_asm: constraint 'f' does not fit operand 0 (f64): 'f' holds f32 (fast.hpp:7)");
  EXPECT_EQ(verify_error(asm_kernel("%0: i32", "%0", "mov.b32 $0, $1;", "=h,r", DType::i32, {DType::i32}, "i32")),
            "verify: inline_asm: constraint '=h' does not fit the result (i32): 'h' holds 16-bit values (fast.hpp:7)");
}

TEST(InlineAsmError, EightBitValuesNeedPacking) {
  EXPECT_EQ(
      verify_error(asm_kernel("%0: tile<4xi8>", "%0", "mov.b16 $0, $1;", "=h,h", DType::i8, {DType::i8}, "tile<4xi8>")),
      "verify: inline_asm: the result is i8, which would need several values packed into one register (not "
      "supported yet) (fast.hpp:7)");
}

TEST(InlineAsmError, PlaceholderPastTheOperands) {
  EXPECT_EQ(verify_error(asm_kernel("%0: f32", "%0", "add.f32 $0, $1, $2;", "=f,f", DType::f32, {DType::f32}, "f32")),
            "verify: inline_asm: the asm text's $2 names no operand (the result is $0, the inputs $1 to $1) "
            "(fast.hpp:7)");
}

TEST(InlineAsmError, KeyThatDoesNotMatch) {
  EXPECT_EQ(verify_error(asm_kernel("%0: f32", "%0", "tanh.approx.f32 $0, $1;", "=f,f", DType::f32, {DType::f32}, "f32",
                                    "asm-0000000000000000")),
            "verify: inline_asm: attribute 'key' is \"asm-0000000000000000\", but the asm, constraints and dtypes give "
            "\"asm-545a5fdfafe74556\" (fast.hpp:7)");
}

// The line of the statement each kernel expects to fail, recorded (with
// __LINE__ on that same line) while the kernel is traced.
// clang-format off
int failing_line = 0;

float host_tanh(float x) { return x; }
float other_tanh(float x) { return -x; }

void miscounted(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<16>();
  failing_line = __LINE__; auto y = kl::inline_asm_elementwise<kl::f32>("add.f32 $0, $1, $1;", "=f,f,f", kl::asm_args(kl::load(x + i)), host_tanh);
  kl::store(out + i, y);
}

void tanh_with(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, float (*reference)(float)) {
  auto i = kl::arange<16>();
  failing_line = __LINE__; auto y = kl::inline_asm_elementwise<kl::f32>("tanh.approx.f32 $0, $1; // twice", "=f,f", kl::asm_args(kl::load(x + i)), reference);
  kl::store(out + i, y);
}
void tanh_by_host(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) { tanh_with(x, out, host_tanh); }
void tanh_by_other(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) { tanh_with(x, out, other_tanh); }

void tanh_on_gpu_only(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<16>();
  failing_line = __LINE__; auto y = kl::inline_asm_elementwise<kl::f32>("tanh.approx.f32 $0, $1;", "=f,f", kl::asm_args(kl::load(x + i)), kl::no_host_reference);
  kl::store(out + i, y);
}
// clang-format on

std::string here(int line) { return "inline_asm_error_test.cpp:" + std::to_string(line); }

TEST(InlineAsmError, TracedConstraintsNameTheKernelAndLine) {
  const std::string message = kiln::test::trace_error<miscounted>();
  EXPECT_EQ(message, "kernel miscounted: inline_asm_elementwise: constraints \"=f,f,f\" name 2 inputs for 1 operand (" +
                         here(failing_line) + ")");
}

TEST(InlineAsmError, SecondHostReferenceForOneAsm) {
  kl::compile<tanh_by_host>();
  const std::string message = kiln::test::trace_error<tanh_by_other>();
  const std::string key =
      kiln::ir::inline_asm_key("tanh.approx.f32 $0, $1; // twice", "=f,f", DType::f32, std::vector<DType>{DType::f32});
  EXPECT_EQ(message,
            "kernel tanh_by_other: inline_asm_elementwise: another host reference is already registered for "
            "this asm, constraints and dtypes (" +
                key + "); give one asm one reference (" + here(failing_line) + ")");
}

TEST(InlineAsmError, NoHostReferenceOnTheCpuAndEmuDevices) {
  const auto kernel = kl::compile<tanh_on_gpu_only>();
  const std::string suffix =
      " has no host reference (kl::no_host_reference), so it runs on the cuda device only, not on ";
  const std::string op = "kernel tanh_on_gpu_only: inline_asm at " + here(failing_line);
  const kl::Device cpu = kl::Device::cpu();
  kl::Buffer<float> x(16, cpu), out(16, cpu);
  EXPECT_EQ(kiln::test::invalid_argument_error([&] { kernel.launch_on(cpu, kl::Grid(1), x, out); }),
            op + suffix + "the cpu device");
  EXPECT_EQ(kiln::test::invalid_argument_error([&] { kernel.program().compile_for(kl::Device::emu()); }),
            op + suffix + "the emu device");
}

}  // namespace
