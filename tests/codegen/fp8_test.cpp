// fp8 (f8e4m3, f8e5m2) through the GPU code generator: values live in i8
// registers as bit patterns, move through memory as bytes, and convert to
// and from f32 in integer arithmetic (no fp8 conversion instruction, so
// sm_80 works too); ptxas accepts every kernel.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"

namespace kiln::codegen_test {
namespace {

/// Loads 1024 values of `from` (16-byte aligned), casts them to `to`, stores them.
std::string cast_text(const std::string& from, const std::string& to) {
  std::string text = R"(kernel @cast(%0: ptr<FROM> {divisibility = 16}, %1: ptr<TO> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<1024xi32>
  %3 = splat %0 : tile<1024xptr<FROM>>
  %4 = addptr %3, %2 : tile<1024xptr<FROM>>
  %5 = load %4 {cache = none, evict = none} : tile<1024xFROM>
  %6 = cast %5 : tile<1024xTO>
  %7 = splat %1 : tile<1024xptr<TO>>
  %8 = addptr %7, %2 : tile<1024xptr<TO>>
  store %8, %6 {cache = none, evict = none}
}
)";
  for (const auto& [name, value] : {std::pair<std::string, std::string>{"FROM", from}, {"TO", to}})
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size()))
      text.replace(at, name.size(), value);
  return text;
}

/// out = x * 0.5 + 1.0 in f8e4m3, a sum over 256 values and a running
/// maximum: constants, arithmetic, a reduction and a scan of fp8.
const char* kFp8Arithmetic =
    R"(kernel @fp8_arithmetic(%0: ptr<f8e4m3> {divisibility = 16}, %1: ptr<f8e4m3> {divisibility = 16}, %2: ptr<f8e4m3>) {
  %3 = arange {start = 0} : tile<256xi32>
  %4 = splat %0 : tile<256xptr<f8e4m3>>
  %5 = addptr %4, %3 : tile<256xptr<f8e4m3>>
  %6 = load %5 {cache = none, evict = none} : tile<256xf8e4m3>
  %7 = constant {value = 0.5} : tile<256xf8e4m3>
  %8 = constant {value = 1} : tile<256xf8e4m3>
  %9 = fma %6, %7, %8 : tile<256xf8e4m3>
  %10 = scan %9 {axis = 0, reverse = 0} : tile<256xf8e4m3> {
  ^(%11: f8e4m3, %12: f8e4m3):
    %13 = maximum %11, %12 : f8e4m3
    yield %13
  }
  %14 = splat %1 : tile<256xptr<f8e4m3>>
  %15 = addptr %14, %3 : tile<256xptr<f8e4m3>>
  store %15, %10 {cache = none, evict = none}
  %16 = reduce %6 {axis = 0} : f8e4m3 {
  ^(%17: f8e4m3, %18: f8e4m3):
    %19 = add %17, %18 : f8e4m3
    yield %19
  }
  store %2, %16 {cache = none, evict = none}
}
)";

TEST(Fp8, ValuesMoveAsBytesInVectors) {
  const lowering::GpuKernel kernel = compile_text(cast_text("f8e5m2", "f8e5m2"));
  // 1024 bytes over 128 threads: 8 each, moved in 32-bit words, never byte by byte.
  EXPECT_EQ(count(kernel.ptx, "ld.global.u8"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.u8"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "ld.global.u32"), 2) << kernel.ptx;
}

TEST(Fp8, ConversionsUseIntegerArithmeticOnly) {
  for (const char* fp8 : {"f8e4m3", "f8e5m2"})
    for (const char* arch : {"sm_80", "sm_90a"}) {
      const lowering::GpuKernel narrow = compile_text(cast_text("f32", fp8), arch);
      const lowering::GpuKernel widen = compile_text(cast_text(fp8, "f32"), arch);
      for (const lowering::GpuKernel* kernel : {&narrow, &widen}) {
        EXPECT_EQ(count(kernel->ptx, "e4m3x2"), 0) << kernel->ptx;
        EXPECT_EQ(count(kernel->ptx, "e5m2x2"), 0) << kernel->ptx;
        EXPECT_EQ(count(kernel->ptx, "__nv_"), 0) << kernel->ptx;
      }
      EXPECT_EQ(count(narrow.ptx, "cvt.rn"), 0) << "rounding works on the f32 bits\n" << narrow.ptx;
    }
}

TEST(Fp8, ConstantsAreTheirBitPatterns) {
  // 0.5 and 1.0 widen exactly from their e4m3 bits (0x30, 0x38), folded
  // at compile time into the f32 fma.
  const lowering::GpuKernel kernel = compile_text(kFp8Arithmetic);
  EXPECT_TRUE(contains(kernel.llvm_ir, "@llvm.fma.f32(float %")) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.llvm_ir, ", float 5.000000e-01, float 1.000000e+00)")) << kernel.llvm_ir;
  EXPECT_TRUE(contains(kernel.ptx, "shfl.sync.bfly.b32")) << "scan and reduce shuffle the i8 widened";
}

class Fp8ForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(Fp8ForArch, PtxasAcceptsEveryKernel) {
  KILN_EXPECT_PTXAS_ACCEPTS(compile_text(kFp8Arithmetic, GetParam()), GetParam(), "fp8_arithmetic");
  for (const char* fp8 : {"f8e4m3", "f8e5m2"})
    for (const char* other : {"f64", "f32", "bf16", "f16", "i64", "u8", "f8e4m3", "f8e5m2"}) {
      SCOPED_TRACE(std::string(other) + " <-> " + fp8);
      KILN_EXPECT_PTXAS_ACCEPTS(compile_text(cast_text(other, fp8), GetParam()), GetParam(), "cast_to_fp8");
      KILN_EXPECT_PTXAS_ACCEPTS(compile_text(cast_text(fp8, other), GetParam()), GetParam(), "cast_from_fp8");
    }
}

INSTANTIATE_TEST_SUITE_P(Archs, Fp8ForArch, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace kiln::codegen_test
