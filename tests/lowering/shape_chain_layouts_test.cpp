// Layouts of chains of shape ops, as the standard library's flip and sort
// write them (reshape, trans, split and join, one link feeding the next): each
// link derives its layout from the one before, and no link leaves threads
// holding copies of elements that the thread count does not force.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "kiln/ir/parser.hpp"
#include "kiln/kiln.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/shape_layouts.hpp"

namespace kiln::lowering {
namespace {

namespace kl = kiln;

constexpr int kNumWarps = 4;
constexpr std::int64_t kThreads = kNumWarps * kLanesPerWarp;

void flip_flat_kernel(kl::Ptr<kl::f32> x_ptr, kl::Ptr<kl::f32> out) {
  auto offs = kl::arange<1024>();
  kl::store(out + offs, kl::flip(kl::load(x_ptr + offs)));
}

void flip_square_kernel(kl::Ptr<kl::u64> x_ptr, kl::Ptr<kl::u64> out) {
  auto offs = kl::expand_dims<1>(kl::arange<32>()) * 32 + kl::expand_dims<0>(kl::arange<32>());
  auto x = kl::load(x_ptr + offs);
  kl::store(out + offs, kl::flip(x, kl::axis<0>) + kl::flip(x));
}

void sort_rows_kernel(kl::Ptr<kl::f32> x_ptr, kl::Ptr<kl::f32> out) {
  auto offs = kl::expand_dims<1>(kl::arange<8>()) * 64 + kl::expand_dims<0>(kl::arange<64>());
  kl::store(out + offs, kl::sort(kl::load(x_ptr + offs)));
}

bool is_shape_op(ir::OpCode code) {
  return code == ir::OpCode::reshape || code == ir::OpCode::trans || code == ir::OpCode::split ||
         code == ir::OpCode::join;
}

/// Checks every result of a shape op of `fn`: its registers are no more than
/// its share of the tile (numel / threads, at least 1), so no two threads
/// hold one element where the tile has enough elements for every thread;
/// returns how many results it checked.
int check_shares(const ir::Function& fn, const std::string& kernel) {
  const LayoutMap layouts = assign_layouts(fn, analyze_axes(fn), GpuTarget{.num_warps = kNumWarps});
  int checked = 0;
  ir::walk(fn.body, [&](ir::Operation& op) {
    if (!is_shape_op(op.code)) return;
    for (const ir::Value* value : op.results) {
      if (!value->type.is_tile()) continue;
      ++checked;
      const LinearLayout& layout = layouts.at(*value);
      const std::int64_t share = std::max<std::int64_t>(1, value->type.numel() / kThreads);
      EXPECT_LE(layout.in_dim_size("register"), share)
          << kernel << ": " << ir::to_string(value->type) << " of `" << op.name() << "`\n"
          << to_string(layout);
      if (value->type.numel() >= kThreads)
        EXPECT_TRUE(layout.is_injective()) << kernel << ": " << ir::to_string(value->type) << "\n" << to_string(layout);
    }
  });
  return checked;
}

TEST(ShapeChainLayouts, FlipOfAFlatTileKeepsEachThreadsShare) {
  // Ten swaps of halves, five of them across lanes and two across warps.
  EXPECT_GE(check_shares(kl::compile<flip_flat_kernel>().ir(), "flip_flat_kernel"), 40);
}

TEST(ShapeChainLayouts, FlipOfASquareTileOnEitherAxisKeepsEachThreadsShare) {
  EXPECT_GE(check_shares(kl::compile<flip_square_kernel>().ir(), "flip_square_kernel"), 40);
}

TEST(ShapeChainLayouts, BitonicSortOfRowsKeepsEachThreadsShare) {
  EXPECT_GE(check_shares(kl::compile<sort_rows_kernel>().ir(), "sort_rows_kernel"), 20);
}

TEST(ShapeChainLayouts, ASplitOfPairsAcrossLanesTradesTheLaneForARegister) {
  // 1024 f32 loaded four to a thread. The pairs (bit 2 of the index) lie in
  // a lane: reshape and trans move nothing, the split exchanges that lane
  // with a register, and its halves keep four distinct elements per thread.
  // (The store goes through pointers and offsets of its own: a class that held both the
  // load and the chain's end would take the end's layout and move at the start.)
  const std::unique_ptr<ir::Function> fn =
      ir::parse_function(R"(kernel @swap(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<1024xi32>
  %3 = splat %0 : tile<1024xptr<f32>>
  %4 = addptr %3, %2 : tile<1024xptr<f32>>
  %5 = load %4 {cache = none, evict = none} : tile<1024xf32>
  %6 = reshape %5 : tile<128x2x4xf32>
  %7 = trans %6 {order = [0, 2, 1]} : tile<128x4x2xf32>
  %8, %9 = split %7 : tile<128x4xf32>, tile<128x4xf32>
  %10 = join %9, %8 : tile<128x4x2xf32>
  %11 = trans %10 {order = [0, 2, 1]} : tile<128x2x4xf32>
  %12 = reshape %11 : tile<1024xf32>
  %13 = arange {start = 0} : tile<1024xi32>
  %14 = splat %1 : tile<1024xptr<f32>>
  %15 = addptr %14, %13 : tile<1024xptr<f32>>
  store %15, %12 {cache = none, evict = none}
}
)");
  const LayoutMap layouts = assign_layouts(*fn, analyze_axes(*fn), GpuTarget{.num_warps = kNumWarps});
  const ir::Operation& reshape = *fn->body.ops.at(4);
  const ir::Operation& trans = *fn->body.ops.at(5);
  const ir::Operation& split = *fn->body.ops.at(6);
  EXPECT_EQ(layouts.conversion(reshape, *reshape.operands[0]), nullptr);
  EXPECT_EQ(layouts.conversion(trans, *trans.operands[0]), nullptr);
  const LinearLayout& operand = layouts.at(*split.operands[0]);
  ASSERT_EQ(operand.in_dim_size("register"), 8);
  for (int bit = 0; bit < 3; ++bit) EXPECT_EQ(operand.basis("register", bit)[2], 0) << to_string(operand);
  ASSERT_NE(layouts.conversion(split, *split.operands[0]), nullptr);
  const LinearLayout& half = layouts.at(*split.results[0]);
  EXPECT_EQ(half.in_dim_size("register"), 4) << to_string(half);
  EXPECT_TRUE(half.is_injective()) << to_string(half);
  EXPECT_EQ(layouts.conversion(split, *split.operands[0])->to, split_operand_layout(half));
}

}  // namespace
}  // namespace kiln::lowering
