// inline_asm in the GPU code generator: the asm text reaches the PTX once per
// element a thread holds, operands in the register class's type (an f32 in an
// `r` register is bitcast), a non-pure asm survives O3 where its result is
// unused while a pure one does not, a target that runs asm on the host (the
// emu device) calls the host reference's hook instead, and ptxas accepts the
// PTX for sm_80 and sm_90a.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/codegen_support.hpp"
#include "kiln/ir/inline_asm.hpp"

namespace kiln::codegen_test {
namespace {

using ir::DType;

/// `%result = inline_asm operands {…} : type` with the key of `dtypes`.
std::string asm_line(const std::string& result, const std::string& operands, const std::string& text,
                     const std::string& constraints, bool pure, DType dtype, const std::vector<DType>& dtypes,
                     const std::string& type) {
  return "  " + result + " = inline_asm " + operands + " {asm = \"" + text + "\", constraints = \"" + constraints +
         "\", pure = " + (pure ? "true" : "false") + ", key = \"" +
         ir::inline_asm_key(text, constraints, dtype, dtypes) + "\"} : " + type + "\n";
}

/// out[i] = tanh.approx(x[i]) over 1024 elements (8 per thread of 4 warps);
/// besides, an f32 moved through an `r` register, a pure asm whose result is
/// unused and a non-pure one likewise (`mov.b32` with a comment naming it).
std::string tanh_kernel() {
  const std::vector<DType> f32 = {DType::f32};
  return "kernel @fast_tanh(%0: ptr<f32>, %1: ptr<f32>) {\n"
         "  %2 = arange {start = 0} : tile<1024xi32>\n"
         "  %3 = splat %0 : tile<1024xptr<f32>>\n"
         "  %4 = addptr %3, %2 : tile<1024xptr<f32>>\n"
         "  %5 = load %4 {cache = none, evict = none} : tile<1024xf32>\n" +
         asm_line("%6", "%5", "tanh.approx.f32 $0, $1;", "=f,f", true, DType::f32, f32, "tile<1024xf32>") +
         asm_line("%7", "%6", "mov.b32 $0, $1; // as bits", "=r,r", true, DType::f32, f32, "tile<1024xf32>") +
         asm_line("%8", "%5", "mov.b32 $0, $1; // pure, unused", "=r,r", true, DType::f32, f32, "tile<1024xf32>") +
         asm_line("%9", "%5", "mov.b32 $0, $1; // kept, unused", "=r,r", false, DType::f32, f32, "tile<1024xf32>") +
         "  %10 = splat %1 : tile<1024xptr<f32>>\n"
         "  %11 = addptr %10, %2 : tile<1024xptr<f32>>\n"
         "  store %11, %7 {cache = none, evict = none}\n"
         "}\n";
}

TEST(InlineAsm, TheAsmReachesThePtxOncePerElementOfTheThread) {
  const lowering::GpuKernel kernel = compile_text(tanh_kernel());
  EXPECT_EQ(count(kernel.ptx, "tanh.approx.f32 "), 8) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "// as bits"), 8) << kernel.ptx;
  EXPECT_TRUE(contains(kernel.llvm_ir, "bitcast float")) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, "// pure, unused"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "// kept, unused"), 8) << kernel.ptx;
  EXPECT_EQ(count(kernel.llvm_ir, "asm sideeffect \"mov.b32 $0, $1; // kept, unused\""), 8) << kernel.llvm_ir;
  EXPECT_EQ(count(kernel.ptx, lowering::kInlineAsmHostFunction), 0);
}

