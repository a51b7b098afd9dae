// The operand layouts of `dot` against a direct statement of what each thread
// needs: for every result element (m, n) it holds, the whole row m of a and
// column n of b; element by element over many blocked result layouts,
// including results smaller than one layout tile (replicated elements).
#include "kiln/lowering/dot_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/parser.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/blocked_layout.hpp"

namespace kiln::lowering {
namespace {

using Sizes = std::vector<std::int64_t>;
using Element = std::pair<std::int32_t, std::int32_t>;

Element element_at(const LinearLayout& layout, std::int32_t reg, std::int32_t lane, std::int32_t warp) {
  const LinearLayout::Coordinates c = layout.apply({{"register", reg}, {"lane", lane}, {"warp", warp}});
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].first, "dim0");
  EXPECT_EQ(c[1].first, "dim1");
  return {c[0].second, c[1].second};
}

/// Checks both operand layouts of a dot with result layout `result` (M x N)
/// and K = `k`, thread by thread: the thread's registers of a hold exactly
/// {rows of its result elements} x [0, K), each once; those of b exactly
/// [0, K) x {columns of its result elements}, each once.
void expect_operands_cover_needs(const LinearLayout& result, std::int32_t k, const std::string& what) {
  const LinearLayout a = dot_operand_layout(result, DotOperand::a, k);
  const LinearLayout b = dot_operand_layout(result, DotOperand::b, k);
  ASSERT_EQ(a.out_dim_size("dim0"), result.out_dim_size("dim0")) << what;
  ASSERT_EQ(a.out_dim_size("dim1"), k) << what;
  ASSERT_EQ(b.out_dim_size("dim0"), k) << what;
  ASSERT_EQ(b.out_dim_size("dim1"), result.out_dim_size("dim1")) << what;
  for (const char* in : {"lane", "warp"}) {
    ASSERT_EQ(a.in_dim_size(in), result.in_dim_size(in)) << what;
    ASSERT_EQ(b.in_dim_size(in), result.in_dim_size(in)) << what;
  }
  for (std::int32_t warp = 0; warp < result.in_dim_size("warp"); ++warp) {
    for (std::int32_t lane = 0; lane < result.in_dim_size("lane"); ++lane) {
      std::set<std::int32_t> rows, columns;
      for (std::int32_t r = 0; r < result.in_dim_size("register"); ++r) {
        const auto [m, n] = element_at(result, r, lane, warp);
        rows.insert(m);
        columns.insert(n);
      }
      std::set<Element> needed_a, needed_b;
      for (std::int32_t kk = 0; kk < k; ++kk) {
        for (std::int32_t m : rows) needed_a.insert({m, kk});
        for (std::int32_t n : columns) needed_b.insert({kk, n});
      }
      std::set<Element> held_a, held_b;
      for (std::int32_t r = 0; r < a.in_dim_size("register"); ++r) held_a.insert(element_at(a, r, lane, warp));
      for (std::int32_t r = 0; r < b.in_dim_size("register"); ++r) held_b.insert(element_at(b, r, lane, warp));
      const std::string thread = what + " lane " + std::to_string(lane) + " warp " + std::to_string(warp);
      // The code generator reads row (thread part of a's rows) ^ (register
      // part of the result's row): the thread parts must agree.
      EXPECT_EQ(element_at(a, 0, lane, warp).first, element_at(result, 0, lane, warp).first) << thread;
      EXPECT_EQ(element_at(b, 0, lane, warp).second, element_at(result, 0, lane, warp).second) << thread;
      EXPECT_EQ(held_a, needed_a) << thread;
      EXPECT_EQ(held_b, needed_b) << thread;
      EXPECT_EQ(static_cast<std::size_t>(a.in_dim_size("register")), held_a.size()) << thread << ": a holds copies";
      EXPECT_EQ(static_cast<std::size_t>(b.in_dim_size("register")), held_b.size()) << thread << ": b holds copies";
    }
  }
}

/// Register k of a thread holds K element k (K first, in order), for both operands.
void expect_k_in_low_registers(const LinearLayout& result, std::int32_t k) {
  const LinearLayout a = dot_operand_layout(result, DotOperand::a, k);
  const LinearLayout b = dot_operand_layout(result, DotOperand::b, k);
  for (std::int32_t kk = 0; kk < k; ++kk) {
    EXPECT_EQ(element_at(a, kk, 0, 0), Element(0, kk));
    EXPECT_EQ(element_at(b, kk, 0, 0), Element(kk, 0));
  }
}

