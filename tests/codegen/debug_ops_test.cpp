// print and assert through the GPU code generator: vprintf with the
// interpreter's line format (per element for tiles) and its argument buffer,
// assert through the fault record (the interpreter's message, the program
// ids and a failing element, then trap), each element checked by one copy
// only, and ptxas acceptance for sm_80 and sm_90a.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"

namespace kiln::codegen_test {
namespace {

/// A print of a scalar i32, a scalar f32 and nothing else.
const char* kPrintScalars = R"(kernel @show(%0: i32, %1: f32) {
  print %0, %1 {prefix = "n, x: "} loc("show.hpp":4)
}
)";

/// A print of an i64 tile of `N` elements next to a scalar pointer.
std::string print_tile_text(int size) {
  const std::string n = std::to_string(size);
  return R"(kernel @show_tile(%0: ptr<i64> {divisibility = 16}) {
  %1 = arange {start = 0} : tile<)" +
         n + R"(xi32>
  %2 = splat %0 : tile<)" +
         n + R"(xptr<i64>>
  %3 = addptr %2, %1 : tile<)" +
         n + R"(xptr<i64>>
  %4 = load %3 {cache = none, evict = none} : tile<)" +
         n + R"(xi64>
  %5 = cast %1 : tile<)" +
         n + R"(xf16>
  print %4, %5, %0 {prefix = "100% of t:"} loc("show.hpp":9)
}
)";
}

/// An assert that every element of a 256-element tile is below %1.
const char* kAssertTile = R"(kernel @check(%0: ptr<i32> {divisibility = 16}, %1: i32) {
  %2 = arange {start = 0} : tile<256xi32>
  %3 = splat %0 : tile<256xptr<i32>>
  %4 = addptr %3, %2 : tile<256xptr<i32>>
  %5 = load %4 {cache = none, evict = none} : tile<256xi32>
  %6 = splat %1 : tile<256xi32>
  %7 = cmp %5, %6 {pred = lt} : tile<256xi1>
  assert %7 {message = "value below the limit"} loc("kernels/check.hpp":7)
}
)";

/// A scalar assert without a source line.
const char* kAssertScalar = R"(kernel @positive(%0: i32) {
  %1 = constant {value = 0} : i32
  %2 = cmp %0, %1 {pred = gt} : i1
  assert %2 {message = "n must be positive"}
}
)";

TEST(Print, ScalarsPrintOneLinePerProgramInTheInterpretersFormat) {
  const lowering::GpuKernel kernel = compile_text(kPrintScalars);
  EXPECT_TRUE(contains(kernel.llvm_ir, R"(c"pid (%d, %d, %d) n, x: %d %.9g\0A\00")"));
  // pids, the i32 and the f32 promoted to double at its natural alignment.
  EXPECT_TRUE(contains(kernel.llvm_ir, "alloca { i32, i32, i32, i32, double }"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "fpext float %arg1 to double"));
  EXPECT_EQ(count(kernel.llvm_ir, "call i32 @vprintf(ptr"), 1) << kernel.llvm_ir;
  // Only lane 0 of warp 0 prints.
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %lane, 31"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %warp, 3"));
  EXPECT_TRUE(contains(kernel.ptx, "vprintf"));
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(kPrintScalars, arch), arch, "print_scalars");
}

TEST(Print, TilesPrintOneLinePerElementWithItsIndex) {
  // 1024 elements over 128 threads: 8 registers each, each its own element.
  const lowering::GpuKernel kernel = compile_text(print_tile_text(1024));
  EXPECT_TRUE(contains(kernel.llvm_ir, R"(c"pid (%d, %d, %d) idx (%d) 100%% of t: %lld %.9g 0x%llx\0A\00")"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "alloca { i32, i32, i32, i32, i64, double, i64 }"));
  EXPECT_EQ(count(kernel.llvm_ir, "call i32 @vprintf(ptr"), 8) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, " = alloca "), 1) << "the eight calls share one buffer\n" << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "and i32 %lane, "), 0) << "no element is duplicated\n" << kernel.llvm_ir;
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(print_tile_text(1024), arch), arch, "print_tile");
}

