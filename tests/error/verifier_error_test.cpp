// The verifier rejects malformed kernels with one line naming the op, the
// problem, the values with their types and the source line.
#include <gtest/gtest.h>

#include <string>

#include "kiln/ir/builder.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln::ir {
namespace {

std::string verify_error(const Function& fn) {
  try {
    verify(fn);
  } catch (const IRError& e) {
    return e.what();
  }
  return "<verified>";
}

std::string verify_error(const std::string& text) { return verify_error(*parse_function(text)); }

TEST(VerifierError, ElementwiseOperandTypesDiffer) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<16xf32>, %1: tile<16xf16>) {
  %2 = add %0, %1 : tile<16xf32> loc("kernels/softmax.hpp":41)
})"),
            "verify: add: operand types differ, %0 is tile<16xf32>, %1 is tile<16xf16> (softmax.hpp:41)");
}

TEST(VerifierError, ElementwiseResultDiffers) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<16xf32>) {
  %1 = exp %0 : tile<16xf16>
})"),
            "verify: exp: result type differs from the operands, %0 is tile<16xf32>, %1 is tile<16xf16>");
}

TEST(VerifierError, BitwiseOnFloats) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: f32) {
  %1 = xor %0, %0 : f32 loc("k.hpp":3)
})"),
            "verify: xor: operands must be integers, %0 is f32 (k.hpp:3)");
}

TEST(VerifierError, MathOnIntegers) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32) {
  %1 = sqrt %0 : i32
})"),
            "verify: sqrt: operands must be floats, %0 is i32");
}

TEST(VerifierError, FloatClassOfIntegersOrToNonBooleans) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xi32>) {
  %1 = isnan %0 : tile<8xi1> loc("k.hpp":5)
})"),
            "verify: isnan: operand must be a float, %0 is tile<8xi32> (k.hpp:5)");
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xf32>) {
  %1 = isinf %0 : tile<8xf32>
})"),
            "verify: isinf: result must be tile<8xi1>, %1 is tile<8xf32>");
}

TEST(VerifierError, ArithmeticOnPointers) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: ptr<f32>) {
  %1 = add %0, %0 : ptr<f32>
})"),
            "verify: add: pointer operands are not allowed (use addptr), %0 is ptr<f32>");
}

TEST(VerifierError, TileDimensionNotAPowerOfTwo) {
  EXPECT_EQ(verify_error(R"(kernel @k() {
  %0 = arange {start = 0} : tile<96xi32> loc("rope.hpp":7)
})"),
            "verify: arange: tile dimension 96 is not a power of two (pad the tile to 128 and mask the extra "
            "elements), %0 is tile<96xi32> (rope.hpp:7)");
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<4x3xf32>) {
})"),
            "verify: kernel @k: tile dimension 3 is not a power of two (pad the tile to 4 and mask the extra "
            "elements), %0 is tile<4x3xf32>");
}

TEST(VerifierError, BadBroadcast) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<4x2xf32>) {
  %1 = broadcast %0 : tile<4x8xf32> loc("k.hpp":2)
})"),
            "verify: broadcast: cannot broadcast dimension 1 from 2 to 8, %0 is tile<4x2xf32>, %1 is tile<4x8xf32> "
            "(k.hpp:2)");
}

TEST(VerifierError, BroadcastRanksDiffer) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xf32>) {
  %1 = broadcast %0 : tile<4x8xf32>
})"),
            "verify: broadcast: ranks differ, %0 is tile<8xf32>, %1 is tile<4x8xf32>");
}

TEST(VerifierError, DotKMismatch) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<64x32xf16>, %1: tile<16x64xf16>, %2: tile<64x64xf32>) {
  %3 = dot %0, %1, %2 {precision = ieee} : tile<64x64xf32> loc("kernels/matmul.hpp":41)
})"),
            "verify: dot: K mismatch, %0 is tile<64x32xf16>, %1 is tile<16x64xf16> (matmul.hpp:41)");
}

TEST(VerifierError, DotAccumulatorType) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<16x32xf16>, %1: tile<32x8xf16>, %2: tile<16x8xf16>) {
  %3 = dot %0, %1, %2 {precision = ieee} : tile<16x8xf16>
})"),
            "verify: dot: accumulator must be tile<16x8xf32>, %2 is tile<16x8xf16>");
}

TEST(VerifierError, MissingAttribute) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = reduce %0 : tile<4xf32> loc("k.hpp":9) {
  ^(%2: f32, %3: f32):
    %4 = add %2, %3 : f32
    yield %4
  }
})"),
            "verify: reduce: missing attribute 'axis' (k.hpp:9)");
}

