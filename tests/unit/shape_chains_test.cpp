// The canonicaliser's folding of shape-op chains (reshape of reshape or
// expand_dims, trans of trans, trans that only moves size-1 axes): one rewrite
// per test on IR text, then random chains whose interpreted results must not
// change.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kiln/ir/parser.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::ir {
namespace {

/// Canonicalises and removes the ops left unused; checks that the
/// canonicaliser reports `changed` and the result verifies.
std::string canonical(const std::string& text, bool changed = true) {
  auto fn = parse_function(text);
  verify(*fn);
  EXPECT_EQ(canonicalize(*fn), changed) << text;
  eliminate_dead_code(*fn);
  verify(*fn);
  return print(*fn);
}

TEST(ShapeChains, ReshapeOfReshapeReadsTheFirstOperand) {
  EXPECT_EQ(canonical(R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = reshape %0 : tile<2x16xf32>
  %2 = reshape %1 : tile<32xf32>
  print %1 {prefix = ""}
  print %2 {prefix = ""}
}
)"),
            R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = reshape %0 : tile<2x16xf32>
  %2 = reshape %0 : tile<32xf32>
  print %1 {prefix = ""}
  print %2 {prefix = ""}
}
)");
}

TEST(ShapeChains, ReshapeOfExpandDimsReadsItsOperand) {
  EXPECT_EQ(canonical(R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = expand_dims %0 {axis = 1} : tile<4x1x8xf32>
  %2 = reshape %1 : tile<8x4xf32>
  print %2 {prefix = ""}
}
)"),
            R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = reshape %0 : tile<8x4xf32>
  print %1 {prefix = ""}
}
)");
}

TEST(ShapeChains, ReshapesBackToTheOperandShapeVanish) {
  EXPECT_EQ(canonical(R"(kernel @k(%0: tile<4x8xf32>) {
  %1 = reshape %0 : tile<32xf32>
  %2 = reshape %1 : tile<2x2x8xf32>
  %3 = reshape %2 : tile<4x8xf32>
  print %3 {prefix = ""}
}
)"),
            R"(kernel @k(%0: tile<4x8xf32>) {
  print %0 {prefix = ""}
}
)");
}

TEST(ShapeChains, TransOfTransComposesTheOrders) {
  // %1 is x[b][c][a] for x[a][b][c]; %2 swaps %1's first two axes: x[c][b][a].
  EXPECT_EQ(canonical(R"(kernel @k(%0: tile<2x4x8xf32>) {
  %1 = trans %0 {order = [1, 2, 0]} : tile<4x8x2xf32>
  %2 = trans %1 {order = [1, 0, 2]} : tile<8x4x2xf32>
  print %2 {prefix = ""}
}
)"),
            R"(kernel @k(%0: tile<2x4x8xf32>) {
  %1 = trans %0 {order = [2, 1, 0]} : tile<8x4x2xf32>
  print %1 {prefix = ""}
}
)");
}

TEST(ShapeChains, TransThenItsInverseIsTheOperand) {
  EXPECT_EQ(canonical(R"(kernel @k(%0: tile<2x4x8xf32>) {
  %1 = trans %0 {order = [1, 2, 0]} : tile<4x8x2xf32>
  %2 = trans %1 {order = [2, 0, 1]} : tile<2x4x8xf32>
  print %2 {prefix = ""}
}
)"),
            R"(kernel @k(%0: tile<2x4x8xf32>) {
  print %0 {prefix = ""}
}
)");
}

TEST(ShapeChains, TransMovingOnlyUnitAxesIsAReshape) {
  EXPECT_EQ(canonical(R"(kernel @k(%0: tile<1x4x1x8xf32>) {
  %1 = trans %0 {order = [2, 1, 3, 0]} : tile<1x4x8x1xf32>
  %2 = reshape %1 : tile<32xf32>
  print %1 {prefix = ""}
  print %2 {prefix = ""}
}
)"),
            R"(kernel @k(%0: tile<1x4x1x8xf32>) {
  %1 = reshape %0 : tile<1x4x8x1xf32>
  %2 = reshape %0 : tile<32xf32>
  print %1 {prefix = ""}
  print %2 {prefix = ""}
}
)");
}

TEST(ShapeChains, TransOfLongAxesAndReshapesBetweenTransesStay) {
  const std::string text = R"(kernel @k(%0: tile<1x4x8xf32>) {
  %1 = trans %0 {order = [0, 2, 1]} : tile<1x8x4xf32>
  %2 = reshape %1 : tile<4x2x4xf32>
  %3 = trans %2 {order = [0, 2, 1]} : tile<4x4x2xf32>
  print %3 {prefix = ""}
}
)";
  EXPECT_EQ(canonical(text, false), text);
}

