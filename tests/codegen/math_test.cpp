// Every element-wise op of ir/include/kiln/ir/ops.def on every dtype it
// accepts reaches PTX that ptxas takes (sm_80 and sm_90a, no spills); the
// math unaries call libdevice, which is linked in: no __nv_ function is left
// unresolved in the PTX.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen_support.hpp"
#include "ir_samples.hpp"

namespace kiln::codegen_test {
namespace {

const std::vector<std::string> kFloats = {"f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2"};
const std::vector<std::string> kIntegers = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"};
const std::vector<std::string> kMath = {
    "exp",  "exp2",  "log",   "log2",  "log1p", "sqrt",  "rsqrt", "sin",  "cos",    "tanh",   "erf",      "floor",
    "ceil", "abs",   "neg",   "expm1", "tan",   "atan",  "asin",  "acos", "sinh",   "cosh",   "trunc",    "round",
    "rint", "asinh", "acosh", "atanh", "log10", "exp10", "cbrt",  "erfc", "erfinv", "lgamma", "fast_exp", "fast_exp2"};
const std::vector<std::string> kFloatBinary = {"pow", "atan2", "hypot", "copysign"};
const std::vector<std::string> kArithmetic = {"add", "sub", "mul", "div", "rem", "minimum", "maximum"};
const std::vector<std::string> kBitwise = {"and", "or", "xor", "shl", "shr", "umulhi"};

using ir_samples::fill;

/// A kernel over 128 elements: x from %0 and y from %1 (both of `dtype`),
/// `body` computing %10 of `result` from %6 (x) and %9 (y), stored to %2.
std::string elementwise_kernel(const std::string& dtype, const std::string& result, const std::string& body) {
  return fill(
      R"(kernel @op(%0: ptr<{T}> {divisibility = 16}, %1: ptr<{T}> {divisibility = 16}, %2: ptr<{R}> {divisibility = 16}) {
  %3 = arange {start = 0} : tile<128xi32>
  %4 = splat %0 : tile<128xptr<{T}>>
  %5 = addptr %4, %3 : tile<128xptr<{T}>>
  %6 = load %5 {cache = none, evict = none} : tile<128x{T}>
  %7 = splat %1 : tile<128xptr<{T}>>
  %8 = addptr %7, %3 : tile<128xptr<{T}>>
  %9 = load %8 {cache = none, evict = none} : tile<128x{T}>
  {BODY}
  %11 = splat %2 : tile<128xptr<{R}>>
  %12 = addptr %11, %3 : tile<128xptr<{R}>>
  store %12, %10 {cache = none, evict = none}
}
)",
      {{"BODY", body}, {"T", dtype}, {"R", result}});
}

std::string unary(const std::string& op, const std::string& dtype) {
  return elementwise_kernel(dtype, dtype, "%10 = " + op + " %6 : tile<128x" + dtype + ">");
}

std::string binary(const std::string& op, const std::string& dtype) {
  return elementwise_kernel(dtype, dtype, "%10 = " + op + " %6, %9 : tile<128x" + dtype + ">");
}

