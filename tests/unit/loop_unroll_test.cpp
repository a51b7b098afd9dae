// A `for` loop's options as IR attributes (`num_stages`, `unroll`): printed,
// parsed back and part of the structural hash (the compile cache's key), and
// ir::unroll_loops's rewrite: the body U times in a loop stepping by U*step,
// the loop itself for the rest, nested loops unrolled inside out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/ir/parser.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln::ir {
namespace {

/// A kernel summing exp over a loop with `attributes` and runtime bounds.
std::string exp_loop(const std::string& attributes) {
  return "kernel @k(%0: i32, %1: i32, %2: i32, %3: f32) {\n"
         "  %4 = for %0, %1, %2, %3 " +
         attributes +
         " : f32 {\n"
         "  ^(%5: i32, %6: f32):\n"
         "    %7 = exp %6 : f32\n"
         "    yield %7\n"
         "  }\n"
         "  print %4 {prefix = \"\"}\n"
         "}\n";
}

std::vector<const Operation*> ops_of(const Block& block, OpCode code) {
  std::vector<const Operation*> found;
  for (const auto& op : block.ops)
    if (op->code == code) found.push_back(op.get());
  return found;
}

int count_everywhere(const Function& fn, OpCode code) {
  int n = 0;
  walk(fn.body, [&](Operation& op) { n += op.code == code; });
  return n;
}

TEST(LoopAttributes, PrintParseAndChangeTheHash) {
  const std::string text = exp_loop("{num_stages = 2, unroll = 4}");
  auto fn = parse_function(text);
  verify(*fn);
  EXPECT_EQ(print(*fn), text);
  EXPECT_NE(structural_hash(*fn), structural_hash(*parse_function(exp_loop(""))));
  EXPECT_NE(structural_hash(*fn), structural_hash(*parse_function(exp_loop("{num_stages = 2, unroll = 2}"))));
}

TEST(LoopUnroll, RepeatsTheBodyAndKeepsTheLoopForTheRest) {
  auto fn = parse_function(exp_loop("{num_stages = 3, unroll = 4}"));
  ASSERT_TRUE(unroll_loops(*fn));
  verify(*fn);
  const std::vector<const Operation*> loops = ops_of(fn->body, OpCode::for_);
  ASSERT_EQ(loops.size(), 2u);
  const Operation& main = *loops[0];
  const Operation& rest = *loops[1];
  EXPECT_EQ(ops_of(*main.regions[0], OpCode::exp).size(), 4u);
  EXPECT_EQ(ops_of(*rest.regions[0], OpCode::exp).size(), 1u);
  // Each copy reads what the one before yields; the rest starts where main ends.
  const std::vector<const Operation*> exps = ops_of(*main.regions[0], OpCode::exp);
  EXPECT_EQ(exps[0]->operands[0], main.regions[0]->arguments[1]);
  for (std::size_t k = 1; k < exps.size(); ++k) EXPECT_EQ(exps[k]->operands[0], exps[k - 1]->result());
  EXPECT_EQ(main.regions[0]->terminator()->operands[0], exps.back()->result());
  EXPECT_EQ(rest.operands[0], main.operands[1]);
  EXPECT_EQ(rest.operands[3], main.result());
  EXPECT_EQ(main.int_attribute("num_stages"), 3);
  EXPECT_EQ(rest.int_attribute("num_stages"), 1);
  EXPECT_FALSE(main.has_attribute("unroll"));
  EXPECT_FALSE(rest.has_attribute("unroll"));
  EXPECT_FALSE(unroll_loops(*fn));
}

TEST(LoopUnroll, ConstantBoundsFoldToConstantLoops) {
  // 0..10 step 1 by 4: main runs 0..8 step 4, the rest 8..10 step 1.
  auto fn = parse_function(R"(kernel @k(%0: f32) {
  %1 = constant {value = 0} : i32
  %2 = constant {value = 10} : i32
  %3 = constant {value = 1} : i32
  %4 = for %1, %2, %3, %0 {unroll = 4} : f32 {
  ^(%5: i32, %6: f32):
    %7 = cast %5 : f32
    %8 = add %6, %7 : f32
    yield %8
  }
  print %4 {prefix = ""}
}
)");
  optimize(*fn);
  const std::vector<const Operation*> loops = ops_of(fn->body, OpCode::for_);
  ASSERT_EQ(loops.size(), 2u);
  auto bound = [](const Operation& loop, int i) { return loop.operands[i]->def->int_attribute("value"); };
  EXPECT_EQ(std::vector<std::int64_t>({bound(*loops[0], 0), bound(*loops[0], 1), bound(*loops[0], 2)}),
            std::vector<std::int64_t>({0, 8, 4}));
  EXPECT_EQ(std::vector<std::int64_t>({bound(*loops[1], 0), bound(*loops[1], 1), bound(*loops[1], 2)}),
            std::vector<std::int64_t>({8, 10, 1}));
  EXPECT_EQ(ops_of(*loops[0]->regions[0], OpCode::add).size(), 4u + 3u) << "4 sums and the ivs of copies 1 to 3";
}

TEST(LoopUnroll, NestedLoopsUnrollInsideOut) {
  auto fn = parse_function(R"(kernel @k(%0: i32, %1: f32) {
  %2 = constant {value = 0} : i32
  %3 = constant {value = 1} : i32
  %4 = for %2, %0, %3, %1 {unroll = 2} : f32 {
  ^(%5: i32, %6: f32):
    %7 = for %2, %5, %3, %6 {unroll = 3} : f32 {
    ^(%8: i32, %9: f32):
      %10 = exp %9 : f32
      yield %10
    }
    yield %7
  }
  print %4 {prefix = ""}
}
)");
  ASSERT_TRUE(unroll_loops(*fn));
  verify(*fn);
  // Outer main (2 copies of the inner pair), outer rest (1 pair), 2 + 4 + 2.
  EXPECT_EQ(count_everywhere(*fn, OpCode::for_), 8);
  EXPECT_EQ(count_everywhere(*fn, OpCode::exp), 3 * (3 + 1));
}

}  // namespace
}  // namespace kiln::ir