TEST(VerifierError, AttributeOfTheWrongKind) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32) {
  %1 = cmp %0, %0 {pred = "lt"} : i1
})"),
            "verify: cmp: attribute 'pred' must be one of: eq ne lt le gt ge");
}

TEST(VerifierError, UnknownSymbol) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: ptr<f32>) {
  %1 = load %0 {cache = cg, evict = never} : f32
})"),
            "verify: load: attribute 'evict' must be one of: none first last; got 'never'");
}

TEST(VerifierError, UseBeforeDefinition) {
  Function fn;
  fn.name = "k";
  Builder b(fn);
  b.set_loc({"src/k.hpp", 7});
  Value* one = b.constant_int(Type::scalar(DType::i32), 1);
  Operation* add = b.create(OpCode::add, {one, one}, {Type::scalar(DType::i32)});
  Value* later = b.constant_int(Type::scalar(DType::i32), 2);
  add->operands[1] = later;
  EXPECT_EQ(verify_error(fn), "verify: add: operand 1 is used before its definition, %2 is i32 (k.hpp:7)");
}

TEST(VerifierError, ValueFromAnInnerRegionUsedOutside) {
  auto fn = parse_function(R"(kernel @k(%0: i1, %1: f32) {
  %2 = if %0 : f32 {
  ^():
    %3 = neg %1 : f32
    yield %3
  } {
  ^():
    yield %1
  }
  %4 = add %2, %2 : f32 loc("k.hpp":12)
})");
  Operation* add = fn->body.ops[1].get();
  add->operands[1] = fn->body.ops[0]->regions[0]->ops[0]->result();
  EXPECT_EQ(verify_error(*fn),
            "verify: add: operand 1 is defined in a region that does not enclose this use, %3 is f32 (k.hpp:12)");
}

TEST(VerifierError, ValueFromAnotherKernel) {
  auto other = parse_function("kernel @other(%0: f32) {\n}\n");
  auto fn = parse_function(R"(kernel @k(%0: f32) {
  %1 = neg %0 : f32
})");
  fn->body.ops[0]->operands[0] = other->body.arguments[0];
  EXPECT_EQ(verify_error(*fn), "verify: neg: operand 0 is not defined in this kernel, %0 is f32");
}

TEST(VerifierError, ForYieldCountMismatch) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32, %1: f32) {
  %2 = for %0, %0, %0, %1 : f32 loc("k.hpp":20) {
  ^(%3: i32, %4: f32):
    yield %4, %4
  }
})"),
            "verify: for: body yields 2 values, expected 1 (f32) (k.hpp:20)");
}

TEST(VerifierError, ForYieldTypeMismatch) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32, %1: f32) {
  %2 = for %0, %0, %0, %1 : f32 {
  ^(%3: i32, %4: f32):
    yield %3
  }
})"),
            "verify: for: body yield 0 must be f32, %3 is i32");
}

TEST(VerifierError, ForBoundsOfDifferentTypes) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32, %1: i64) {
  for %0, %1, %0 {
  ^(%2: i32):
  }
})"),
            "verify: for: lo, hi and step must be integer scalars of one type, %0 is i32, %1 is i64, %0 is i32");
}

TEST(VerifierError, ForBodyArguments) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32, %1: f32) {
  %2 = for %0, %0, %0, %1 : f32 {
  ^(%3: i32):
    yield %1
  }
})"),
            "verify: for: body has 1 argument, expected 2 (i32, f32)");
}

TEST(VerifierError, NonScalarIfCondition) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<16xi1>) {
  if %0 loc("k.hpp":5) {
  ^():
  } {
  ^():
  }
})"),
            "verify: if: condition must be an i1 scalar, %0 is tile<16xi1> (k.hpp:5)");
}

TEST(VerifierError, IfMissingYield) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i1, %1: f32) {
  %2 = if %0 : f32 {
  ^():
    yield %1
  } {
  ^():
  }
})"),
            "verify: if: else region does not end with a yield of f32");
}

TEST(VerifierError, WhileConditionMustYieldABool) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32) {
  %1 = while %0 : i32 {
  ^(%2: i32):
    yield %2
  } {
  ^(%3: i32):
    yield %3
  }
})"),
            "verify: while: condition region yield 0 must be i1, %2 is i32");
}

TEST(VerifierError, YieldInTheKernelBody) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32) {
  yield %0 loc("k.hpp":4)
})"),
            "verify: yield: a yield in the kernel body (k.hpp:4)");
}

TEST(VerifierError, YieldNotLast) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32, %1: f32) {
  %2 = for %0, %0, %0, %1 : f32 {
  ^(%3: i32, %4: f32):
    yield %4
    %5 = neg %4 : f32
  }
})"),
            "verify: yield: a yield must be the last op of its region");
}