/// Every (name, kernel) pair of the op matrix.
std::vector<std::pair<std::string, std::string>> op_matrix() {
  std::vector<std::pair<std::string, std::string>> kernels;
  for (const std::string& dtype : kFloats) {
    for (const std::string& op : kMath) kernels.emplace_back(op + "_" + dtype, unary(op, dtype));
    for (const std::string& op : kArithmetic) kernels.emplace_back(op + "_" + dtype, binary(op, dtype));
    for (const std::string& op : kFloatBinary) kernels.emplace_back(op + "_" + dtype, binary(op, dtype));
    for (const std::string op : {"isnan", "isinf"})
      kernels.emplace_back(op + "_" + dtype, elementwise_kernel(dtype, "i1", "%10 = " + op + " %6 : tile<128xi1>"));
    kernels.emplace_back("fma_" + dtype,
                         elementwise_kernel(dtype, dtype, "%10 = fma %6, %9, %6 : tile<128x" + dtype + ">"));
  }
  for (const std::string& dtype : kIntegers) {
    for (const std::string& op : kArithmetic) kernels.emplace_back(op + "_" + dtype, binary(op, dtype));
    for (const std::string& op : kBitwise) kernels.emplace_back(op + "_" + dtype, binary(op, dtype));
    for (const char* op : {"not", "neg", "abs", "popc", "clz"})
      kernels.emplace_back(std::string(op) + "_" + dtype, unary(op, dtype));
  }
  std::vector<std::string> all = kFloats;
  all.insert(all.end(), kIntegers.begin(), kIntegers.end());
  for (const std::string& dtype : all) {
    for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"})
      kernels.emplace_back(
          std::string("cmp_") + pred + "_" + dtype,
          elementwise_kernel(dtype, "i1", std::string("%10 = cmp %6, %9 {pred = ") + pred + "} : tile<128xi1>"));
    kernels.emplace_back("select_" + dtype,
                         elementwise_kernel(dtype, dtype,
                                            "%13 = cmp %6, %9 {pred = lt} : tile<128xi1>\n  %10 = select %13, %6, %9 : "
                                            "tile<128x" +
                                                dtype + ">"));
    std::vector<std::string> targets = all;
    targets.push_back("i1");
    for (const std::string& to : targets)
      kernels.emplace_back("cast_" + dtype + "_to_" + to,
                           elementwise_kernel(dtype, to, "%10 = cast %6 : tile<128x" + to + ">"));
  }
  const std::vector<std::vector<std::string>> same_width = {
      {"i8", "u8", "f8e4m3", "f8e5m2"}, {"i16", "u16", "f16", "bf16"}, {"i32", "u32", "f32"}, {"i64", "u64", "f64"}};
  for (const auto& group : same_width)
    for (const std::string& from : group)
      for (const std::string& to : group)
        kernels.emplace_back("bitcast_" + from + "_to_" + to,
                             elementwise_kernel(from, to, "%10 = bitcast %6 : tile<128x" + to + ">"));
  return kernels;
}

