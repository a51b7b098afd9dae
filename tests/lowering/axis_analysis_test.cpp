// Axis analysis on IR text: contiguity, divisibility and constancy of the
// values of small kernels, and the vector width of their loads and stores.
#include "kiln/lowering/axis_analysis.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir_samples.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln::lowering {
namespace {

using Sizes = std::vector<std::int64_t>;

/// A parsed, verified kernel and its analysis.
struct Analysed {
  std::unique_ptr<ir::Function> fn;
  AxisInfoMap infos;

  explicit Analysed(const std::string& text) : fn(ir::parse_function(text)) {
    ir::verify(*fn);
    infos = analyze_axes(*fn);
  }

  /// The value printed as %id.
  const ir::Value& value(int id) const {
    const ir::Value* found = nullptr;
    for (const ir::Value* arg : fn->body.arguments)
      if (arg->id == id) found = arg;
    ir::walk(fn->body, [&](ir::Operation& op) {
      for (const ir::Value* result : op.results)
        if (result->id == id) found = result;
      for (const auto& region : op.regions)
        for (const ir::Value* arg : region->arguments)
          if (arg->id == id) found = arg;
    });
    if (!found) throw std::invalid_argument("no value %" + std::to_string(id));
    return *found;
  }

  const AxisInfo& info(int id) const { return infos.at(value(id)); }

  /// The vector width of the first load or store.
  std::int64_t first_access_width() const {
    std::int64_t width = 0;
    ir::walk(fn->body, [&](ir::Operation& op) {
      if (width == 0 && (op.code == ir::OpCode::load || op.code == ir::OpCode::store))
        width = access_vector_width(infos, op);
    });
    return width;
  }
};

AxisInfo expected(Sizes contiguity, Sizes divisibility, Sizes constancy) {
  return {std::move(contiguity), std::move(divisibility), std::move(constancy), std::nullopt};
}

constexpr std::int64_t kZeroDivisor = std::int64_t{1} << 62;

/// vector_add over `dtype` with `facts` on every argument.
std::string vector_add(const std::string& facts, const std::string& dtype = "f32") {
  return ir_samples::vector_add_text(facts, facts, dtype);
}

TEST(AxisAnalysis, SpecialisedVectorAddLoadsFourFloatsAtOnce) {
  const Analysed k(vector_add(" {divisibility = 16}"));
  EXPECT_EQ(k.info(6), expected({1}, {1024}, {1}));     // pid * 1024
  EXPECT_EQ(k.info(9), expected({1024}, {1024}, {1}));  // pid * 1024 + arange
  EXPECT_EQ(k.info(13), expected({1024}, {16}, {1}));   // 16-byte aligned, 1024 in a row
  EXPECT_EQ(k.info(11), expected({1}, {1}, {16}));      // offs < n flips only at multiples of 16
  EXPECT_EQ(k.first_access_width(), 4);
  int stores = 0;
  ir::walk(k.fn->body, [&](ir::Operation& op) {
    if (op.code != ir::OpCode::store) return;
    EXPECT_EQ(access_vector_width(k.infos, op), 4);
    ++stores;
  });
  EXPECT_EQ(stores, 1);
}

TEST(AxisAnalysis, MultipleOfRaisesTheDivisibilityTheArithmeticCarries) {
  const Analysed k(R"(kernel @hinted(%0: i32, %1: ptr<i32> {divisibility = 16}) {
  %2 = multiple_of %0 {value = 8} : i32
  %3 = program_id {axis = 0} : i32
  %4 = mul %3, %2 : i32
  %5 = arange {start = 0} : tile<64xi32>
  %6 = splat %4 : tile<64xi32>
  %7 = add %6, %5 : tile<64xi32>
  %8 = multiple_of %7 {value = 4} : tile<64xi32>
  %9 = constant {value = 32} : tile<64xi32>
  %10 = multiple_of %9 {value = 4} : tile<64xi32>
  %11 = multiple_of %0 {value = 1} : i32
  %12 = splat %1 : tile<64xptr<i32>>
  %13 = addptr %12, %7 : tile<64xptr<i32>>
  %14 = load %13 {cache = none, evict = none} : tile<64xi32>
}
)");
  EXPECT_EQ(k.info(0), expected({1}, {1}, {1}));
  EXPECT_EQ(k.info(2), expected({1}, {8}, {1}));
  EXPECT_EQ(k.info(7), expected({64}, {8}, {1}));  // row * stride + arange: runs of 64 from multiples of 8
  EXPECT_EQ(k.info(8), expected({1}, {4}, {1}));   // every element a multiple: no runs
  EXPECT_EQ(k.info(10).divisibility, Sizes{32});   // a constant keeps its own, larger divisor
  EXPECT_EQ(k.info(11), k.info(0));                // 1 promises nothing
  EXPECT_EQ(k.first_access_width(), 4);
}