TEST(VerifierError, CmpResultMustBeBool) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xi32>) {
  %1 = cmp %0, %0 {pred = lt} : tile<8xi32>
})"),
            "verify: cmp: result must be tile<8xi1>, %1 is tile<8xi32>");
}

TEST(VerifierError, SelectConditionShape) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i1, %1: tile<8xf32>) {
  %2 = select %0, %1, %1 : tile<8xf32>
})"),
            "verify: select: condition must be tile<8xi1>, %0 is i1");
}

TEST(VerifierError, LoadMaskShape) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<64xptr<f16>>, %1: tile<32xi1>) {
  %2 = load %0, %1 {cache = none, evict = none} : tile<64xf16>
})"),
            "verify: load: mask must be tile<64xi1>, %1 is tile<32xi1>");
}

TEST(VerifierError, LoadResultIsThePointee) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<64xptr<f16>>) {
  %1 = load %0 {cache = none, evict = none} : tile<64xf32>
})"),
            "verify: load: result must be tile<64xf16>, %1 is tile<64xf32>");
}

TEST(VerifierError, StoreValueShape) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<64xptr<f32>>, %1: tile<32xf32>) {
  store %0, %1 {cache = none, evict = none}
})"),
            "verify: store: value must be tile<64xf32>, %1 is tile<32xf32>");
}

TEST(VerifierError, LoadOperandCount) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: ptr<f32>, %1: i1, %2: f32) {
  %3 = load %0, %1, %2, %2 {cache = none, evict = none} : f32
})"),
            "verify: load: expects 1 to 3 operands (pointer, mask, other), got 4");
}

TEST(VerifierError, FixedOperandCount) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: f32) {
  %1 = add %0, %0, %0 : f32
})"),
            "verify: add: expects 2 operands, got 3");
}

TEST(VerifierError, AddptrOffsetMustBeAnInteger) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: ptr<f32>, %1: f32) {
  %2 = addptr %0, %1 : ptr<f32>
})"),
            "verify: addptr: offset must be an integer, %1 is f32");
}

TEST(VerifierError, ReduceAxisOutOfRange) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = reduce %0 {axis = 2} : tile<4xf32> {
  ^(%2: f32, %3: f32):
    yield %2
  }
})"),
            "verify: reduce: axis 2 is out of range, %0 is tile<4x8xf32>");
}

TEST(VerifierError, ReduceCombineArguments) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = reduce %0 {axis = 1} : tile<4xf32> {
  ^(%2: f32, %3: f16):
    yield %2
  }
})"),
            "verify: reduce: combine region argument 1 must be f32, %3 is f16");
}

TEST(VerifierError, ArgumentFactsOnAFloat) {
  EXPECT_EQ(verify_error("kernel @k(%0: f32 {divisibility = 16}) {\n}\n"),
            "verify: kernel @k: argument %0 (f32): divisibility applies to integer and pointer scalars only");
  EXPECT_EQ(verify_error("kernel @k(%0: ptr<f32> {equal_to = 1}) {\n}\n"),
            "verify: kernel @k: argument %0 (ptr<f32>): equal_to = 1 applies to integer scalars only");
  EXPECT_EQ(verify_error("kernel @k(%0: i1 {equal_to = 1}) {\n}\n"),
            "verify: kernel @k: argument %0 (i1): equal_to = 1 applies to integer scalars only");
}

TEST(VerifierError, ArgumentFactsCount) {
  auto fn = parse_function("kernel @k(%0: i32, %1: i32) {\n}\n");
  fn->argument_facts = {ArgumentFacts{.divisibility = 16}};
  EXPECT_EQ(verify_error(*fn), "verify: kernel @k: argument facts are given for 1 of 2 arguments");
}

TEST(VerifierError, DotInputDtype) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<16x16xi16>, %1: tile<16x16xi16>, %2: tile<16x16xi32>) {
  %3 = dot %0, %1, %2 {precision = ieee} : tile<16x16xi32>
})"),
            "verify: dot: inputs must be f16, bf16, f32, f8e4m3, f8e5m2 or i8, %0 is tile<16x16xi16>");
}

TEST(VerifierError, TransOrderNotAPermutation) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = trans %0 {order = [0, 0]} : tile<4x8xf32>
})"),
            "verify: trans: order is not a permutation of the operand's dimensions, %0 is tile<4x8xf32>");
}

TEST(VerifierError, ExpandDimsResultShape) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<16xi32>) {
  %1 = expand_dims %0 {axis = 0} : tile<16x1xi32>
})"),
            "verify: expand_dims: result must be tile<1x16xi32>, %1 is tile<16x1xi32>");
}

TEST(VerifierError, ReshapeElementCount) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = reshape %0 : tile<16xf32>
})"),
            "verify: reshape: element counts differ, %0 is tile<4x8xf32>, %1 is tile<16xf32>");
}

