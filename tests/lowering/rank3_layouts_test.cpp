// Layouts of tiles above two dimensions, element by element: the kernel-wide
// blocked parameters of each rank, slices at every axis, the layout rules of
// trans, reshape, join, split and broadcast on 3-D and 4-D layouts, and the
// layouts assign_layouts gives traced 3-D kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "correctness/tile_index.hpp"
#include "kiln/kiln.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/shape_layouts.hpp"

namespace kiln::lowering {
namespace {

namespace kl = kiln;

using Sizes = std::vector<std::int64_t>;
using Coordinates = std::vector<std::int32_t>;

Coordinates at(const LinearLayout& layout, std::int32_t reg, std::int32_t lane, std::int32_t warp) {
  Coordinates coords;
  for (const auto& [name, value] : layout.apply({{"register", reg}, {"lane", lane}, {"warp", warp}}))
    coords.push_back(value);
  return coords;
}

/// The elements each thread (lane, warp) holds in `layout`.
std::map<std::pair<std::int32_t, std::int32_t>, std::set<Coordinates>> held_by_thread(const LinearLayout& layout) {
  std::map<std::pair<std::int32_t, std::int32_t>, std::set<Coordinates>> held;
  for (std::int32_t lane = 0; lane < layout.in_dim_size("lane"); ++lane)
    for (std::int32_t warp = 0; warp < layout.in_dim_size("warp"); ++warp)
      for (std::int32_t reg = 0; reg < layout.in_dim_size("register"); ++reg)
        held[{lane, warp}].insert(at(layout, reg, lane, warp));
  return held;
}

std::int64_t row_major(const Coordinates& coords, const Sizes& shape) {
  std::int64_t index = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + coords[d];
  return index;
}

std::int64_t numel(const Sizes& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

LinearLayout blocked(const Sizes& shape, const BlockedParameters& p) {
  return blocked_layout(shape, p.size_per_thread, p.threads_per_warp, p.warps_per_cta, p.order);
}

/// 3-D blocked layouts, whole, repeated and replicated, over 1 to 8 warps.
std::vector<std::pair<Sizes, LinearLayout>> layouts_3d() {
  std::vector<std::pair<Sizes, LinearLayout>> layouts;
  for (const Sizes& shape : {Sizes{4, 8, 4}, Sizes{2, 16, 64}, Sizes{16, 2, 8}, Sizes{1, 4, 2}, Sizes{8, 8, 8}})
    for (std::int64_t width : {1, 2, 4})
      for (int warps : {1, 4, 8})
        layouts.emplace_back(shape, blocked(shape, kernel_blocked_parameters(shape, width, warps)));
  // Orders other than the kernel's.
  layouts.emplace_back(Sizes{8, 4, 16}, blocked_layout({8, 4, 16}, {2, 1, 2}, {4, 2, 4}, {1, 2, 2}, {0, 2, 1}));
  layouts.emplace_back(Sizes{8, 4, 16}, blocked_layout({8, 4, 16}, {1, 2, 1}, {2, 8, 2}, {4, 1, 1}, {1, 0, 2}));
  return layouts;
}

TEST(KernelBlockedParameters, TwoDimensionalKeepsTheKernelWideRule) {
  // The 2-D rule: lanes along the columns up to columns / width, the rest
  // down the rows; warps along the columns for what the lanes leave.
  int configurations = 0;
  for (const Sizes& shape : {Sizes{1, 1}, Sizes{64, 64}, Sizes{16, 1024}, Sizes{256, 2}, Sizes{8, 48}, Sizes{2, 4096}})
    for (std::int64_t width : {1, 2, 4, 8})
      for (int warps : {1, 2, 4, 8, 32}) {
        const auto columns = static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(shape[1])));
        const std::int64_t lanes_1 = std::clamp<std::int64_t>(columns / width, 1, 32);
        const std::int64_t warps_1 = std::clamp<std::int64_t>(columns / (width * lanes_1), 1, warps);
        const BlockedParameters wanted{{1, width}, {32 / lanes_1, lanes_1}, {warps / warps_1, warps_1}, {1, 0}};
        EXPECT_EQ(kernel_blocked_parameters(shape, width, warps), wanted)
            << shape[0] << "x" << shape[1] << " width " << width << " warps " << warps;
        ++configurations;
      }
  EXPECT_EQ(configurations, 120);
}

TEST(KernelBlockedParameters, HigherRanksFillTheLastDimensionsFirst) {
  EXPECT_EQ(kernel_blocked_parameters({4, 8, 4}, 1, 4),
            (BlockedParameters{{1, 1, 1}, {1, 8, 4}, {4, 1, 1}, {2, 1, 0}}));
  EXPECT_EQ(kernel_blocked_parameters({4, 8, 4, 2}, 2, 4),
            (BlockedParameters{{1, 1, 1, 2}, {1, 8, 4, 1}, {4, 1, 1, 1}, {3, 2, 1, 0}}));
  EXPECT_EQ(kernel_blocked_parameters({2, 16, 64}, 4, 8),
            (BlockedParameters{{1, 1, 4}, {1, 2, 16}, {1, 8, 1}, {2, 1, 0}}));
  // A tile of exactly 32 * warps * width elements is covered once: every
  // hardware index holds a distinct element.
  for (const Sizes& shape :
       {Sizes{4, 8, 4}, Sizes{2, 2, 32}, Sizes{8, 2, 8}, Sizes{4, 4, 4, 2}, Sizes{2, 2, 2, 2, 8}}) {
    const LinearLayout layout = blocked(shape, kernel_blocked_parameters(shape, 1, 4));
    EXPECT_EQ(numel(shape), 128);
    EXPECT_TRUE(layout.is_injective()) << to_string(layout);
    EXPECT_TRUE(layout.is_surjective()) << to_string(layout);
  }
}

TEST(Rank3Layouts, SliceAtEveryAxisHoldsTheProjectionOfEachThreadsElements) {
  for (const auto& [shape, parent] : layouts_3d())
    for (int axis = 0; axis < 3; ++axis) {
      const LinearLayout slice = slice_layout(parent, axis);
      ASSERT_EQ(slice.out_dims().size(), 2u);
      auto projected = held_by_thread(parent);
      for (auto& [thread, elements] : projected) {
        std::set<Coordinates> dropped;
        for (Coordinates c : elements) {
          c.erase(c.begin() + axis);
          dropped.insert(c);
        }
        elements = dropped;
      }
      ASSERT_EQ(held_by_thread(slice), projected) << "axis " << axis << "\n" << to_string(parent);
    }
}

TEST(Rank3Layouts, TransPermutesTheCoordinatesOfEveryElement) {
  const std::vector<std::vector<std::int64_t>> orders = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                                         {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& [shape, result] : layouts_3d())
    for (const auto& order : orders) {
      // Result dimension i is operand dimension order[i].
      const LinearLayout operand = trans_operand_layout(result, order);
      for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(operand.out_dim_size("dim" + std::to_string(order[i])), shape[i]);
      for (std::int32_t r = 0; r < result.in_dim_size("register"); ++r)
        for (std::int32_t l = 0; l < 32; ++l)
          for (std::int32_t w = 0; w < result.in_dim_size("warp"); ++w) {
            const Coordinates wanted = at(result, r, l, w);
            const Coordinates held = at(operand, r, l, w);
            for (std::size_t i = 0; i < 3; ++i)
              ASSERT_EQ(held[static_cast<std::size_t>(order[i])], wanted[i]) << to_string(result);
          }
    }
}

TEST(Rank3Layouts, ReshapeToAndFromThreeDimensionsKeepsTheRowMajorPosition) {
  for (const auto& [shape, result] : layouts_3d()) {
    const std::int64_t n = numel(shape);
    for (const Sizes& operand_shape :
         {Sizes{n}, Sizes{shape[0], shape[1] * shape[2]}, Sizes{shape[0] * shape[1], shape[2]},
          Sizes{shape[2], shape[1], shape[0]}, Sizes{1, n, 1, 1}}) {
      const LinearLayout operand = reshape_operand_layout(result, operand_shape);
      for (std::int32_t r = 0; r < result.in_dim_size("register"); ++r)
        for (std::int32_t l = 0; l < 32; ++l)
          for (std::int32_t w = 0; w < result.in_dim_size("warp"); ++w)
            ASSERT_EQ(row_major(at(operand, r, l, w), operand_shape), row_major(at(result, r, l, w), shape))
                << to_string(result);
    }
  }
}

TEST(Rank3Layouts, JoinAndSplitAddARegisterBitOnANewLastDimension) {
  for (const auto& [shape, half] : layouts_3d()) {
    // split: register r + k * (half's registers) holds element k of the pair at half's r.
    const LinearLayout pairs = split_operand_layout(half);
    const std::int32_t half_registers = half.in_dim_size("register");
    ASSERT_EQ(pairs.in_dim_size("register"), 2 * half_registers);
    for (std::int32_t r = 0; r < half_registers; ++r)
      for (std::int32_t l = 0; l < 32; ++l)
        for (std::int32_t w = 0; w < half.in_dim_size("warp"); ++w)
          for (std::int32_t k = 0; k < 2; ++k) {
            Coordinates wanted = at(half, r, l, w);
            wanted.push_back(k);
            ASSERT_EQ(at(pairs, r + k * half_registers, l, w), wanted);
          }
    // join: the operands' layout is the slice of the 4-D result along its
    // last dimension: each thread holds the elements it held in the half.
    EXPECT_EQ(held_by_thread(join_operand_layout(pairs)), held_by_thread(half)) << to_string(half);
  }
  for (const Sizes& shape : {Sizes{4, 8, 4, 2}, Sizes{2, 4, 16, 2}}) {
    const LinearLayout result = blocked(shape, kernel_blocked_parameters(shape, 2, 4));
    const LinearLayout operands = join_operand_layout(result);
    auto held = held_by_thread(operands);
    for (const auto& [thread, elements] : held_by_thread(result))
      for (Coordinates c : elements) {
        c.pop_back();
        ASSERT_TRUE(held[thread].contains(c)) << to_string(result);
      }
  }
}

TEST(Rank3Layouts, BroadcastOperandHoldsEveryElementItsCopiesTake) {
  for (const auto& [shape, result] : layouts_3d())
    for (int ones = 1; ones < 8; ++ones) {
      Sizes operand_shape = shape;
      for (int d = 0; d < 3; ++d)
        if (ones & (1 << d)) operand_shape[static_cast<std::size_t>(d)] = 1;
      const LinearLayout operand = broadcast_operand_layout(result, operand_shape);
      EXPECT_TRUE(is_thread_local(result, shape, operand, operand_shape, -1)) << to_string(result);
      auto held = held_by_thread(operand);
      for (const auto& [thread, elements] : held_by_thread(result))
        for (Coordinates c : elements) {
          for (int d = 0; d < 3; ++d)
            if (operand_shape[static_cast<std::size_t>(d)] == 1) c[static_cast<std::size_t>(d)] = 0;
          ASSERT_TRUE(held[thread].contains(c)) << to_string(result);
        }
    }
  // An operand spread over other lanes is not thread-local.
  const LinearLayout result = blocked_layout({4, 8, 4}, {1, 1, 1}, {1, 8, 4}, {4, 1, 1}, {2, 1, 0});
  const LinearLayout elsewhere = blocked_layout({4, 8, 1}, {1, 1, 1}, {4, 8, 1}, {1, 1, 4}, {2, 1, 0});
  EXPECT_FALSE(is_thread_local(result, {4, 8, 4}, elsewhere, {4, 8, 1}, -1));
}

// The correctness suites' kernels, traced for f32.
constexpr int kD0 = 9, kD1 = 13, kD2 = 7;
constexpr int kA = 4, kB = 8, kC = 4;

void permute_kernel(kl::Ptr<kl::f32> x_ptr, kl::Ptr<kl::f32> cab) {
  const auto t = kiln::test::Tile3<kD0, kD1, kD2, kA, kB, kC>::here();
  auto x = kl::load(x_ptr + t.offs, t.mask);
  auto on0 = [](const auto& v) { return kl::expand_dims<1>(kl::expand_dims<1>(v)); };
  auto on1 = [](const auto& v) { return kl::expand_dims<0>(kl::expand_dims<1>(v)); };
  auto on2 = [](const auto& v) { return kl::expand_dims<0>(kl::expand_dims<0>(v)); };
  kl::store(cab + (on0(t.k) * (kD0 * kD1) + on1(t.i) * kD1 + on2(t.j)), kl::permute<2, 0, 1>(x),
            (on0(t.k) < kD2) & (on1(t.i) < kD0) & (on2(t.j) < kD1));
}

void join_kernel(kl::Ptr<kl::f32> x_ptr, kl::Ptr<kl::f32> y_ptr, kl::Ptr<kl::f32> joined) {
  const auto t = kiln::test::Tile3<kD0, kD1, kD2, kA, kB, kC>::here();
  auto pair_offs = kl::expand_dims<3>(t.offs * 2) + kl::reshape<1, 1, 1, 2>(kl::arange<2>());
  kl::store(joined + pair_offs, kl::join(kl::load(x_ptr + t.offs, t.mask), kl::load(y_ptr + t.offs, t.mask)),
            kl::expand_dims<3>(t.mask));
}

void reduce_kernel(kl::Ptr<kl::f32> x_ptr, kl::Ptr<kl::f32> out) {
  const auto t = kiln::test::Tile3<kD0, kD1, kD2, kA, kB, kC>::here();
  auto x = kl::load(x_ptr + t.offs, t.mask, {.other = 0.f});
  auto rows = kl::sum(x, kl::axis<1>);  // [A, C]
  auto i = kl::expand_dims<1>(t.i);
  auto k = kl::expand_dims<0>(t.k);
  kl::store(out + (i * kD2 + k), rows, (i < kD0) & (k < kD2));
}

/// Checks that every tile value of `fn` has a layout of its shape, and
/// returns the layouts of its rank-`rank` values.
std::vector<LinearLayout> check_layouts(const ir::Function& fn, const LayoutMap& layouts, std::size_t rank) {
  std::vector<LinearLayout> of_rank;
  ir::walk(fn.body, [&](ir::Operation& op) {
    for (const ir::Value* value : op.results) {
      if (!value->type.is_tile()) continue;
      const LinearLayout& layout = layouts.at(*value);
      EXPECT_EQ(layout.out_dims().size(), value->type.shape.size()) << ir::to_string(value->type);
      for (std::size_t d = 0; d < value->type.shape.size(); ++d)
        EXPECT_EQ(layout.out_dim_size("dim" + std::to_string(d)), value->type.shape[d]) << ir::to_string(value->type);
      EXPECT_TRUE(layout.is_surjective()) << ir::to_string(value->type) << "\n" << to_string(layout);
      if (value->type.shape.size() == rank) of_rank.push_back(layout);
    }
  });
  return of_rank;
}

TEST(AssignLayouts, ThreeDimensionalKernelsGetRankThreeLayouts) {
  const ir::Function& fn = kl::compile<permute_kernel>().ir();
  const LayoutMap layouts = assign_layouts(fn, analyze_axes(fn), GpuTarget{.num_warps = 4});
  EXPECT_FALSE(check_layouts(fn, layouts, 3).empty());
  // The loaded 4x8x4 tile is in the kernel's 3-D blocked layout, which
  // covers its 128 elements once with the 128 threads.
  const BlockedParameters p = kernel_blocked_parameters({4, 8, 4}, 1, 4);
  EXPECT_EQ(p.threads_per_warp, (Sizes{1, 8, 4}));
  EXPECT_EQ(p.warps_per_cta, (Sizes{4, 1, 1}));
  int loads = 0;
  ir::walk(fn.body, [&](ir::Operation& op) {
    if (op.code != ir::OpCode::load) return;
    ++loads;
    EXPECT_EQ(layouts.at(*op.result()), blocked({4, 8, 4}, p));
    EXPECT_TRUE(layouts.at(*op.result()).is_injective());
  });
  EXPECT_EQ(loads, 1);
}

TEST(AssignLayouts, AJoinOfThreeDimensionalTilesTakesTheirPairsInEachThread) {
  const ir::Function& fn = kl::compile<join_kernel>().ir();
  const LayoutMap layouts = assign_layouts(fn, analyze_axes(fn), GpuTarget{.num_warps = 4});
  check_layouts(fn, layouts, 4);
  int joins = 0;
  ir::walk(fn.body, [&](ir::Operation& op) {
    if (op.code != ir::OpCode::join) return;
    ++joins;
    // The loads feeding the join live in the slice of its 4-D result: the join moves no data.
    for (const ir::Value* operand : op.operands) {
      EXPECT_EQ(layouts.conversion(op, *operand), nullptr);
      EXPECT_EQ(layouts.at(*operand), join_operand_layout(layouts.at(*op.result())));
    }
  });
  EXPECT_EQ(joins, 1);
}

TEST(AssignLayouts, AReduceOfAThreeDimensionalTileLeavesTheSliceOfItsInput) {
  const ir::Function& fn = kl::compile<reduce_kernel>().ir();
  const LayoutMap layouts = assign_layouts(fn, analyze_axes(fn), GpuTarget{.num_warps = 4});
  check_layouts(fn, layouts, 2);
  int reduces = 0;
  ir::walk(fn.body, [&](ir::Operation& op) {
    if (op.code != ir::OpCode::reduce) return;
    ++reduces;
    EXPECT_EQ(layouts.at(*op.result()), slice_layout(layouts.at(*op.operands[0]), 1));
  });
  EXPECT_EQ(reduces, 1);
}

}  // namespace
}  // namespace kiln::lowering