TEST(AxisAnalysis, MaxContiguousAndAGroupedMultipleOfMakeGatheredRunsVectors) {
  const Analysed k(R"(kernel @gather(%0: ptr<f32> {divisibility = 16}, %1: ptr<i32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = splat %1 : tile<64xptr<i32>>
  %4 = addptr %3, %2 : tile<64xptr<i32>>
  %5 = load %4 {cache = none, evict = none} : tile<64xi32>
  %6 = max_contiguous %5 {value = 4} : tile<64xi32>
  %7 = multiple_of %6 {value = 4, group = 4} : tile<64xi32>
  %8 = splat %0 : tile<64xptr<f32>>
  %9 = addptr %8, %7 : tile<64xptr<f32>>
  %10 = load %9 {cache = none, evict = none} : tile<64xf32>
  %11 = addptr %8, %6 : tile<64xptr<f32>>
  %12 = load %11 {cache = none, evict = none} : tile<64xf32>
  %13 = max_contiguous %2 {value = 16} : tile<64xi32>
  %14 = multiple_of %6 {value = 8, group = 8} : tile<64xi32>
  %15 = multiple_of %6 {value = 8, group = 2} : tile<64xi32>
}
)");
  EXPECT_EQ(k.info(5), expected({1}, {1}, {1}));   // gathered: nothing known
  EXPECT_EQ(k.info(6), expected({4}, {1}, {1}));   // runs of 4 from anywhere
  EXPECT_EQ(k.info(7), expected({4}, {4}, {1}));   // each run starts at a multiple of 4
  EXPECT_EQ(k.info(9), expected({4}, {16}, {1}));  // 16-byte aligned runs of 4 floats
  EXPECT_EQ(access_vector_width(k.infos, *k.value(10).def), 4);
  EXPECT_EQ(access_vector_width(k.infos, *k.value(12).def), 1);  // runs, but unaligned
  EXPECT_EQ(k.info(13), k.info(2));                              // arange's runs of 64 are longer already
  EXPECT_EQ(k.info(14), k.info(6));                              // groups longer than the runs: run starts not promised
  EXPECT_EQ(k.info(15), expected({4}, {8}, {1}));                // groups of 2 include every run start
}

TEST(AxisAnalysis, MaxContiguousRunsAlongTheLastDimension) {
  const Analysed k(R"(kernel @rows(%0: tile<4x16xi32>) {
  %1 = max_contiguous %0 {value = 8} : tile<4x16xi32>
  %2 = multiple_of %1 {value = 16, group = 8} : tile<4x16xi32>
}
)");
  EXPECT_EQ(k.info(1), expected({1, 8}, {1, 1}, {1, 1}));
  EXPECT_EQ(k.info(2), expected({1, 8}, {1, 16}, {1, 1}));
}

TEST(AxisAnalysis, VectorAddWithoutFactsAccessesOneElementAtATime) {
  const Analysed k(vector_add(""));
  EXPECT_EQ(k.info(13), expected({1024}, {1}, {1}));
  EXPECT_EQ(k.info(11), expected({1}, {1}, {1}));
  EXPECT_EQ(k.first_access_width(), 1);
}