TEST(Math, EveryElementwiseOpOnEveryDtypeReachesPtx) {
  int compiled = 0;
  for (const auto& [name, text] : op_matrix()) {
    SCOPED_TRACE(name);
    try {
      const lowering::GpuKernel kernel = compile_text(text, "sm_90a", 1);
      EXPECT_EQ(count(kernel.ptx, "__nv_"), 0) << "libdevice must be linked in\n" << kernel.ptx;
      ++compiled;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GT(compiled, 500);
}

class MathForArch : public ::testing::TestWithParam<const char*> {};

/// Whether ptxas checks kernel `name`: all but the integer-to-integer casts,
/// the bitcasts and the integer compares other than `lt`, whose PTX is
/// plain integer code (each ptxas run costs ~70 ms; the whole matrix takes a minute).
bool ptxas_checks(const std::string& name) {
  auto is_integer = [](const std::string& dtype) {
    for (const std::string& integer : kIntegers)
      if (dtype == integer) return true;
    return dtype == "i1";
  };
  if (name.starts_with("bitcast_")) return false;
  if (name.starts_with("cast_")) {
    const std::size_t to = name.find("_to_");
    return !(is_integer(name.substr(5, to - 5)) && is_integer(name.substr(to + 4)));
  }
  if (name.starts_with("cmp_") && !name.starts_with("cmp_lt_")) return !is_integer(name.substr(name.rfind('_') + 1));
  return true;
}

TEST_P(MathForArch, PtxasAcceptsEveryElementwiseOpOnEveryDtype) {
  for (const auto& [name, text] : op_matrix()) {
    if (!ptxas_checks(name)) continue;
    SCOPED_TRACE(name);
    const lowering::GpuKernel kernel = compile_text(text, GetParam(), 1);
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), name);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, MathForArch, ::testing::Values("sm_80", "sm_90a"));

TEST(Math, TranscendentalsCallLibdeviceBeforeLinking) {
  for (const auto& [op, symbol] : std::vector<std::pair<std::string, std::string>>{
           {"sin", "__nv_sinf"},       {"cos", "__nv_cosf"},      {"tanh", "__nv_tanhf"},
           {"erf", "__nv_erff"},       {"expm1", "__nv_expm1f"},  {"tan", "__nv_tanf"},
           {"atan", "__nv_atanf"},     {"asin", "__nv_asinf"},    {"acos", "__nv_acosf"},
           {"sinh", "__nv_sinhf"},     {"cosh", "__nv_coshf"},    {"asinh", "__nv_asinhf"},
           {"acosh", "__nv_acoshf"},   {"atanh", "__nv_atanhf"},  {"log10", "__nv_log10f"},
           {"exp10", "__nv_exp10f"},   {"cbrt", "__nv_cbrtf"},    {"erfc", "__nv_erfcf"},
           {"erfinv", "__nv_erfinvf"}, {"lgamma", "__nv_lgammaf"}}) {
    const lowering::GpuKernel kernel = compile_text(unary(op, "f32"));
    EXPECT_TRUE(contains(kernel.llvm_ir, "declare float @" + symbol + "(float)"));
    EXPECT_FALSE(contains(kernel.optimized_llvm_ir, "declare float @" + symbol)) << "linked and inlined";
  }
  const lowering::GpuKernel f64 = compile_text(unary("exp", "f64"));
  EXPECT_TRUE(contains(f64.llvm_ir, "declare double @__nv_exp(double)"));
  const lowering::GpuKernel half = compile_text(unary("erf", "f16"));
  EXPECT_TRUE(contains(half.llvm_ir, "call float @__nv_erff(float")) << "f16 computes in f32";
  const lowering::GpuKernel remainder = compile_text(binary("rem", "f32"));
  EXPECT_TRUE(contains(remainder.llvm_ir, "call float @__nv_fmodf(float"));
  EXPECT_TRUE(contains(compile_text(binary("pow", "f32")).llvm_ir, "call float @__nv_powf(float"));
  EXPECT_TRUE(contains(compile_text(binary("pow", "f64")).llvm_ir, "call double @__nv_pow(double"));
  EXPECT_TRUE(contains(compile_text(binary("atan2", "bf16")).llvm_ir, "call float @__nv_atan2f(float"))
      << "bf16 computes in f32";
}

// popc and clz are single PTX instructions (of 8 and 16 bits on the widened
// value) and copysign a select on the sign bit (NVPTX's expansion), never a
// call.
TEST(Math, SignCopiesAndBitCountsAreInstructions) {
  for (const auto& [kernel_text, instruction] :
       std::vector<std::pair<std::string, std::string>>{{binary("copysign", "f32"), "selp.f32"},
                                                        {binary("copysign", "f64"), "selp.f64"},
                                                        {unary("popc", "u32"), "popc.b32"},
                                                        {unary("popc", "i64"), "popc.b64"},
                                                        {unary("clz", "i32"), "clz.b32"},
                                                        {unary("clz", "u64"), "clz.b64"},
                                                        {unary("clz", "u8"), "clz.b32"},
                                                        {unary("popc", "i16"), "popc.b32"}}) {
    SCOPED_TRACE(instruction);
    const lowering::GpuKernel kernel = compile_text(kernel_text);
    EXPECT_TRUE(contains(kernel.ptx, instruction)) << kernel.ptx;
    EXPECT_FALSE(contains(kernel.llvm_ir, "__nv_"));
    EXPECT_FALSE(contains(kernel.ptx, "call")) << kernel.ptx;
  }
  EXPECT_TRUE(contains(compile_text(binary("hypot", "f64")).llvm_ir, "call double @__nv_hypot(double"));
}

// The exact roundings are single conversions (round, which PTX has no mode
// for, a few instructions around one), never a library call.
TEST(Math, RoundingsToIntegersAreConversions) {
  for (const auto& [op, instruction] : std::vector<std::pair<std::string, std::string>>{
           {"trunc", "cvt.rzi.f32.f32"}, {"rint", "cvt.rni.f32.f32"}, {"round", "cvt.rzi.f32.f32"}}) {
    SCOPED_TRACE(op);
    const lowering::GpuKernel kernel = compile_text(unary(op, "f32"));
    EXPECT_TRUE(contains(kernel.ptx, instruction)) << kernel.ptx;
    EXPECT_FALSE(contains(kernel.llvm_ir, "__nv_"));
  }
  EXPECT_TRUE(contains(compile_text(unary("rint", "f64")).ptx, "cvt.rni.f64.f64"));
}

// Float division is IEEE round to nearest on every dtype (div.rn, never
// div.approx or div.full), which is why div_rn is the same op.
TEST(Math, FloatDivisionIsCorrectlyRounded) {
  for (const auto& [dtype, instruction] : std::vector<std::pair<std::string, std::string>>{
           {"f32", "div.rn.f32"}, {"f64", "div.rn.f64"}, {"f16", "div.rn.f32"}, {"bf16", "div.rn.f32"}}) {
    SCOPED_TRACE(dtype);
    const lowering::GpuKernel kernel = compile_text(binary("div", dtype));
    EXPECT_TRUE(contains(kernel.ptx, instruction)) << kernel.ptx;
    EXPECT_FALSE(contains(kernel.ptx, "div.approx")) << kernel.ptx;
    EXPECT_FALSE(contains(kernel.ptx, "div.full")) << kernel.ptx;
  }
}

TEST(Math, NanAndInfinityTestsCompareWithoutCalls) {
  const lowering::GpuKernel nan = compile_text(elementwise_kernel("f32", "i1", "%10 = isnan %6 : tile<128xi1>"));
  EXPECT_TRUE(contains(nan.ptx, "setp.nan.f32")) << nan.ptx;
  const lowering::GpuKernel inf = compile_text(elementwise_kernel("f16", "i1", "%10 = isinf %6 : tile<128xi1>"));
  // |x| == inf of x widened to f32, which O3 turns into a test of the f16 bits: (x & 0x7fff) == 0x7c00.
  EXPECT_TRUE(contains(inf.ptx, "31744")) << inf.ptx;
  EXPECT_FALSE(contains(nan.llvm_ir, "__nv_") || contains(inf.llvm_ir, "__nv_"));
}

TEST(Math, ExponentialsOfF32StayApproximate) {
  const lowering::GpuKernel kernel = compile_text(unary("exp", "f32"));
  EXPECT_TRUE(contains(kernel.ptx, "ex2.approx.f32"));
  EXPECT_FALSE(contains(kernel.llvm_ir, "__nv_")) << "no library call for f32 exp";
}

// fast_exp and fast_exp2 flush subnormal results in the instruction itself:
// ex2.approx.ftz.f32, which ptxas does not surround with the rescaling of
// subnormal results that ex2.approx.f32 gets (a compare and two multiplies,
// FSETP and FMUL in SASS); f16 computes in f32 the same way. f64 has no
// approximation: libdevice's function and a select of +0.
TEST(Math, FastExponentialsFlushSubnormalResultsInTheInstruction) {
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    for (const char* op : {"fast_exp", "fast_exp2"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype);
      const lowering::GpuKernel kernel = compile_text(unary(op, dtype));
      EXPECT_TRUE(contains(kernel.ptx, "ex2.approx.ftz.f32")) << kernel.ptx;
      EXPECT_FALSE(contains(kernel.ptx, "ex2.approx.f32")) << kernel.ptx;
      EXPECT_FALSE(contains(kernel.llvm_ir, "__nv_")) << "no library call";
    }
  }
  const lowering::GpuKernel exp2 = compile_text(unary("exp2", "f32"));
  EXPECT_FALSE(contains(exp2.ptx, "ex2.approx.ftz")) << "exp2 keeps its subnormal results: " << exp2.ptx;
  for (const char* op : {"fast_exp", "fast_exp2"}) {
    const lowering::GpuKernel f64 = compile_text(unary(op, "f64"));
    EXPECT_TRUE(contains(f64.llvm_ir, "__nv_exp")) << f64.llvm_ir;
    EXPECT_TRUE(contains(f64.ptx, "selp.f64")) << f64.ptx;
  }
}