TEST(VerifierError, SplatOfATile) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<4xf32>) {
  %1 = splat %0 : tile<4xf32>
})"),
            "verify: splat: operand must be a scalar, %0 is tile<4xf32>");
}

TEST(VerifierError, ArangeMustBeOneDimensional) {
  EXPECT_EQ(verify_error(R"(kernel @k() {
  %0 = arange {start = 0} : tile<4x4xi32>
})"),
            "verify: arange: result must be a 1-D tile of i32, %0 is tile<4x4xi32>");
}

TEST(VerifierError, GridAxisOutOfRange) {
  EXPECT_EQ(verify_error(R"(kernel @k() {
  %0 = program_id {axis = 3} : i32
})"),
            "verify: program_id: axis 3 is not 0, 1 or 2");
}

TEST(VerifierError, BitcastWidthsDiffer) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xf32>) {
  %1 = bitcast %0 : tile<8xi16>
})"),
            "verify: bitcast: bit widths differ, %0 is tile<8xf32>, %1 is tile<8xi16>");
}

TEST(VerifierError, CastPointerToNarrowInteger) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: ptr<f32>) {
  %1 = cast %0 : i32
})"),
            "verify: cast: pointers cast only to pointers, i64 or u64, %0 is ptr<f32>, %1 is i32");
}

TEST(VerifierError, ConstantOutOfRange) {
  EXPECT_EQ(verify_error(R"(kernel @k() {
  %0 = constant {value = 300} : i8
})"),
            "verify: constant: value 300 is out of range, %0 is i8");
}

TEST(VerifierError, AssertMessageWithANewline) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i1) {
  assert %0 {message = "first\nsecond"}
})"),
            "verify: assert: the message holds the control character 0x0a; a fault report is one line");
}

TEST(VerifierError, PrintOfTilesOfDifferentShapes) {
  // Every device rejects it: a GPU thread prints its elements of each tile on one line.
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32) {
  %1 = arange {start = 0} : tile<64xi32>
  %2 = arange {start = 0} : tile<128xi32>
  print %1, %0, %2 {prefix = ""} loc("two.hpp":3)
})"),
            "verify: print: tile operands differ in shape; print them separately, %1 is tile<64xi32>, %2 is "
            "tile<128xi32> (two.hpp:3)");
}

TEST(VerifierError, MultipleOfNotAPowerOfTwo) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32) {
  %1 = multiple_of %0 {value = 12} : i32
})"),
            "verify: multiple_of: value 12 is not a positive power of two, %0 is i32");
}

TEST(VerifierError, MultipleOfFloats) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xf32>) {
  %1 = multiple_of %0 {value = 4} : tile<8xf32>
})"),
            "verify: multiple_of: operand must be integers or pointers, %0 is tile<8xf32>");
}

TEST(VerifierError, MultipleOfGroupNotAPowerOfTwo) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xi32>) {
  %1 = multiple_of %0 {value = 4, group = 3} : tile<8xi32>
})"),
            "verify: multiple_of: group 3 is not a positive power of two, %0 is tile<8xi32>");
}

TEST(VerifierError, MultipleOfGroupOfAScalar) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: i32) {
  %1 = multiple_of %0 {value = 4, group = 4} : i32
})"),
            "verify: multiple_of: a group needs a tile operand, %0 is i32");
}

TEST(VerifierError, MaxContiguousNotAPowerOfTwo) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xi32>) {
  %1 = max_contiguous %0 {value = 6} : tile<8xi32>
})"),
            "verify: max_contiguous: value 6 is not a positive power of two, %0 is tile<8xi32>");
}

TEST(VerifierError, MaxContiguousLongerThanTheLastDimension) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<16x4xi64>) {
  %1 = max_contiguous %0 {value = 8} : tile<16x4xi64>
})"),
            "verify: max_contiguous: value 8 exceeds the last dimension 4, %0 is tile<16x4xi64>");
}

TEST(VerifierError, MaxContiguousOfPointers) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: tile<8xptr<f32>>) {
  %1 = max_contiguous %0 {value = 4} : tile<8xptr<f32>>
})"),
            "verify: max_contiguous: operand must be an integer tile, %0 is tile<8xptr<f32>>");
}

TEST(VerifierError, AtomicBitwiseKindOnFloats) {
  EXPECT_EQ(verify_error(R"(kernel @k(%0: ptr<f32>, %1: f32) {
  %2 = atomic_rmw %0, %1 {kind = or, order = relaxed, scope = gpu} : f32
})"),
            "verify: atomic_rmw: kind 'or' needs an integer pointee, %0 is ptr<f32>");
}

}  // namespace
}  // namespace kiln::ir
