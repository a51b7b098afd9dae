// The inline_asm op in the IR: its key, the constraint strings it accepts,
// the verifier, the text form's round trip, and what DCE, CSE and LICM may do
// with a pure and a non-pure asm.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kiln/ir/inline_asm.hpp"
#include "kiln/ir/op_schema.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"
#include "pass_test_support.hpp"

namespace kiln::ir {
namespace {

const std::string kTanh = "tanh.approx.f32 $0, $1;";
const std::string kMad = "mad.lo.s32 $0, $1, $2, $1;";

/// The line of an inline_asm `%result = inline_asm operands {…} : type`
/// whose operands and result are of `dtype`.
std::string asm_line(const std::string& result, const std::string& operands, const std::string& text,
                     const std::string& constraints, bool pure, DType dtype, const std::string& type) {
  const std::vector<DType> dtypes(static_cast<std::size_t>(std::count(operands.begin(), operands.end(), '%')), dtype);
  return result + " = inline_asm " + operands + " {asm = \"" + text + "\", constraints = \"" + constraints +
         "\", pure = " + (pure ? "true" : "false") + ", key = \"" + inline_asm_key(text, constraints, dtype, dtypes) +
         "\"} : " + type + "\n";
}

using test::after;

TEST(InlineAsmKey, IsFnv1aOfTheAsmTheConstraintsAndTheDtypes) {
  const DType f32[] = {DType::f32};
  const DType i32s[] = {DType::i32, DType::i32};
  // Pinned values: a key names a host reference across processes and in printed IR.
  EXPECT_EQ(inline_asm_key(kTanh, "=f,f", DType::f32, f32), "asm-545a5fdfafe74556");
  EXPECT_EQ(inline_asm_key(kMad, "=r,r,r", DType::i32, i32s), "asm-6cb0aade1301f180");
  const DType u32s[] = {DType::u32, DType::u32};
  EXPECT_NE(inline_asm_key(kMad, "=r,r,r", DType::i32, u32s), inline_asm_key(kMad, "=r,r,r", DType::i32, i32s));
  EXPECT_NE(inline_asm_key(kMad, "=r,r,r", DType::u32, i32s), inline_asm_key(kMad, "=r,r,r", DType::i32, i32s));
  EXPECT_NE(inline_asm_key("mad.lo.s32 $0, $1, $2, $2;", "=r,r,r", DType::i32, i32s),
            inline_asm_key(kMad, "=r,r,r", DType::i32, i32s));
}

TEST(InlineAsmConstraints, AcceptOneRegisterClassPerOperandOfItsWidth) {
  const DType i32s[] = {DType::i32, DType::i32};
  const DType f32[] = {DType::f32};
  const DType f16[] = {DType::f16};
  const DType bf16_u16[] = {DType::bf16, DType::u16};
  const DType u64[] = {DType::u64};
  const DType f64[] = {DType::f64};
  EXPECT_EQ(inline_asm_error(kMad, "=r,r,r", DType::i32, i32s), "");
  EXPECT_EQ(inline_asm_error(kTanh, "=f,f", DType::f32, f32), "");
  EXPECT_EQ(inline_asm_error("mov.b32 $0, $1;", "=r,r", DType::f32, f32), "");
  EXPECT_EQ(inline_asm_error("neg.f16 $0, $1;", "=h,h", DType::f16, f16), "");
  EXPECT_EQ(inline_asm_error("add.u16 $0, $1, ${2};", "=h,h,h", DType::u16, bf16_u16), "");
  EXPECT_EQ(inline_asm_error("mov.b64 $0, $1; // $$", "=l,l", DType::u64, u64), "");
  EXPECT_EQ(inline_asm_error("neg.f64 $0, $1;", "=d,d", DType::f64, f64), "");
  EXPECT_EQ(inline_asm_register_classes("=h,r,l,f,d"), (std::vector<char>{'h', 'r', 'l', 'f', 'd'}));
}

TEST(InlineAsmVerifier, AcceptsScalarsAndTilesAndRoundTrips) {
  const std::string text = "kernel @k(%0: tile<4x8xi32>, %1: tile<4x8xi32>, %2: f32) {\n" +
                           asm_line("  %3", "%0, %1", kMad, "=r,r,r", true, DType::i32, "tile<4x8xi32>") +
                           asm_line("  %4", "%2", kTanh, "=f,f", false, DType::f32, "f32") + "}\n";
  auto fn = parse_function(text);
  EXPECT_NO_THROW(verify(*fn));
  EXPECT_EQ(print(*fn), text);
  EXPECT_EQ(fn->body.ops[0]->string_attribute("asm"), kMad);
  EXPECT_TRUE(inline_asm_is_pure(*fn->body.ops[0]));
  EXPECT_FALSE(inline_asm_is_pure(*fn->body.ops[1]));
}

TEST(InlineAsmEffects, OnlyANonPureAsmHasALastingEffect) {
  const std::string text = "kernel @k(%0: f32) {\n" + asm_line("  %1", "%0", kTanh, "=f,f", true, DType::f32, "f32") +
                           asm_line("  %2", "%0", kTanh, "=f,f", false, DType::f32, "f32") + "}\n";
  auto fn = parse_function(text);
  const Operation& pure = *fn->body.ops[0];
  const Operation& effectful = *fn->body.ops[1];
  EXPECT_EQ(effect_of(pure), OpEffect::none);
  EXPECT_TRUE(is_pure(pure));
  EXPECT_TRUE(is_speculatable(pure));
  EXPECT_FALSE(has_lasting_effect(pure));
  EXPECT_TRUE(is_removable_when_unused(pure));
  EXPECT_EQ(effect_of(effectful), OpEffect::writes);
  EXPECT_FALSE(is_pure(effectful));
  EXPECT_TRUE(has_lasting_effect(effectful));
  EXPECT_FALSE(is_removable_when_unused(effectful));
  EXPECT_TRUE(writes_memory(effectful));
}

TEST(InlineAsmPasses, DeadCodeDropsAnUnusedPureAsmAndKeepsANonPureOne) {
  const std::string kept = asm_line("  %2", "%1", kTanh, "=f,f", false, DType::f32, "f32");
  const std::string text = "kernel @k(%0: ptr<f32>, %1: f32) {\n" +
                           asm_line("  %3", "%1", kTanh, "=f,f", true, DType::f32, "f32") + kept + "}\n";
  EXPECT_EQ(after(eliminate_dead_code, text), "kernel @k(%0: ptr<f32>, %1: f32) {\n" + kept + "}\n");
}

TEST(InlineAsmPasses, CommonSubexpressionsMergePureAsmsOnly) {
  const std::string args = "kernel @k(%0: ptr<f32>, %1: f32) {\n";
  const std::string pure = args + asm_line("  %2", "%1", kTanh, "=f,f", true, DType::f32, "f32") +
                           asm_line("  %3", "%1", kTanh, "=f,f", true, DType::f32, "f32") +
                           "  %4 = add %2, %3 : f32\n  store %0, %4 {cache = none, evict = none}\n}\n";
  EXPECT_EQ(after(eliminate_common_subexpressions, pure),
            args + asm_line("  %2", "%1", kTanh, "=f,f", true, DType::f32, "f32") +
                "  %3 = add %2, %2 : f32\n  store %0, %3 {cache = none, evict = none}\n}\n");
  const std::string effectful = args + asm_line("  %2", "%1", kTanh, "=f,f", false, DType::f32, "f32") +
                                asm_line("  %3", "%1", kTanh, "=f,f", false, DType::f32, "f32") +
                                "  %4 = add %2, %3 : f32\n  store %0, %4 {cache = none, evict = none}\n}\n";
  EXPECT_EQ(after(eliminate_common_subexpressions, effectful, false), effectful);
}

TEST(InlineAsmPasses, LoopInvariantsHoistAPureAsmAndLeaveANonPureOne) {
  const auto loop = [](bool pure) {
    return "kernel @k(%0: ptr<f32>, %1: f32, %2: i32) {\n  %3 = for %2, %2, %2, %1 : f32 {\n  ^(%4: i32, %5: f32):\n" +
           asm_line("    %6", "%1", kTanh, "=f,f", pure, DType::f32, "f32") +
           "    %7 = add %5, %6 : f32\n    yield %7\n  }\n  store %0, %3 {cache = none, evict = none}\n}\n";
  };
  EXPECT_EQ(after(hoist_loop_invariants, loop(true)),
            "kernel @k(%0: ptr<f32>, %1: f32, %2: i32) {\n" +
                asm_line("  %3", "%1", kTanh, "=f,f", true, DType::f32, "f32") +
                "  %4 = for %2, %2, %2, %1 : f32 {\n  ^(%5: i32, %6: f32):\n    %7 = add %6, %3 : f32\n"
                "    yield %7\n  }\n  store %0, %4 {cache = none, evict = none}\n}\n");
  EXPECT_EQ(after(hoist_loop_invariants, loop(false), false), loop(false));
}

}  // namespace
}  // namespace kiln::ir
