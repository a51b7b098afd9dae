// The pipeliner on loads whose pointers and masks read carried values
// (software_pipeline.cpp), IR text in and printed IR out: the prologue steps
// the carried pointers through num_stages - 1 updates, the loop carries the
// advanced copies beside the current ones and issues the copies from them,
// and DCE then drops the current copies, which only their own updates read.
// Loads whose carried values are updated by a load or an integer division,
// or whose `other` is not +0, keep their loads.
#include <gtest/gtest.h>

#include <string>

#include "ir_samples.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln::ir {
namespace {

using ir_samples::fill;

/// A 16 x 16 x 16 f16 matmul step per iteration of a loop over %n
/// iterations, loading A and B through pointer tiles the loop carries and
/// advances by {UPDATE_A} / {UPDATE_B} (ops defining %next_a / %next_b),
/// masked by k < %n with `other` {OTHER}.
std::string carried_matmul(const std::string& update_a, const std::string& update_b, const std::string& other) {
  return fill(R"(kernel @carried(%a: ptr<f16>, %b: ptr<f16>, %c: ptr<f32>, %n: i32) {
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %r = arange {start = 0} : tile<16xi32>
  %rows = expand_dims %r {axis = 1} : tile<16x1xi32>
  %cols = expand_dims %r {axis = 0} : tile<1x16xi32>
  %sixteen = constant {value = 16} : tile<16x1xi32>
  %row_offsets = mul %rows, %sixteen : tile<16x1xi32>
  %rb = broadcast %row_offsets : tile<16x16xi32>
  %cb = broadcast %cols : tile<16x16xi32>
  %offsets = add %rb, %cb : tile<16x16xi32>
  %as = splat %a : tile<16x16xptr<f16>>
  %pa = addptr %as, %offsets : tile<16x16xptr<f16>>
  %bs = splat %b : tile<16x16xptr<f16>>
  %pb = addptr %bs, %offsets : tile<16x16xptr<f16>>
  %ns = splat %n : tile<16x16xi32>
  %other = constant {value = {OTHER}} : tile<16x16xf16>
  %acc0 = constant {value = 0.0} : tile<16x16xf32>
  %ra, %rb2, %racc = for %zero, %n, %one, %pa, %pb, %acc0 : tile<16x16xptr<f16>>, tile<16x16xptr<f16>>, tile<16x16xf32> {
  ^(%k: i32, %ca: tile<16x16xptr<f16>>, %cbp: tile<16x16xptr<f16>>, %acc: tile<16x16xf32>):
    %ks = splat %k : tile<16x16xi32>
    %mask = cmp %ks, %ns {pred = lt} : tile<16x16xi1>
    %ta = load %ca, %mask, %other {cache = none, evict = none} : tile<16x16xf16>
    %tb = load %cbp, %mask, %other {cache = none, evict = none} : tile<16x16xf16>
    %d = dot %ta, %tb, %acc {precision = ieee} : tile<16x16xf32>
{UPDATE_A}
{UPDATE_B}
    yield %next_a, %next_b, %d
  }
  %cs = splat %c : tile<16x16xptr<f32>>
  %pc = addptr %cs, %offsets : tile<16x16xptr<f32>>
  store %pc, %racc {cache = none, evict = none}
}
)",
              {{"UPDATE_A", update_a}, {"UPDATE_B", update_b}, {"OTHER", other}});
}

const std::string kAdvanceA = R"(    %step_a = constant {value = 16} : tile<16x16xi32>
    %next_a = addptr %ca, %step_a : tile<16x16xptr<f16>>)";
const std::string kAdvanceB = R"(    %step_b = constant {value = 256} : tile<16x16xi32>
    %next_b = addptr %cbp, %step_b : tile<16x16xptr<f16>>)";

/// The kernel after pipeline_dot_loads at `stages`, verified, then
/// simplified as the optimiser does after it (canonicalize, cse, licm and
/// dce, verified after each), printed.
std::string pipelined(const std::string& text, int stages, bool changed = true) {
  auto fn = parse_function(text);
  verify(*fn);
  EXPECT_EQ(pipeline_dot_loads(*fn, stages), changed);
  verify(*fn);
  optimize(*fn);
  return print(*fn);
}