TEST(Math, SineInsideALoopBody) {
  const std::string text = R"(kernel @loop_sine(%0: ptr<f32>, %1: i32) {
  %2 = constant {value = 0} : i32
  %3 = constant {value = 1} : i32
  %4 = constant {value = 0.5} : f32
  %5 = for %2, %1, %3, %4 : f32 {
  ^(%6: i32, %7: f32):
    %8 = sin %7 : f32 loc("k.hpp":12)
    yield %8
  }
  store %0, %5 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(text);
  EXPECT_EQ(count(kernel.ptx, "__nv_"), 0) << kernel.ptx;
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", "loop_sine");
}

TEST(Math, MissingLibdeviceNamesTheOpAndTheVariable) {
  const char* previous = std::getenv("KILN_LIBDEVICE");
  const std::string saved = previous ? previous : "";
  setenv("KILN_LIBDEVICE", "/nonexistent/libdevice.10.bc", 1);
  std::string message;
  try {
    compile_text(unary("tanh", "f32"));
  } catch (const lowering::LoweringError& e) {
    message = e.what();
  }
  if (previous) setenv("KILN_LIBDEVICE", saved.c_str(), 1);
  else unsetenv("KILN_LIBDEVICE");
  EXPECT_EQ(message,
            "`tanh` needs libdevice (__nv_tanhf), but KILN_LIBDEVICE names `/nonexistent/libdevice.10.bc`, which is "
            "not a file");
}

}  // namespace
}  // namespace kiln::codegen_test