TEST(DotOperandLayout, HandWorkedExample) {
  // 16 x 16 result, one element per thread and register: lanes 8 along
  // columns then 4 along rows, warps 2 along columns then 2 along rows; the
  // 8-row layout tile repeats once down the rows in register bit 0.
  const LinearLayout result = blocked_layout({16, 16}, {1, 1}, {4, 8}, {2, 2}, {1, 0});
  ASSERT_EQ(result.basis("register", 0), (LinearLayout::Basis{8, 0}));
  const LinearLayout a = dot_operand_layout(result, DotOperand::a, 4);
  const LinearLayout expected_a({{"register", {{0, 1}, {0, 2}, {8, 0}}},
                                 {"lane", {{0, 0}, {0, 0}, {0, 0}, {1, 0}, {2, 0}}},
                                 {"warp", {{0, 0}, {4, 0}}}},
                                {{"dim0", 4}, {"dim1", 2}});
  EXPECT_EQ(a, expected_a) << a;
  const LinearLayout b = dot_operand_layout(result, DotOperand::b, 4);
  const LinearLayout expected_b(
      {{"register", {{1, 0}, {2, 0}}}, {"lane", {{0, 1}, {0, 2}, {0, 4}, {0, 0}, {0, 0}}}, {"warp", {{0, 8}, {0, 0}}}},
      {{"dim0", 2}, {"dim1", 4}});
  EXPECT_EQ(b, expected_b) << b;
}

TEST(DotOperandLayout, ThreadsHoldTheirRowsAndColumnsOverBlockedLayouts) {
  struct Config {
    Sizes shape, spt, tpw, wpc, order;
  };
  const std::vector<Config> configs = {
      {{64, 64}, {1, 1}, {1, 32}, {2, 2}, {1, 0}},  // matmul 64x64 without alignment facts
      {{64, 64}, {1, 8}, {4, 8}, {4, 1}, {1, 0}},   // with 16-byte f16 accesses
      {{64, 32}, {1, 4}, {4, 8}, {2, 2}, {1, 0}},  {{128, 128}, {1, 4}, {1, 32}, {8, 1}, {1, 0}},
      {{16, 16}, {2, 2}, {8, 4}, {1, 4}, {0, 1}},  // column-major order
      {{32, 8}, {4, 1}, {2, 16}, {2, 1}, {1, 0}},
  };
  for (const Config& c : configs)
    for (std::int32_t k : {1, 2, 8, 32}) {
      const LinearLayout result = blocked_layout(c.shape, c.spt, c.tpw, c.wpc, c.order);
      expect_operands_cover_needs(result, k, to_string(result) + " K " + std::to_string(k));
    }
}

TEST(DotOperandLayout, ResultsSmallerThanOneLayoutTileReplicate) {
  // The thread extent is 32 x 16 (and more), the tiles are smaller: several
  // lanes, warps and registers hold the same result element.
  for (const Sizes& shape : std::vector<Sizes>{{1, 1}, {2, 4}, {4, 1}, {1, 64}, {16, 2}, {2, 128}})
    for (std::int32_t k : {1, 4, 16}) {
      const LinearLayout result = blocked_layout(shape, {1, 2}, {4, 8}, {2, 2}, {1, 0});
      expect_operands_cover_needs(result, k, to_string(result) + " K " + std::to_string(k));
    }
  const LinearLayout tiny = blocked_layout({2, 4}, {1, 2}, {4, 8}, {2, 2}, {1, 0});
  const LinearLayout a = dot_operand_layout(tiny, DotOperand::a, 4);
  // Only K is in registers: the result's register bit stepping along
  // columns is dropped, and its rows come from lanes.
  EXPECT_EQ(a.in_dim_size("register"), 4);
}

TEST(DotOperandLayout, KIsInTheLowRegistersInOrder) {
  expect_k_in_low_registers(blocked_layout({64, 64}, {1, 4}, {4, 8}, {2, 2}, {1, 0}), 16);
  expect_k_in_low_registers(blocked_layout({8, 8}, {2, 2}, {4, 8}, {1, 1}, {1, 0}), 8);
}