TEST(AxisAnalysis, SixteenBytesBoundTheVectorOfNarrowElements) {
  const Analysed k(vector_add(" {divisibility = 16}", "f16"));
  EXPECT_EQ(k.info(13), expected({1024}, {16}, {1}));
  EXPECT_EQ(k.first_access_width(), 8);
  const Analysed doubles(vector_add(" {divisibility = 16}", "f64"));
  EXPECT_EQ(doubles.first_access_width(), 2);
}

std::string masked_tail(const std::string& n_facts) {
  return "kernel @tail(%0: ptr<f16> {divisibility = 16}, %1: i32" + n_facts + R"() {
  %2 = program_id {axis = 0} : i32
  %3 = constant {value = 256} : i32
  %4 = mul %2, %3 : i32
  %5 = splat %4 : tile<256xi32>
  %6 = arange {start = 0} : tile<256xi32>
  %7 = add %5, %6 : tile<256xi32>
  %8 = splat %1 : tile<256xi32>
  %9 = cmp %7, %8 {pred = lt} : tile<256xi1>
  %10 = splat %0 : tile<256xptr<f16>>
  %11 = addptr %10, %7 : tile<256xptr<f16>>
  %12 = load %11, %9 {cache = none, evict = none} : tile<256xf16>
}
)";
}

TEST(AxisAnalysis, MaskConstancyFollowsTheDivisibilityOfTheBound) {
  const Analysed sixteen(masked_tail(" {divisibility = 16}"));
  EXPECT_EQ(sixteen.info(9).constancy, Sizes{16});
  EXPECT_EQ(sixteen.first_access_width(), 8);
  const Analysed four(masked_tail(" {divisibility = 4}"));
  EXPECT_EQ(four.info(9).constancy, Sizes{4});
  EXPECT_EQ(four.first_access_width(), 4);
  const Analysed unknown(masked_tail(""));
  EXPECT_EQ(unknown.info(9).constancy, Sizes{1});
  EXPECT_EQ(unknown.first_access_width(), 1);
}

TEST(AxisAnalysis, ComparisonsFlipAtTheBoundOnlyForLessThanAndGreaterOrEqual) {
  const Analysed k(R"(kernel @k(%0: i32 {divisibility = 16}) {
  %1 = arange {start = 0} : tile<64xi32>
  %2 = splat %0 : tile<64xi32>
  %3 = cmp %1, %2 {pred = ge} : tile<64xi1>
  %4 = cmp %1, %2 {pred = le} : tile<64xi1>
  %5 = cmp %2, %1 {pred = gt} : tile<64xi1>
  %6 = cmp %2, %1 {pred = lt} : tile<64xi1>
}
)");
  EXPECT_EQ(k.info(3).constancy, Sizes{16});
  EXPECT_EQ(k.info(4).constancy, Sizes{1});  // flips between n and n + 1
  EXPECT_EQ(k.info(5).constancy, Sizes{16});
  EXPECT_EQ(k.info(6).constancy, Sizes{1});
}