TEST(Print, TwoDimensionalTileOfEveryKindOfElement) {
  const std::string text = R"(kernel @kinds(%0: ptr<f32> {divisibility = 16}) {
  %1 = arange {start = 0} : tile<32xi32>
  %2 = expand_dims %1 {axis = 1} : tile<32x1xi32>
  %3 = broadcast %2 : tile<32x32xi32>
  %4 = expand_dims %1 {axis = 0} : tile<1x32xi32>
  %5 = broadcast %4 : tile<32x32xi32>
  %6 = cmp %3, %5 {pred = lt} : tile<32x32xi1>
  %7 = cast %3 : tile<32x32xu8>
  %8 = cast %5 : tile<32x32xbf16>
  %9 = cast %3 : tile<32x32xf64>
  %10 = cast %5 : tile<32x32xu64>
  %11 = splat %0 : tile<32x32xptr<f32>>
  %12 = addptr %11, %5 : tile<32x32xptr<f32>>
  %13 = cast %3 : tile<32x32xi16>
  print %6, %7, %8, %9, %10, %12, %13 {prefix = "kinds:  "} loc("kinds.hpp":2)
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_TRUE(
      contains(kernel.llvm_ir, R"(c"pid (%d, %d, %d) idx (%d, %d) kinds: %d %u %.9g %.17g %llu 0x%llx %d\0A\00")"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "{ i32, i32, i32, i32, i32, i32, i32, double, double, i64, i64, i32 }"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "zext i1"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "zext i8"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "sext i16"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "fpext bfloat"));
  EXPECT_TRUE(contains(kernel.llvm_ir, "ptrtoint ptr addrspace(1)"));
  // 1024 elements over 128 threads, none duplicated: 8 lines per thread.
  EXPECT_EQ(count(kernel.llvm_ir, "call i32 @vprintf(ptr"), 8) << kernel.llvm_ir;
  for (const char* arch : {"sm_80", "sm_90a"}) KILN_EXPECT_PTXAS_ACCEPTS(compile_text(text, arch), arch, "print_kinds");
}

TEST(Print, DuplicatedElementsPrintOnce) {
  // 64 elements over 4 warps: warps 2 and 3 hold copies of warps 0 and 1.
  const lowering::GpuKernel kernel = compile_text(print_tile_text(64));
  EXPECT_EQ(count(kernel.llvm_ir, "call i32 @vprintf(ptr"), 1) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %warp, 2"));
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", "print_duplicated");
}

TEST(Assert, FailingElementsFillTheFaultRecordWithTheInterpretersMessageAndTrap) {
  const lowering::GpuKernel kernel = compile_text(kAssertTile);
  EXPECT_TRUE(contains(kernel.llvm_ir,
                       R"(c"kernel check: assert failed at check.hpp:7: value below the limit (program (%d, %d, %d), )"
                       R"(element %d)\00)"));
  // Two registers per thread, each its own element: one guarded fault
  // block, which picks the failing one.
  EXPECT_EQ(count(kernel.llvm_ir, R"(call void asm sideeffect "trap;", "")"), 1) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.llvm_ir, "cmpxchg ptr addrspace(1)"), 1) << kernel.llvm_ir;
  expect_fault_record_and_trap(kernel.ptx);
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(kAssertTile, arch), arch, "assert_tile");
}

TEST(Assert, ScalarConditionIsCheckedByOneThread) {
  const lowering::GpuKernel kernel = compile_text(kAssertScalar, "sm_80");
  EXPECT_TRUE(
      contains(kernel.llvm_ir, R"(c"kernel positive: assert failed: n must be positive (program (%d, %d, %d))\00)"));
  EXPECT_EQ(count(kernel.llvm_ir, R"(call void asm sideeffect "trap;", "")"), 1) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, "and i32 %warp, 3"));
  expect_fault_record_and_trap(kernel.ptx);
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_80", "assert_scalar");
}

}  // namespace
}  // namespace kiln::codegen_test