TEST(DotOperandLayout, RejectsBadArguments) {
  const LinearLayout result = blocked_layout({16, 16}, {1, 1}, {4, 8}, {2, 2}, {1, 0});
  try {
    dot_operand_layout(result, DotOperand::a, 24);
    ADD_FAILURE() << "K = 24 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "dot_operand_layout: K is 24, not a power of two");
  }
  EXPECT_THROW(dot_operand_layout(blocked_layout({16}, {1}, {32}, {4}, {0}), DotOperand::b, 16), std::invalid_argument);
}

/// Checks the mma.sync.m16n8k16 layouts of an M x N x K dot with
/// `num_warps` warps against the PTX ISA's fragment tables (group g = lane / 4,
/// t = lane % 4; warp w is tile row w % warps.m and column (w / warps.m) %
/// warps.n), register by register, with the register numbering the code
/// generator relies on; coordinates wrap where the tile is smaller.
void expect_mma_fragments(std::int64_t m, std::int64_t n, std::int64_t k, int num_warps) {
  const MmaWarps warps = mma_warps(m, n, num_warps);
  const LinearLayout c = mma_accumulator_layout(m, n, warps, num_warps);
  const LinearLayout a = mma_operand_layout(DotOperand::a, m, k, warps, num_warps);
  const LinearLayout b = mma_operand_layout(DotOperand::b, k, n, warps, num_warps);
  const auto m_tiles = static_cast<int>(std::max<std::int64_t>(1, m / (16 * warps.m)));
  const auto n_tiles = static_cast<int>(std::max<std::int64_t>(1, n / (8 * warps.n)));
  const auto k_tiles = static_cast<int>(k / 16);
  const std::string what =
      std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " warps " + std::to_string(num_warps);
  ASSERT_EQ(c.in_dim_size("register"), 4 * m_tiles * n_tiles) << what;
  ASSERT_EQ(a.in_dim_size("register"), 8 * m_tiles * k_tiles) << what;
  ASSERT_EQ(b.in_dim_size("register"), 4 * n_tiles * k_tiles) << what;
  ASSERT_EQ(c.in_dim_size("warp"), num_warps);
  const auto wrap = [](std::int64_t value, std::int64_t size) { return static_cast<std::int32_t>(value % size); };
  for (std::int32_t warp = 0; warp < num_warps; ++warp) {
    const std::int64_t warp_row = 16 * (warp % warps.m), warp_column = 8 * ((warp / warps.m) % warps.n);
    for (std::int32_t lane = 0; lane < 32; ++lane) {
      const std::int64_t g = lane / 4, t = lane % 4;
      for (int mi = 0; mi < m_tiles; ++mi)
        for (int ni = 0; ni < n_tiles; ++ni)
          for (int e = 0; e < 4; ++e) {
            const std::int64_t row = 16 * warps.m * mi + warp_row + g + 8 * (e >> 1);
            const std::int64_t column = 8 * warps.n * ni + warp_column + 2 * t + (e & 1);
            EXPECT_EQ(element_at(c, e + 4 * (ni + n_tiles * mi), lane, warp), Element(wrap(row, m), wrap(column, n)))
                << what << " c" << e << " lane " << lane << " warp " << warp;
          }
      for (int ki = 0; ki < k_tiles; ++ki) {
        for (int mi = 0; mi < m_tiles; ++mi)
          for (int e = 0; e < 8; ++e) {
            const std::int64_t row = 16 * warps.m * mi + warp_row + g + 8 * ((e >> 1) & 1);
            const std::int64_t column = 16 * ki + 2 * t + (e & 1) + 8 * (e >> 2);
            EXPECT_EQ(element_at(a, e + 8 * (ki + k_tiles * mi), lane, warp), Element(wrap(row, m), wrap(column, k)))
                << what << " a" << e << " lane " << lane << " warp " << warp;
          }
        for (int ni = 0; ni < n_tiles; ++ni)
          for (int e = 0; e < 4; ++e) {
            const std::int64_t row = 16 * ki + 2 * t + (e & 1) + 8 * (e >> 1);
            const std::int64_t column = 8 * warps.n * ni + warp_column + g;
            EXPECT_EQ(element_at(b, e + 4 * (ki + k_tiles * ni), lane, warp), Element(wrap(row, k), wrap(column, n)))
                << what << " b" << e << " lane " << lane << " warp " << warp;
          }
      }
    }
  }
}

TEST(MmaLayout, FragmentsFollowThePtxIsaTables) {
  expect_mma_fragments(16, 8, 16, 1);
  expect_mma_fragments(64, 64, 32, 4);
  expect_mma_fragments(32, 64, 16, 4);
  expect_mma_fragments(128, 32, 64, 8);
  expect_mma_fragments(64, 128, 64, 4);
  expect_mma_fragments(16, 16, 32, 2);
}

