// Shared-memory layouts and accesses: the swizzled layouts are bijections
// that keep 16-byte chunks whole; the wavefront count follows the bank rules;
// the ldmatrix plans deliver, lane by lane, exactly the elements of the mma
// fragments (simulated from the PTX ISA's definition of ldmatrix); and the
// layout chosen for each operand tile of the library's tensor-core dots is
// bank-conflict free for its store and its read, where the unswizzled
// row-major layout is not.
#include "kiln/lowering/shared_access.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/shared_layout.hpp"

namespace kiln::lowering {
namespace {

using Element = std::pair<std::int32_t, std::int32_t>;

Element coordinates(const LinearLayout& layout, const LinearLayout::Coordinates& in) {
  const LinearLayout::Coordinates out = layout.apply(in);
  return {out[0].second, out[1].second};
}

Element at_offset(const LinearLayout& shared, std::int32_t offset) { return coordinates(shared, {{"offset", offset}}); }

Element held(const LinearLayout& registers, std::int32_t reg, std::int32_t lane, std::int32_t warp) {
  return coordinates(registers, {{"register", reg}, {"lane", lane}, {"warp", warp}});
}

std::int32_t offset_of(const LinearLayout& registers, const LinearLayout& shared, std::int32_t reg, std::int32_t lane,
                       std::int32_t warp) {
  return register_offsets(registers, shared).apply({{"register", reg}, {"lane", lane}, {"warp", warp}})[0].second;
}

TEST(SharedLayout, UnswizzledIsRowMajorAlongTheContiguousDimension) {
  const LinearLayout along_columns = swizzled_shared_layout(16, 32, 1, 2, {});
  const LinearLayout along_rows = swizzled_shared_layout(16, 32, 0, 2, {});
  for (std::int32_t offset = 0; offset < 16 * 32; ++offset) {
    EXPECT_EQ(at_offset(along_columns, offset), Element(offset / 32, offset % 32));
    EXPECT_EQ(at_offset(along_rows, offset), Element(offset % 16, offset / 16));
  }
  EXPECT_EQ(row_major_shared_layout(along_columns.out_dims()), along_columns);
}

TEST(SharedLayout, SwizzleIsABijectionThatKeepsChunksWhole) {
  for (const auto& [rows, columns, element_bytes] :
       std::vector<std::tuple<int, int, int>>{{64, 32, 2}, {32, 64, 2}, {16, 128, 2}, {64, 16, 4}, {32, 64, 1}})
    for (int bits = 0; bits <= std::min(3, swizzle_bits_available(columns, element_bytes)); ++bits)
      for (int shift = 0; (1 << (shift + bits)) <= rows; ++shift) {
        const LinearLayout shared = swizzled_shared_layout(rows, columns, 1, element_bytes, {shift, bits});
        const int chunk = std::min(16 / element_bytes, columns);
        std::set<Element> seen;
        for (std::int32_t offset = 0; offset < rows * columns; ++offset) {
          const Element element = at_offset(shared, offset);
          EXPECT_TRUE(seen.insert(element).second) << "offset " << offset << " repeats an element";
          const Element chunk_start = at_offset(shared, offset - offset % chunk);
          EXPECT_EQ(element, Element(chunk_start.first, chunk_start.second + offset % chunk));
          // The swizzle moves chunks within their row only.
          EXPECT_EQ(element.first, offset / columns);
        }
      }
}

TEST(SharedLayout, RejectsASwizzleThatDoesNotFit) {
  EXPECT_THROW(swizzled_shared_layout(64, 16, 1, 2, {0, 2}), std::invalid_argument);  // a row is 2 chunks
  EXPECT_THROW(swizzled_shared_layout(4, 64, 1, 2, {0, 3}), std::invalid_argument);   // 4 rows
  EXPECT_THROW(swizzled_shared_layout(24, 64, 1, 2, {}), std::invalid_argument);      // not a power of two
}

TEST(WarpAccessCost, FollowsTheBankRules) {
  std::vector<std::uint32_t> consecutive, same_bank, same_word, quarter_warps;
  for (std::uint32_t lane = 0; lane < 32; ++lane) {
    consecutive.push_back(4 * lane);
    same_bank.push_back(128 * lane);
    same_word.push_back(64);
    quarter_warps.push_back(16 * lane);
  }
  EXPECT_EQ(warp_access_cost(consecutive, 4).wavefronts, 1);
  EXPECT_EQ(warp_access_cost(consecutive, 4).conflicts(), 0);
  EXPECT_EQ(warp_access_cost(same_bank, 4).wavefronts, 32);
  EXPECT_EQ(warp_access_cost(same_bank, 4).conflicts(), 31);
  EXPECT_EQ(warp_access_cost(same_word, 4).wavefronts, 1);
  EXPECT_EQ(warp_access_cost(quarter_warps, 16).wavefronts, 4);
  EXPECT_EQ(warp_access_cost(quarter_warps, 16).conflicts(), 0);
  // Two 2-byte elements of one word: one access.
  EXPECT_EQ(warp_access_cost(std::vector<std::uint32_t>{0, 2}, 2).wavefronts, 1);
  // 16-byte rows 128 bytes apart: eight rows in one bank group.
  std::vector<std::uint32_t> rows;
  for (std::uint32_t row = 0; row < 8; ++row) rows.push_back(128 * row);
  EXPECT_EQ(warp_access_cost(rows, 16).wavefronts, 8);
  EXPECT_THROW(warp_access_cost(rows, 12), std::invalid_argument);
}

/// Simulates ldmatrix as the PTX ISA defines it on a shared tile whose
/// offset o holds element at_offset(shared, o), and checks that each lane
/// receives, in each register, the element the fragment layout puts there.
void expect_ldmatrix_delivers_the_fragment(const LinearLayout& fragment, const LinearLayout& shared,
                                           const LdmatrixPlan& plan) {
  const LinearLayout offsets = register_offsets(fragment, shared);
  for (std::int32_t warp = 0; warp < fragment.in_dim_size("warp"); ++warp)
    for (std::int32_t first = 0; first < fragment.in_dim_size("register"); first += plan.registers_per_load()) {
      std::vector<std::int32_t> row_offset;
      for (std::int32_t lane = 0; lane < 32; ++lane) {
        std::int32_t offset = offsets.apply({{"register", first}, {"lane", 0}, {"warp", warp}})[0].second;
        for (int bit = 0; bit < 5; ++bit)
          if ((lane >> bit) & 1) offset ^= plan.lane_offsets[static_cast<std::size_t>(bit)];
        ASSERT_EQ(offset % (4 * plan.elements_per_register), 0)
            << "lane " << lane << " supplies a row that is not 16-byte aligned";
        row_offset.push_back(offset);
      }
      // Without .trans lane l gets the 32-bit word l % 4 of row l / 4; with
      // it (16-bit elements) element l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
      const int per_word = plan.elements_per_register;
      for (std::int32_t lane = 0; lane < 32; ++lane)
        for (int matrix = 0; matrix < plan.matrices; ++matrix)
          for (int e = 0; e < per_word; ++e) {
            const std::int32_t offset = plan.transposed ? row_offset[8 * matrix + 2 * (lane % 4) + e] + lane / 4
                                                        : row_offset[8 * matrix + lane / 4] + per_word * (lane % 4) + e;
            const int reg = first + per_word * matrix + e;
            EXPECT_EQ(at_offset(shared, offset), held(fragment, reg, lane, warp))
                << "warp " << warp << " lane " << lane << " register " << reg;
          }
    }
}

/// The blocked layout kiln gives a 2-D f16 tile loaded from global memory
/// with 16-byte accesses along `contiguous_dim`, 4 warps.
LinearLayout loaded_tile(std::int64_t rows, std::int64_t columns, int contiguous_dim) {
  if (contiguous_dim == 1) {
    const std::int64_t lanes_along = std::min<std::int64_t>(32, columns / 8);
    return blocked_layout({rows, columns}, {1, 8}, {32 / lanes_along, lanes_along}, {4, 1}, {1, 0});
  }
  const std::int64_t lanes_along = std::min<std::int64_t>(32, rows / 8);
  return blocked_layout({rows, columns}, {8, 1}, {lanes_along, 32 / lanes_along}, {1, 4}, {0, 1});
}

struct OperandCase {
  DotOperand operand;
  std::int64_t m, n, k;
  int contiguous_dim;  // of the tile as loaded
  bool transposed;     // the ldmatrix form expected
};

std::string name_of(const OperandCase& c) {
  return std::string(c.operand == DotOperand::a ? "a" : "b") + " of " + std::to_string(c.m) + "x" +
         std::to_string(c.n) + "x" + std::to_string(c.k) + " stored along dim" + std::to_string(c.contiguous_dim);
}

// The operand tiles of the library's tensor-core dots (matmul 64x64x32 and
// 128x128x32, attention's K^T and V at head_dim 64 and 128), stored along
// either dimension.
const std::vector<OperandCase> kOperandCases = {
    {DotOperand::a, 64, 64, 32, 1, false},   {DotOperand::b, 64, 64, 32, 1, true},
    {DotOperand::a, 128, 128, 32, 1, false}, {DotOperand::b, 128, 128, 32, 1, true},
    {DotOperand::a, 64, 64, 32, 0, true},    {DotOperand::b, 64, 64, 32, 0, false},
    {DotOperand::b, 128, 64, 64, 0, false},  {DotOperand::b, 128, 64, 64, 1, true},
    {DotOperand::b, 64, 128, 128, 1, true},  {DotOperand::a, 64, 128, 128, 1, false},
    {DotOperand::b, 32, 128, 128, 0, false},
};

LinearLayout fragment_of(const OperandCase& c) {
  const MmaWarps warps = mma_warps(c.m, c.n, 4);
  return c.operand == DotOperand::a ? mma_operand_layout(DotOperand::a, c.m, c.k, warps, 4)
                                    : mma_operand_layout(DotOperand::b, c.k, c.n, warps, 4);
}

/// An operand tile as the code generator stages it: stored from the layout
/// it is loaded in, into the shared layout chosen for it, read as its fragment.
struct StagedOperand {
  LinearLayout fragment, writer, shared;
};

StagedOperand staged(const OperandCase& c) {
  LinearLayout fragment = fragment_of(c);
  LinearLayout writer = loaded_tile(fragment.out_dim_size("dim0"), fragment.out_dim_size("dim1"), c.contiguous_dim);
  LinearLayout shared = choose_shared_layout(writer, fragment, 2);
  return {std::move(fragment), std::move(writer), std::move(shared)};
}

TEST(Ldmatrix, PlansDeliverTheMmaFragments) {
  for (const OperandCase& c : kOperandCases) {
    const auto [fragment, writer, shared] = staged(c);
    const std::optional<LdmatrixPlan> plan = plan_ldmatrix(fragment, shared, 2);
    ASSERT_TRUE(plan) << name_of(c);
    EXPECT_EQ(plan->transposed, c.transposed) << name_of(c);
    EXPECT_EQ(plan->matrices, 4) << name_of(c);
    SCOPED_TRACE(name_of(c));
    expect_ldmatrix_delivers_the_fragment(fragment, shared, *plan);
  }
}

TEST(Ldmatrix, EightAndThirtyTwoBitFragmentsAlongK) {
  // i8 (m16n8k32) and tf32 (m16n8k8) operands stored along K: plain ldmatrix,
  // four and one elements to a word; stored across K there is no plan.
  for (const auto& [instruction, element_bytes] :
       std::vector<std::pair<MmaInstruction, int>>{{{32, 4}, 1}, {{8, 1}, 4}}) {
    const MmaWarps warps = mma_warps(64, 64, 4);
    for (DotOperand operand : {DotOperand::a, DotOperand::b}) {
      const bool is_a = operand == DotOperand::a;
      const LinearLayout fragment = mma_operand_layout(operand, 64, 64, warps, 4, instruction);
      const std::string what = std::to_string(element_bytes) + "-byte " + (is_a ? "a" : "b");
      const LinearLayout along_k = swizzled_shared_layout(64, 64, is_a ? 1 : 0, element_bytes, {});
      const std::optional<LdmatrixPlan> plan = plan_ldmatrix(fragment, along_k, element_bytes);
      ASSERT_TRUE(plan) << what;
      EXPECT_FALSE(plan->transposed) << what;
      EXPECT_EQ(plan->elements_per_register, 4 / element_bytes) << what;
      SCOPED_TRACE(what);
      expect_ldmatrix_delivers_the_fragment(fragment, along_k, *plan);
      EXPECT_FALSE(
          plan_ldmatrix(fragment, swizzled_shared_layout(64, 64, is_a ? 0 : 1, element_bytes, {}), element_bytes))
          << what << " stored across K";
    }
  }
}

TEST(Ldmatrix, SmallFragmentsUseFewerMatrices) {
  // b of a 16 x 8 x 16 dot: 4 registers per lane, two matrices.
  const LinearLayout fragment = mma_operand_layout(DotOperand::b, 16, 8, mma_warps(16, 8, 1), 1);
  const LinearLayout shared = swizzled_shared_layout(16, 8, 1, 2, {});
  const std::optional<LdmatrixPlan> plan = plan_ldmatrix(fragment, shared, 2);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->matrices, 2);
  EXPECT_TRUE(plan->transposed);
  expect_ldmatrix_delivers_the_fragment(fragment, shared, *plan);
}

TEST(Ldmatrix, NoPlanWhereTheLayoutsDoNotFit) {
  const LinearLayout fragment = fragment_of(kOperandCases[0]);
  const LinearLayout shared = swizzled_shared_layout(64, 32, 1, 2, {});
  EXPECT_FALSE(plan_ldmatrix(fragment, swizzled_shared_layout(64, 32, 1, 4, {}), 4)) << "32-bit elements";
  EXPECT_FALSE(plan_ldmatrix(loaded_tile(64, 32, 1), shared, 2)) << "a blocked reader";
}

TEST(BankConflicts, ChosenOperandLayoutsAreConflictFreeAndRowMajorIsNot) {
  for (const OperandCase& c : kOperandCases) {
    const auto [fragment, writer, shared] = staged(c);
    const std::int64_t rows = fragment.out_dim_size("dim0"), columns = fragment.out_dim_size("dim1");
    const SharedAccessCost store = tile_access_cost(writer, shared, 2);
    const SharedAccessCost read = fragment_read_cost(fragment, shared, 2);
    EXPECT_EQ(store.conflicts(), 0) << name_of(c) << ": " << store.wavefronts << " wavefronts for " << store.ideal;
    EXPECT_EQ(read.conflicts(), 0) << name_of(c) << ": " << read.wavefronts << " wavefronts for " << read.ideal;
    EXPECT_EQ(shared_vector_elements(OffsetBases(register_offsets(writer, shared)), 2), 8) << name_of(c);

    const LinearLayout row_major = swizzled_shared_layout(rows, columns, c.contiguous_dim, 2, {});
    EXPECT_GT(fragment_read_cost(fragment, row_major, 2).conflicts(), 0)
        << name_of(c) << ": the unswizzled layout reads without conflicts, so the test would pass without a swizzle";
  }
}

TEST(BankConflicts, OffsetsOfAVectorGroupAreConsecutive) {
  const LinearLayout writer = loaded_tile(64, 32, 1);
  const LinearLayout shared = choose_shared_layout(writer, fragment_of(kOperandCases[0]), 2);
  for (std::int32_t lane = 0; lane < 32; ++lane)
    for (std::int32_t reg = 0; reg < 8; ++reg)
      EXPECT_EQ(offset_of(writer, shared, reg, lane, 0), offset_of(writer, shared, 0, lane, 0) + reg);
}

}  // namespace
}  // namespace kiln::lowering