TEST(InlineAsm, ATargetThatRunsAsmOnTheHostCallsTheHook) {
  std::unique_ptr<ir::Function> fn = ir::parse_function(tanh_kernel());
  const lowering::GpuKernel host =
      lowering::compile_for_gpu(*fn, lowering::GpuTarget{.arch = "sm_90a", .num_warps = 4, .inline_asm_on_host = true},
                                {.stop_after = "codegen"});
  EXPECT_EQ(count(host.llvm_ir, "call i64 @kiln_inline_asm_host(ptr "), 4 * 8) << host.llvm_ir;
  EXPECT_EQ(count(host.llvm_ir, " asm "), 0) << host.llvm_ir;
  EXPECT_TRUE(contains(
      host.llvm_ir, ir::inline_asm_key("tanh.approx.f32 $0, $1;", "=f,f", DType::f32, std::vector<DType>{DType::f32})));
  EXPECT_EQ(count(host.llvm_ir, "alloca [1 x i64]"), 4) << host.llvm_ir;
}

/// Every register class: f16 (h), u64 (l), f64 (d), i32 (r) of a tile and a
/// splat scalar, two elements per thread.
std::string classes_kernel() {
  const auto line = [](const std::string& result, const std::string& op, const std::string& text,
                       const std::string& constraints, DType dtype, const std::string& type) {
    return asm_line(result, op, text, constraints, true, dtype, {dtype}, type);
  };
  return "kernel @classes(%0: ptr<f16>, %1: ptr<u64>, %2: ptr<f64>, %3: ptr<i32>, %4: i32) {\n"
         "  %5 = arange {start = 0} : tile<256xi32>\n"
         "  %6 = splat %0 : tile<256xptr<f16>>\n"
         "  %7 = addptr %6, %5 : tile<256xptr<f16>>\n"
         "  %8 = load %7 {cache = none, evict = none} : tile<256xf16>\n" +
         line("%9", "%8", "neg.f16 $0, $1;", "=h,h", DType::f16, "tile<256xf16>") +
         "  store %7, %9 {cache = none, evict = none}\n"
         "  %10 = splat %1 : tile<256xptr<u64>>\n"
         "  %11 = addptr %10, %5 : tile<256xptr<u64>>\n"
         "  %12 = load %11 {cache = none, evict = none} : tile<256xu64>\n" +
         line("%13", "%12", "{ .reg .b32 t; popc.b64 t, $1; cvt.u64.u32 $0, t; }", "=l,l", DType::u64,
              "tile<256xu64>") +
         "  store %11, %13 {cache = none, evict = none}\n"
         "  %14 = splat %2 : tile<256xptr<f64>>\n"
         "  %15 = addptr %14, %5 : tile<256xptr<f64>>\n"
         "  %16 = load %15 {cache = none, evict = none} : tile<256xf64>\n" +
         line("%17", "%16", "neg.f64 $0, $1;", "=d,d", DType::f64, "tile<256xf64>") +
         "  store %15, %17 {cache = none, evict = none}\n"
         "  %18 = splat %3 : tile<256xptr<i32>>\n"
         "  %19 = addptr %18, %5 : tile<256xptr<i32>>\n"
         "  %20 = splat %4 : tile<256xi32>\n" +
         asm_line("%21", "%5, %20", "add.s32 $0, $1, $2; // broadcast", "=r,r,r", false, DType::i32,
                  {DType::i32, DType::i32}, "tile<256xi32>") +
         "  store %19, %21 {cache = none, evict = none}\n"
         "}\n";
}

class InlineAsmPtxas : public ::testing::TestWithParam<const char*> {};

TEST_P(InlineAsmPtxas, AcceptsEveryRegisterClass) {
  const lowering::GpuKernel kernel = compile_text(classes_kernel(), GetParam());
  for (const char* text : {"neg.f16 ", "popc.b64 t, ", "neg.f64 ", "// broadcast"})
    EXPECT_GE(count(kernel.ptx, text), 2) << text << "\n" << kernel.ptx;
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), "inline_asm_classes");
  const lowering::GpuKernel tanh = compile_text(tanh_kernel(), GetParam());
  KILN_EXPECT_PTXAS_ACCEPTS(tanh, GetParam(), "inline_asm_tanh");
}

INSTANTIATE_TEST_SUITE_P(Archs, InlineAsmPtxas, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace kiln::codegen_test