/// The operand layouts of m16n8k32 (8-bit elements, four to a register)
/// and m16n8k8 (tf32, one to a register) against the PTX ISA's tables: in
/// a 16 x k tile of a, element j of a lane is element j % e of register
/// r = j / e, at row g + 8 (r & 1) and column e t + j % e + (k / 2)(r >> 1);
/// in a k x 8 tile of b, at row e t + j % e + (k / 2) r and column g.
void expect_fragments_of(MmaInstruction instruction, std::int64_t m, std::int64_t n, std::int64_t k, int num_warps) {
  const MmaWarps warps = mma_warps(m, n, num_warps);
  const LinearLayout a = mma_operand_layout(DotOperand::a, m, k, warps, num_warps, instruction);
  const LinearLayout b = mma_operand_layout(DotOperand::b, k, n, warps, num_warps, instruction);
  const int e = instruction.elements_per_register, tile_k = instruction.k;
  const auto m_tiles = static_cast<int>(std::max<std::int64_t>(1, m / (16 * warps.m)));
  const auto n_tiles = static_cast<int>(std::max<std::int64_t>(1, n / (8 * warps.n)));
  const auto k_tiles = static_cast<int>(k / tile_k);
  const std::string what = "k" + std::to_string(tile_k) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                           std::to_string(k) + " warps " + std::to_string(num_warps);
  ASSERT_EQ(a.in_dim_size("register"), tile_k / 2 * m_tiles * k_tiles) << what;
  ASSERT_EQ(b.in_dim_size("register"), tile_k / 4 * n_tiles * k_tiles) << what;
  for (std::int32_t warp = 0; warp < num_warps; ++warp) {
    const std::int64_t warp_row = 16 * (warp % warps.m), warp_column = 8 * ((warp / warps.m) % warps.n);
    for (std::int32_t lane = 0; lane < 32; ++lane) {
      const std::int64_t g = lane / 4, t = lane % 4;
      for (int ki = 0; ki < k_tiles; ++ki) {
        for (int mi = 0; mi < m_tiles; ++mi)
          for (int j = 0; j < tile_k / 2; ++j) {
            const int r = j / e;
            const std::int64_t row = 16 * warps.m * mi + warp_row + g + 8 * (r & 1);
            const std::int64_t column = tile_k * ki + e * t + j % e + tile_k / 2 * (r >> 1);
            EXPECT_EQ(element_at(a, j + tile_k / 2 * (ki + k_tiles * mi), lane, warp),
                      Element(static_cast<std::int32_t>(row % m), static_cast<std::int32_t>(column)))
                << what << " a" << j << " lane " << lane << " warp " << warp;
          }
        for (int ni = 0; ni < n_tiles; ++ni)
          for (int j = 0; j < tile_k / 4; ++j) {
            const std::int64_t row = tile_k * ki + e * t + j % e + tile_k / 2 * (j / e);
            const std::int64_t column = 8 * warps.n * ni + warp_column + g;
            EXPECT_EQ(element_at(b, j + tile_k / 4 * (ki + k_tiles * ni), lane, warp),
                      Element(static_cast<std::int32_t>(row), static_cast<std::int32_t>(column % n)))
                << what << " b" << j << " lane " << lane << " warp " << warp;
          }
      }
    }
  }
}

TEST(MmaLayout, EightBitAndTf32FragmentsFollowThePtxIsaTables) {
  expect_fragments_of({32, 4}, 16, 8, 32, 1);
  expect_fragments_of({32, 4}, 64, 64, 64, 4);
  expect_fragments_of({8, 1}, 16, 8, 8, 1);
  expect_fragments_of({8, 1}, 64, 32, 32, 4);
  // The 16-bit instruction read by the same rule.
  expect_fragments_of({16, 2}, 64, 64, 32, 4);
}

TEST(MmaLayout, SmallTilesWrapIntoCopies) {
  expect_mma_fragments(8, 4, 16, 4);
  expect_mma_fragments(16, 64, 16, 8);
  expect_mma_fragments(1, 1, 16, 4);
}