TEST(AxisAnalysis, TwoDimensionalRowTimesStrideIsContiguousAlongColumnsOnly) {
  const std::string text = R"(kernel @rows(%0: ptr<f32> {divisibility = 16}, %1: i32 STRIDE) {
  %2 = arange {start = 0} : tile<32xi32>
  %3 = expand_dims %2 {axis = 1} : tile<32x1xi32>
  %4 = splat %1 : tile<32x1xi32>
  %5 = mul %3, %4 : tile<32x1xi32>
  %6 = broadcast %5 : tile<32x64xi32>
  %7 = arange {start = 0} : tile<64xi32>
  %8 = expand_dims %7 {axis = 0} : tile<1x64xi32>
  %9 = broadcast %8 : tile<32x64xi32>
  %10 = add %6, %9 : tile<32x64xi32>
  %11 = splat %0 : tile<32x64xptr<f32>>
  %12 = addptr %11, %10 : tile<32x64xptr<f32>>
  %13 = load %12 {cache = none, evict = none} : tile<32x64xf32>
}
)";
  std::string specialised = text;
  specialised.replace(specialised.find("STRIDE"), 6, "{divisibility = 16}");
  const Analysed k(specialised);
  EXPECT_EQ(k.info(3), expected({32, 1}, {kZeroDivisor, 1}, {1, 1}));
  EXPECT_EQ(k.info(5), expected({1, 1}, {16, 16}, {1, 1}));
  EXPECT_EQ(k.info(6), expected({1, 1}, {16, 16}, {1, 64}));
  EXPECT_EQ(k.info(8), expected({1, 64}, {1, kZeroDivisor}, {1, 1}));
  EXPECT_EQ(k.info(9), expected({1, 64}, {1, kZeroDivisor}, {32, 1}));
  EXPECT_EQ(k.info(10), expected({1, 64}, {1, 16}, {1, 1}));
  EXPECT_EQ(k.info(12), expected({1, 64}, {4, 16}, {1, 1}));
  EXPECT_EQ(fastest_dimension(k.info(12)), 1);
  EXPECT_EQ(k.first_access_width(), 4);

  std::string plain = text;
  plain.replace(plain.find("STRIDE"), 6, "");
  const Analysed unaligned(plain);
  EXPECT_EQ(unaligned.info(10), expected({1, 64}, {1, 1}, {1, 1}));
  EXPECT_EQ(unaligned.first_access_width(), 1);
}

TEST(AxisAnalysis, MultiplyDivideRemainderShiftAndMaskByConstants) {
  const Analysed k(R"(kernel @k(%0: i32 {divisibility = 16}) {
  %1 = arange {start = 0} : tile<64xi32>
  %2 = constant {value = 2} : tile<64xi32>
  %3 = mul %1, %2 : tile<64xi32>
  %4 = constant {value = 4} : tile<64xi32>
  %5 = div %1, %4 : tile<64xi32>
  %6 = rem %1, %4 : tile<64xi32>
  %7 = splat %0 : tile<64xi32>
  %8 = mul %7, %2 : tile<64xi32>
  %9 = div %7, %4 : tile<64xi32>
  %10 = constant {value = 3} : tile<64xi32>
  %11 = shl %1, %10 : tile<64xi32>
  %12 = shr %1, %10 : tile<64xi32>
  %13 = constant {value = 7} : tile<64xi32>
  %14 = and %1, %13 : tile<64xi32>
  %15 = constant {value = -8} : tile<64xi32>
  %16 = and %1, %15 : tile<64xi32>
  %17 = add %7, %1 : tile<64xi32>
  %18 = constant {value = 1} : tile<64xi32>
  %19 = mul %17, %18 : tile<64xi32>
  %20 = div %17, %4 : tile<64xi32>
}
)");
  EXPECT_EQ(k.info(3), expected({1}, {2}, {1}));    // 0, 2, 4, …
  EXPECT_EQ(k.info(5), expected({1}, {1}, {4}));    // 0, 0, 0, 0, 1, …
  EXPECT_EQ(k.info(6), expected({4}, {4}, {1}));    // 0, 1, 2, 3, 0, …
  EXPECT_EQ(k.info(8), expected({1}, {32}, {64}));  // 2n
  EXPECT_EQ(k.info(9), expected({1}, {4}, {64}));   // n / 4, n a multiple of 16
  EXPECT_EQ(k.info(11), expected({1}, {8}, {1}));   // i << 3
  EXPECT_EQ(k.info(12), expected({1}, {1}, {8}));   // i >> 3
  EXPECT_EQ(k.info(14), expected({8}, {8}, {1}));   // i & 7 == i % 8
  EXPECT_EQ(k.info(16), expected({1}, {8}, {8}));   // i & -8
  EXPECT_EQ(k.info(19), k.info(17));                // x * 1 == x
  EXPECT_EQ(k.info(17), expected({64}, {16}, {1}));
  EXPECT_EQ(k.info(20), expected({1}, {1}, {4}));  // (n + i) / 4 with n a multiple of 16
}