// ---- random chains: the interpreter's results do not change -----------------------

constexpr int kElements = 64;

/// A random shape of kElements elements and rank 1 to 4 (dimensions are powers
/// of two, 1 included).
Shape random_shape(std::mt19937_64& rng) {
  const int rank = 1 + static_cast<int>(rng() % 4);
  Shape shape(static_cast<std::size_t>(rank), 1);
  for (int bits = 6; bits > 0; --bits) shape[rng() % shape.size()] *= 2;
  return shape;
}

std::string tile_type(const Shape& shape) {
  std::string text = "tile<";
  for (std::int64_t d : shape) text += std::to_string(d) + "x";
  return text + "i32>";
}

std::string ints(const std::vector<std::int64_t>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// out[i] = element i (row-major) of in[0..64) put through `steps` random
/// reshapes, transposes and expand_dims.
std::string random_chain_kernel(std::mt19937_64& rng, int steps) {
  std::string text = R"(kernel @chain(%in: ptr<i32>, %out: ptr<i32>) {
  %offsets = arange {start = 0} : tile<64xi32>
  %in_s = splat %in : tile<64xptr<i32>>
  %in_p = addptr %in_s, %offsets : tile<64xptr<i32>>
  %v0 = load %in_p {cache = none, evict = none} : tile<64xi32>
)";
  Shape shape = {kElements};
  for (int step = 1; step <= steps; ++step) {
    const std::string from = "%v" + std::to_string(step - 1), to = "  %v" + std::to_string(step) + " = ";
    const int kind = static_cast<int>(rng() % 3);
    if (kind == 0 || shape.size() == 1) {
      shape = random_shape(rng);
      text += to + "reshape " + from + " : " + tile_type(shape) + "\n";
    } else if (kind == 1) {
      std::vector<std::int64_t> order(shape.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      Shape permuted(shape.size());
      for (std::size_t i = 0; i < order.size(); ++i) permuted[i] = shape[static_cast<std::size_t>(order[i])];
      shape = permuted;
      text += to + "trans " + from + " {order = " + ints(order) + "} : " + tile_type(shape) + "\n";
    } else if (shape.size() < 4) {
      const auto axis = static_cast<std::int64_t>(rng() % (shape.size() + 1));
      shape.insert(shape.begin() + axis, 1);
      text += to + "expand_dims " + from + " {axis = " + std::to_string(axis) + "} : " + tile_type(shape) + "\n";
    } else {
      text += to + "reshape " + from + " : " + tile_type(shape) + "\n";
    }
  }
  return text + "  %flat = reshape %v" + std::to_string(steps) + R"( : tile<64xi32>
  %out_s = splat %out : tile<64xptr<i32>>
  %out_p = addptr %out_s, %offsets : tile<64xptr<i32>>
  store %out_p, %flat {cache = none, evict = none}
}
)";
}

std::vector<std::int32_t> interpret(const Function& fn, std::vector<std::int32_t> input) {
  std::vector<std::int32_t> output(kElements, -1);
  auto buffer = [](std::vector<std::int32_t>& values, const char* name) {
    const auto begin = reinterpret_cast<std::uintptr_t>(values.data());
    return runtime::KernelArgument{begin, {begin, begin + values.size() * sizeof(std::int32_t), name}};
  };
  const runtime::KernelArgument args[] = {buffer(input, "in"), buffer(output, "out")};
  runtime::InterpretedKernel(fn).launch({1, 1, 1}, args, 1);
  return output;
}

int count_ops(const Function& fn) {
  int n = 0;
  walk(fn.body, [&](Operation&) { ++n; });
  return n;
}

TEST(ShapeChains, RandomChainsComputeTheSameElementsAfterFolding) {
  std::mt19937_64 rng(2718);
  int shortened = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const std::string text = random_chain_kernel(rng, 2 + static_cast<int>(rng() % 6));
    auto original = parse_function(text);
    verify(*original);
    auto folded = clone(*original);
    canonicalize(*folded);
    eliminate_dead_code(*folded);
    verify(*folded);
    std::vector<std::int32_t> input(kElements);
    for (auto& v : input) v = static_cast<std::int32_t>(rng());
    const auto before = interpret(*original, input), after = interpret(*folded, input);
    ASSERT_EQ(before, after) << text << "--- folded:\n" << print(*folded);
    shortened += count_ops(*folded) < count_ops(*original);
  }
  EXPECT_GT(shortened, 150) << "most random chains hold a foldable pair";
}

}  // namespace
}  // namespace kiln::ir