/// How many times `needle` occurs in `text`.
int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Before the loop, iteration 0's copies read the initial pointers (%15,
// %17) and iteration 1's the pointers advanced once (%28, %30); the loop
// starts with them advanced twice (%36, %37). Each iteration k copies
// iteration k + 2 through the carried advanced pointers (%47, %48) and
// yields them advanced once more (%64, %65); the loop's own pointers are gone.
TEST(CarriedPipelineIr, CarriedPointersAreCarriedAheadAndTheCurrentOnesGo) {
  EXPECT_EQ(pipelined(carried_matmul(kAdvanceA, kAdvanceB, "0.0"), 3),
            R"(kernel @carried(%0: ptr<f16>, %1: ptr<f16>, %2: ptr<f32>, %3: i32) {
  %4 = constant {value = 0} : i32
  %5 = constant {value = 1} : i32
  %6 = arange {start = 0} : tile<16xi32>
  %7 = expand_dims %6 {axis = 1} : tile<16x1xi32>
  %8 = expand_dims %6 {axis = 0} : tile<1x16xi32>
  %9 = constant {value = 16} : tile<16x1xi32>
  %10 = mul %7, %9 : tile<16x1xi32>
  %11 = broadcast %10 : tile<16x16xi32>
  %12 = broadcast %8 : tile<16x16xi32>
  %13 = add %11, %12 : tile<16x16xi32>
  %14 = splat %0 : tile<16x16xptr<f16>>
  %15 = addptr %14, %13 : tile<16x16xptr<f16>>
  %16 = splat %1 : tile<16x16xptr<f16>>
  %17 = addptr %16, %13 : tile<16x16xptr<f16>>
  %18 = splat %3 : tile<16x16xi32>
  %19 = constant {value = 0.0} : tile<16x16xf32>
  %20 = local_alloc : shared<3x16x16xf16>
  %21 = local_alloc : shared<3x16x16xf16>
  %22 = cmp %4, %3 {pred = lt} : i1
  %23 = constant {value = 0} : tile<16x16xi32>
  %24 = cmp %23, %18 {pred = lt} : tile<16x16xi1>
  %25 = splat %22 : tile<16x16xi1>
  %26 = and %24, %25 : tile<16x16xi1>
  async_copy %20, %4, %15, %26
  async_copy %21, %4, %17, %26
  async_commit
  %27 = constant {value = 16} : tile<16x16xi32>
  %28 = addptr %15, %27 : tile<16x16xptr<f16>>
  %29 = constant {value = 256} : tile<16x16xi32>
  %30 = addptr %17, %29 : tile<16x16xptr<f16>>
  %31 = cmp %5, %3 {pred = lt} : i1
  %32 = constant {value = 1} : tile<16x16xi32>
  %33 = cmp %32, %18 {pred = lt} : tile<16x16xi1>
  %34 = splat %31 : tile<16x16xi1>
  %35 = and %33, %34 : tile<16x16xi1>
  async_copy %20, %5, %28, %35
  async_copy %21, %5, %30, %35
  async_commit
  %36 = addptr %28, %27 : tile<16x16xptr<f16>>
  %37 = addptr %30, %29 : tile<16x16xptr<f16>>
  %38 = constant {value = 3} : i32
  %39 = constant {value = 2} : i32
  %40, %41, %42, %43 = for %4, %3, %5, %19, %4, %36, %37 : tile<16x16xf32>, i32, tile<16x16xptr<f16>>, tile<16x16xptr<f16>> {
  ^(%44: i32, %45: tile<16x16xf32>, %46: i32, %47: tile<16x16xptr<f16>>, %48: tile<16x16xptr<f16>>):
    async_wait {pending = 1}
    barrier
    %49 = local_load %20, %46 : tile<16x16xf16>
    %50 = local_load %21, %46 : tile<16x16xf16>
    %51 = dot %49, %50, %45 {precision = ieee} : tile<16x16xf32>
    %52 = add %46, %5 : i32
    %53 = cmp %52, %38 {pred = lt} : i1
    %54 = select %53, %52, %4 : i32
    %55 = cmp %46, %4 {pred = eq} : i1
    %56 = sub %46, %5 : i32
    %57 = select %55, %39, %56 : i32
    %58 = add %44, %39 : i32
    %59 = cmp %58, %3 {pred = lt} : i1
    %60 = splat %58 : tile<16x16xi32>
    %61 = cmp %60, %18 {pred = lt} : tile<16x16xi1>
    %62 = splat %59 : tile<16x16xi1>
    %63 = and %61, %62 : tile<16x16xi1>
    async_copy %20, %57, %47, %63
    async_copy %21, %57, %48, %63
    async_commit
    %64 = addptr %47, %27 : tile<16x16xptr<f16>>
    %65 = addptr %48, %29 : tile<16x16xptr<f16>>
    yield %51, %54, %64, %65
  }
  async_wait {pending = 0}
  barrier
  %66 = splat %2 : tile<16x16xptr<f32>>
  %67 = addptr %66, %13 : tile<16x16xptr<f32>>
  store %67, %40 {cache = none, evict = none}
}
)");
}

TEST(CarriedPipelineIr, APointerAdvancedByAnIntegerDivisionKeepsItsLoad) {
  const std::string divided = R"(    %step_a = div %ns, %ns : tile<16x16xi32>
    %next_a = addptr %ca, %step_a : tile<16x16xptr<f16>>)";
  const std::string printed = pipelined(carried_matmul(divided, kAdvanceB, "0.0"), 3);
  EXPECT_EQ(occurrences(printed, "local_alloc"), 1) << printed;
  EXPECT_EQ(occurrences(printed, " = load "), 1) << printed;
}

TEST(CarriedPipelineIr, APointerAdvancedByALoadedValueKeepsItsLoad) {
  const std::string loaded = R"(    %raw = load %cbp, %mask, %other {cache = none, evict = none} : tile<16x16xf16>
    %step_a = cast %raw : tile<16x16xi32>
    %next_a = addptr %ca, %step_a : tile<16x16xptr<f16>>)";
  const std::string printed = pipelined(carried_matmul(loaded, kAdvanceB, "0.0"), 3);
  EXPECT_EQ(occurrences(printed, "local_alloc"), 1) << printed;
  EXPECT_EQ(occurrences(printed, " = load "), 2) << printed << "A's load and the step's stay";
}

TEST(CarriedPipelineIr, AnOtherOfMinusZeroKeepsTheLoads) {
  const std::string printed = pipelined(carried_matmul(kAdvanceA, kAdvanceB, "-0.0"), 3, false);
  EXPECT_EQ(occurrences(printed, " = load "), 2) << printed;
}

}  // namespace
}  // namespace kiln::ir