TEST(AxisAnalysis, ConstantsAreFoldedAndCarryTheirValue) {
  const Analysed k(R"(kernel @k() {
  %0 = constant {value = 48} : i32
  %1 = constant {value = 3} : i32
  %2 = mul %0, %1 : i32
  %3 = splat %2 : tile<8xi32>
  %4 = arange {start = 4} : tile<8xi32>
  %5 = add %3, %4 : tile<8xi32>
}
)");
  EXPECT_EQ(k.info(0), (AxisInfo{{1}, {16}, {1}, 48}));
  EXPECT_EQ(k.info(2), (AxisInfo{{1}, {16}, {1}, 144}));
  EXPECT_EQ(k.info(3), (AxisInfo{{1}, {16}, {8}, 144}));
  EXPECT_EQ(k.info(4), expected({8}, {4}, {1}));
  EXPECT_EQ(k.info(5), expected({8}, {4}, {1}));
}

// The analysis folds integer constants with the canonicaliser's rules
// (kiln/ir/integer_arithmetic.hpp): a negative shift amount is past the width
// (the GPU code compares it unsigned), so a signed shr fills with the sign;
// this analysis once clamped it to 0 and kept the value. MIN / -1 wraps.
TEST(AxisAnalysis, ConstantsFoldWithTheIrsIntegerRules) {
  const Analysed k(R"(kernel @k() {
  %0 = constant {value = -64} : i32
  %1 = constant {value = -3} : i32
  %2 = shr %0, %1 : i32
  %3 = constant {value = -2147483648} : i32
  %4 = constant {value = -1} : i32
  %5 = div %3, %4 : i32
  %6 = rem %3, %4 : i32
  %7 = constant {value = 0} : i32
  %8 = div %0, %7 : i32
}
)");
  EXPECT_EQ(k.info(2).constant, -1);
  EXPECT_EQ(k.info(5).constant, -2147483648);
  EXPECT_EQ(k.info(6).constant, 0);
  EXPECT_EQ(k.info(8).constant, std::nullopt) << "division by zero faults at run time";
}

TEST(AxisAnalysis, TransAndReshapeMoveTheFacts) {
  const Analysed k(R"(kernel @k(%0: i32 {divisibility = 16}) {
  %1 = arange {start = 0} : tile<16xi32>
  %2 = expand_dims %1 {axis = 0} : tile<1x16xi32>
  %3 = splat %0 : tile<8x1xi32>
  %4 = broadcast %3 : tile<8x16xi32>
  %5 = broadcast %2 : tile<8x16xi32>
  %6 = add %4, %5 : tile<8x16xi32>
  %7 = trans %6 {order = [1, 0]} : tile<16x8xi32>
  %8 = reshape %1 : tile<1x16xi32>
  %9 = reshape %6 : tile<128xi32>
  %10 = reshape %6 : tile<16x8xi32>
}
)");
  EXPECT_EQ(k.info(6), expected({1, 16}, {1, 16}, {8, 1}));
  EXPECT_EQ(k.info(7), expected({16, 1}, {16, 1}, {1, 8}));
  EXPECT_EQ(k.info(8), k.info(2));
  EXPECT_EQ(k.info(9), expected({16}, {16}, {1}));
  EXPECT_EQ(k.info(10), expected({1, 8}, {1, 8}, {1, 1}));
}

