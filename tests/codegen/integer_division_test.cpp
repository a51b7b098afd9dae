// Integer div and rem through the GPU code generator: no LLVM division ever
// sees a divisor of 0 or a signed -1 (whose results LLVM leaves undefined,
// and x86 traps on), the results for -1 are selected without dividing, a
// zero divisor fills the fault record with the interpreter's message and
// traps, calling no function, and the
// check costs a kernel that divides by a non-zero constant nothing.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "codegen/codegen_support.hpp"

namespace kiln::codegen_test {
namespace {

/// A kernel dividing a loaded tile of `dtype` by `divisor`, the line that
/// defines %6 (reading %10, the output buffer, or a constant), and storing
/// quotient plus remainder.
std::string divide_text(const std::string& dtype, const std::string& divisor) {
  std::string text = R"(kernel @divide(%0: ptr<$T> {divisibility = 16}, %1: ptr<$T> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<256xi32>
  %3 = splat %0 : tile<256xptr<$T>>
  %4 = addptr %3, %2 : tile<256xptr<$T>>
  %5 = load %4 {cache = none, evict = none} : tile<256x$T>
  %9 = splat %1 : tile<256xptr<$T>>
  %10 = addptr %9, %2 : tile<256xptr<$T>>
  $DIVISOR
  %7 = div %5, %6 : tile<256x$T> loc("divide.hpp":12)
  %8 = rem %5, %6 : tile<256x$T> loc("divide.hpp":13)
  %11 = add %7, %8 : tile<256x$T>
  store %10, %11 {cache = none, evict = none}
}
)";
  text.replace(text.find("$DIVISOR"), 8, divisor);
  for (std::size_t at = text.find("$T"); at != std::string::npos; at = text.find("$T")) text.replace(at, 2, dtype);
  return text;
}

/// Every operand named as the divisor of an LLVM `op` (sdiv, srem, udiv, urem) in `llvm_ir`.
std::vector<std::string> divisors_of(const std::string& llvm_ir, const std::string& op) {
  std::vector<std::string> names;
  const std::regex division("= " + op + R"( i[0-9]+ %?[^,]+, (%[A-Za-z0-9_.]+))");
  for (auto it = std::sregex_iterator(llvm_ir.begin(), llvm_ir.end(), division); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1]);
  return names;
}

/// Whether `name` is defined in `llvm_ir` by a select.
bool defined_by_select(const std::string& llvm_ir, const std::string& name) {
  return contains(llvm_ir, "  " + name + " = select i1");
}

TEST(IntegerDivision, EveryDivisionRunsOnAGuardedDivisor) {
  for (const char* dtype : {"i32", "i64", "i8", "u32", "u16"}) {
    SCOPED_TRACE(dtype);
    // The divisor is the output buffer's contents, unknown to the compiler.
    const std::string text = divide_text(dtype, "%6 = load %10 {cache = none, evict = none} : tile<256x$T>");
    const lowering::GpuKernel kernel = compile_text(text, "sm_80");
    const bool is_signed = dtype[0] == 'i';
    int divisions = 0;
    for (const char* op : {"sdiv", "srem", "udiv", "urem"}) {
      for (const std::string& divisor : divisors_of(kernel.llvm_ir, op)) {
        ++divisions;
        EXPECT_TRUE(defined_by_select(kernel.llvm_ir, divisor)) << op << " by " << divisor << "\n" << kernel.llvm_ir;
      }
    }
    EXPECT_GT(divisions, 0) << kernel.llvm_ir;
    EXPECT_TRUE(contains(kernel.llvm_ir,
                         "kernel divide: integer division by zero in div at divide.hpp:12: element "
                         "%d of the divisor is 0 (program (%d, %d, %d))"));
    EXPECT_TRUE(contains(kernel.llvm_ir, "kernel divide: integer division by zero in rem at divide.hpp:13"));
    expect_fault_record_and_trap(kernel.ptx);
    EXPECT_TRUE(contains(kernel.ptx, is_signed ? "div.s" : "div.u"));
    if (is_signed) {
      EXPECT_TRUE(contains(kernel.llvm_ir, "icmp eq i")) << "the -1 divisor is compared";
    }
    for (const char* arch : {"sm_80", "sm_90a"})
      KILN_EXPECT_PTXAS_ACCEPTS(compile_text(text, arch), arch, std::string("divide_") + dtype);
  }
}

TEST(IntegerDivision, ConstantNonZeroDivisorNeedsNoCheck) {
  const std::string text = divide_text("i32", "%6 = constant {value = 7} : tile<256xi32>");
  const lowering::GpuKernel kernel = compile_text(text, "sm_90a");
  EXPECT_FALSE(contains(kernel.ptx, "trap;")) << "a divisor of 7 is never 0: O3 removes the check";
  EXPECT_FALSE(contains(kernel.ptx, "kiln_fault_record"));
}

TEST(IntegerCasts, WideIntegersReachBf16ThroughOneRounding) {
  // sm_80 has no cvt.rn.bf16.s32: a cvt to f32 first rounds to 24 bits, so
  // the code generator rounds to odd in integer arithmetic instead.
  const std::string text = R"(kernel @to_bf16(%0: ptr<i32> {divisibility = 16}, %1: ptr<bf16> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<256xi32>
  %3 = splat %0 : tile<256xptr<i32>>
  %4 = addptr %3, %2 : tile<256xptr<i32>>
  %5 = load %4 {cache = none, evict = none} : tile<256xi32>
  %6 = cast %5 : tile<256xbf16>
  %7 = splat %1 : tile<256xptr<bf16>>
  %8 = addptr %7, %2 : tile<256xptr<bf16>>
  store %8, %6 {cache = none, evict = none}
}
)";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    SCOPED_TRACE(arch);
    const lowering::GpuKernel kernel = compile_text(text, arch);
    EXPECT_FALSE(contains(kernel.llvm_ir, "sitofp i32")) << kernel.llvm_ir;
    EXPECT_TRUE(contains(kernel.llvm_ir, "llvm.ctlz.i64"));
    EXPECT_TRUE(contains(kernel.ptx, "cvt.rn.f32.u64"));
    EXPECT_TRUE(contains(kernel.ptx, "cvt.rn.bf16.f32"));
    EXPECT_FALSE(contains(kernel.ptx, "cvt.rn.f32.s32"));
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "to_bf16");
  }
}

TEST(FloatArithmetic, SeparateMultiplyAndAddAreNeverContracted) {
  // The interpreter rounds a * b and then + c; ptxas may fuse a plain
  // mul.f32 and add.f32, but not the .rn forms the code generator emits.
  const std::string text = R"(kernel @mul_add(%0: ptr<f32> {divisibility = 16}) {
  %1 = arange {start = 0} : tile<256xi32>
  %2 = splat %0 : tile<256xptr<f32>>
  %3 = addptr %2, %1 : tile<256xptr<f32>>
  %4 = load %3 {cache = none, evict = none} : tile<256xf32>
  %5 = mul %4, %4 : tile<256xf32>
  %6 = add %5, %4 : tile<256xf32>
  store %3, %6 {cache = none, evict = none}
}
)";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(text, arch);
    EXPECT_TRUE(contains(kernel.ptx, "mul.rn.f32")) << arch;
    EXPECT_TRUE(contains(kernel.ptx, "add.rn.f32")) << arch;
    EXPECT_FALSE(contains(kernel.ptx, "fma.rn.f32")) << arch;
  }
}

}  // namespace
}  // namespace kiln::codegen_test