// mma_warps takes the split whose warps read the fewest operand elements a
// step (M / m + N / n), the most warps down the rows among equals;
// mma_warps_down_rows fills the rows first.
TEST(MmaLayout, WarpSplits) {
  auto split = [](MmaWarps warps) { return std::pair{warps.m, warps.n}; };
  EXPECT_EQ(split(mma_warps(64, 64, 4)), std::pair(2, 2)) << "32 + 32, not 16 + 64";
  EXPECT_EQ(split(mma_warps(64, 32, 4)), std::pair(4, 1)) << "16 + 32, as 32 + 16";
  EXPECT_EQ(split(mma_warps(64, 16, 4)), std::pair(4, 1));
  EXPECT_EQ(split(mma_warps(128, 128, 8)), std::pair(4, 2)) << "32 + 64, as 64 + 32";
  EXPECT_EQ(split(mma_warps(128, 256, 8)), std::pair(2, 4));
  EXPECT_EQ(split(mma_warps(16, 64, 8)), std::pair(1, 8));
  EXPECT_EQ(split(mma_warps(32, 16, 8)), std::pair(2, 2)) << "4 warps hold copies";
  EXPECT_EQ(split(mma_warps(16, 8, 4)), std::pair(1, 1)) << "one tile: copies";
  EXPECT_EQ(split(mma_warps_down_rows(64, 64, 4)), std::pair(4, 1));
  EXPECT_EQ(split(mma_warps_down_rows(16, 64, 8)), std::pair(1, 8));
  EXPECT_EQ(split(mma_warps_down_rows(32, 16, 8)), std::pair(2, 2));
  try {
    mma_operand_layout(DotOperand::a, 16, 8, mma_warps(16, 8, 1), 1);
    ADD_FAILURE() << "K = 8 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "mma layout: K is 8, not a multiple of 16");
  }
}

TEST(DotOperandLayout, AssignLayoutsConvertsOperandsNotInTheirDotOperandLayout) {
  const std::unique_ptr<ir::Function> fn = ir::parse_function(R"(kernel @dot(%0: ptr<f16>, %1: ptr<f32>) {
  %2 = arange {start = 0} : tile<32xi32>
  %3 = expand_dims %2 {axis = 1} : tile<32x1xi32>
  %4 = broadcast %3 : tile<32x16xi32>
  %5 = splat %0 : tile<32x16xptr<f16>>
  %6 = addptr %5, %4 : tile<32x16xptr<f16>>
  %7 = load %6 {cache = none, evict = none} : tile<32x16xf16>
  %8 = arange {start = 0} : tile<16xi32>
  %9 = expand_dims %8 {axis = 1} : tile<16x1xi32>
  %10 = broadcast %9 : tile<16x128xi32>
  %11 = splat %0 : tile<16x128xptr<f16>>
  %12 = addptr %11, %10 : tile<16x128xptr<f16>>
  %20 = load %12 {cache = none, evict = none} : tile<16x128xf16>
  %13 = splat %1 : tile<32x128xptr<f32>>
  %14 = broadcast %3 : tile<32x128xi32>
  %15 = addptr %13, %14 : tile<32x128xptr<f32>>
  %16 = load %15 {cache = none, evict = none} : tile<32x128xf32>
  %17 = dot %7, %20, %16 {precision = ieee} : tile<32x128xf32>
  store %15, %17 {cache = none, evict = none}
}
)");
  const AxisInfoMap axes = analyze_axes(*fn);
  const LayoutMap layouts = assign_layouts(*fn, axes, GpuTarget{.num_warps = 4, .tensor_cores = false});
  const ir::Operation* dot = nullptr;
  for (const auto& op : fn->body.ops)
    if (op->code == ir::OpCode::dot) dot = op.get();
  ASSERT_NE(dot, nullptr);
  const LinearLayout& result = layouts.at(*dot->result());
  EXPECT_EQ(layouts.at(*dot->operands[2]), result);
  const LayoutConversion* a = layouts.conversion(*dot, *dot->operands[0]);
  const LayoutConversion* b = layouts.conversion(*dot, *dot->operands[1]);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->from, layouts.at(*dot->operands[0]));
  EXPECT_EQ(a->to, dot_operand_layout(result, DotOperand::a, 16));
  // Lanes and warps all run along the 128 columns, so b's own blocked layout
  // (its 16 rows in registers) already is its dot operand layout.
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(layouts.at(*dot->operands[1]), dot_operand_layout(result, DotOperand::b, 16));
  expect_operands_cover_needs(result, 16, "the assigned result layout");
}

}  // namespace
}  // namespace kiln::lowering