TEST(AxisAnalysis, SelectAndCastKeepWhatBothSidesShare) {
  const Analysed k(R"(kernel @k(%0: i32 {divisibility = 16}, %1: i1) {
  %2 = arange {start = 0} : tile<32xi32>
  %3 = splat %0 : tile<32xi32>
  %4 = add %3, %2 : tile<32xi32>
  %5 = splat %1 : tile<32xi1>
  %6 = select %5, %4, %2 : tile<32xi32>
  %7 = cast %6 : tile<32xi64>
  %8 = constant {value = 1} : tile<32xi32>
  %9 = add %4, %8 : tile<32xi32>
  %10 = select %5, %4, %9 : tile<32xi32>
}
)");
  EXPECT_EQ(k.info(6), expected({32}, {16}, {1}));
  EXPECT_EQ(k.info(7), k.info(6));
  EXPECT_EQ(k.info(10), expected({32}, {1}, {1}));
}

std::string pointer_loop(const std::string& step_facts) {
  return "kernel @walk(%0: ptr<f32> {divisibility = 16}, %1: i32 {divisibility = 16}, %2: i32" + step_facts + R"() {
  %3 = arange {start = 0} : tile<128xi32>
  %4 = splat %0 : tile<128xptr<f32>>
  %5 = addptr %4, %3 : tile<128xptr<f32>>
  %6 = constant {value = 0} : i32
  %7 = constant {value = 1} : i32
  %8 = splat %2 : tile<128xi32>
  %9 = for %6, %1, %7, %5 : tile<128xptr<f32>> {
  ^(%10: i32, %11: tile<128xptr<f32>>):
    %12 = load %11 {cache = none, evict = none} : tile<128xf32>
    %13 = addptr %11, %8 : tile<128xptr<f32>>
    yield %13
  }
}
)";
}

TEST(AxisAnalysis, LoopCarriedPointersKeepOnlyWhatEveryIterationKeeps) {
  const Analysed aligned(pointer_loop(" {divisibility = 16}"));
  EXPECT_EQ(aligned.info(11), expected({128}, {16}, {1}));
  EXPECT_EQ(aligned.info(9), expected({128}, {16}, {1}));
  EXPECT_EQ(aligned.info(10), expected({1}, {1}, {1}));  // 0, 1, 2, …
  EXPECT_EQ(aligned.first_access_width(), 4);
  // A step of unknown alignment spoils the alignment from the second
  // iteration on: the first iteration alone would still allow 4.
  const Analysed unaligned(pointer_loop(""));
  EXPECT_EQ(unaligned.info(11), expected({128}, {4}, {1}));
  EXPECT_EQ(unaligned.first_access_width(), 1);
}

TEST(AxisAnalysis, IfResultsMeetBothBranches) {
  const Analysed k(R"(kernel @k(%0: ptr<f32> {divisibility = 16}, %1: i1) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = splat %0 : tile<64xptr<f32>>
  %4 = addptr %3, %2 : tile<64xptr<f32>>
  %5 = constant {value = 2} : tile<64xi32>
  %6 = if %1 : tile<64xptr<f32>> {
  ^():
    yield %4
  } {
  ^():
    %7 = addptr %4, %5 : tile<64xptr<f32>>
    yield %7
  }
  %8 = load %6 {cache = none, evict = none} : tile<64xf32>
}
)");
  EXPECT_EQ(k.info(6), expected({64}, {8}, {1}));
  EXPECT_EQ(k.first_access_width(), 2);
}

TEST(AxisAnalysis, LoadedValuesAreUnknown) {
  const Analysed k(R"(kernel @k(%0: ptr<i32> {divisibility = 16}) {
  %1 = arange {start = 0} : tile<16xi32>
  %2 = splat %0 : tile<16xptr<i32>>
  %3 = addptr %2, %1 : tile<16xptr<i32>>
  %4 = load %3 {cache = none, evict = none} : tile<16xi32>
  %5 = cast %4 : tile<16xf32>
}
)");
  EXPECT_EQ(k.info(4), expected({1}, {1}, {1}));
  EXPECT_EQ(k.infos.find(k.value(5)), nullptr);
  try {
    (void)k.infos.at(k.value(5));
    ADD_FAILURE() << "a float value has no axis info";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "axis analysis: %5 (tile<16xf32>) was not analysed");
  }
}

}  // namespace
}  // namespace kiln::lowering
