// The canonical shared tiles of wgmma's operands (wgmma_layout.hpp), of
// 16-bit elements and of 8-bit ones (stored along K): each a
// bijection onto its tile whose swizzle keeps 16-byte chunks whole, whose
// unswizzled offsets are the PTX ISA's canonical layout, whose stores from
// the 16-byte loads of a blocked layout and whose core-matrix reads by the
// tensor cores are free of bank conflicts (and the reads are not without
// the swizzle), with descriptors whose strides and modes the PTX ISA names;
// and the rule for which dots run on wgmma.
#include "kiln/lowering/wgmma_layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/ir/parser.hpp"
#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/shared_access.hpp"
#include "kiln/lowering/shared_layout.hpp"

namespace kiln::lowering {
namespace {

using Element = std::pair<std::int64_t, std::int64_t>;

/// The tiles the library's dots take: (operand, rows, columns, contiguous
/// dim, element bytes); 8-bit tiles along K (dim 1 of a, dim 0 of b).
const std::vector<std::tuple<DotOperand, int, int, int, int>> kTiles = {
    {DotOperand::a, 64, 32, 1, 2},   {DotOperand::a, 128, 64, 1, 2}, {DotOperand::a, 64, 16, 1, 2},
    {DotOperand::a, 128, 128, 1, 2}, {DotOperand::a, 64, 32, 0, 2},  {DotOperand::b, 32, 64, 1, 2},
    {DotOperand::b, 64, 128, 1, 2},  {DotOperand::b, 16, 16, 1, 2},  {DotOperand::b, 16, 32, 1, 2},
    {DotOperand::b, 64, 256, 1, 2},  {DotOperand::b, 32, 64, 0, 2},  {DotOperand::b, 64, 16, 0, 2},
    {DotOperand::a, 64, 32, 1, 1},   {DotOperand::a, 64, 64, 1, 1},  {DotOperand::a, 128, 128, 1, 1},
    {DotOperand::b, 32, 64, 0, 1},   {DotOperand::b, 128, 64, 0, 1}, {DotOperand::b, 256, 32, 0, 1}};

Element element_at(const WgmmaTile& tile, std::int64_t offset) {
  const LinearLayout::Coordinates out = tile.layout.apply({{"offset", static_cast<std::int32_t>(offset)}});
  return {out[0].second, out[1].second};
}

std::string name(const WgmmaTile& tile) {
  return std::string(tile.operand == DotOperand::a ? "a " : "b ") + std::to_string(tile.rows) + "x" +
         std::to_string(tile.columns) + " along dim" + std::to_string(tile.contiguous_dim) + " of " +
         std::to_string(tile.element_bytes) + "-byte elements";
}

TEST(WgmmaTile, IsABijectionWhoseSwizzleMovesWholeChunksWithinAnAtomRow) {
  for (const auto& [operand, rows, columns, dim, bytes] : kTiles) {
    const WgmmaTile tile = wgmma_tile(operand, rows, columns, dim, bytes);
    std::set<Element> seen;
    for (std::int64_t offset = 0; offset < rows * columns; ++offset) {
      const Element element = element_at(tile, offset);
      ASSERT_TRUE(seen.insert(element).second) << name(tile) << ": offset " << offset << " repeats an element";
      // Before the swizzle the element sits at its canonical offset; the
      // swizzle changes only the 16-byte chunk within the atom's row.
      const std::int64_t canonical = tile.unswizzled_offset(element.first, element.second);
      EXPECT_EQ(canonical % (16 / bytes), offset % (16 / bytes)) << name(tile);
      EXPECT_EQ(canonical / tile.row_elements(), offset / tile.row_elements()) << name(tile) << " offset " << offset;
    }
  }
}

TEST(WgmmaTile, CanonicalOffsetsAreRowsOfTheSwizzleWidthInBlocks) {
  // b 64 x 128 f16 along N: two blocks of 64 columns, each 64 rows of 128 bytes.
  const WgmmaTile b = wgmma_tile(DotOperand::b, 64, 128, 1, 2);
  EXPECT_EQ(b.swizzle_bytes, 128);
  EXPECT_TRUE(b.mn_major());
  EXPECT_EQ(b.unswizzled_offset(0, 0), 0);
  EXPECT_EQ(b.unswizzled_offset(1, 0), 64);
  EXPECT_EQ(b.unswizzled_offset(0, 64), 64 * 64);
  EXPECT_EQ(b.unswizzled_offset(3, 70), 64 * 64 + 3 * 64 + 6);
  // a 64 x 32 f16 along K: rows of 64 bytes, a 64-byte swizzle.
  const WgmmaTile a = wgmma_tile(DotOperand::a, 64, 32, 1, 2);
  EXPECT_EQ(a.swizzle_bytes, 64);
  EXPECT_FALSE(a.mn_major());
  EXPECT_EQ(a.unswizzled_offset(5, 17), 5 * 32 + 17);
  // Too narrow along the preferred dimension: stored along the other.
  const WgmmaTile narrow = wgmma_tile(DotOperand::b, 64, 8, 1, 2);
  EXPECT_EQ(narrow.contiguous_dim, 0);
  EXPECT_THROW(wgmma_tile(DotOperand::b, 8, 8, 1, 2), std::invalid_argument);
}

/// The offset bases of a tile stored along its columns, written out as the
/// swizzle atom's rule: the atom row's elements, then row r = 2^i XORs its
/// chunk index with (r / per_phase) % max_phase (per_phase = 128 bytes /
/// swizzle width, max_phase = swizzle width / 16 bytes), then the other
/// rows, then the blocks of W columns.
std::vector<LinearLayout::Basis> atom_rule_bases(std::int32_t rows, std::int32_t columns, int swizzle_bytes) {
  const std::int32_t w = swizzle_bytes / 2, vec = 8, per_phase = 128 / swizzle_bytes, max_phase = swizzle_bytes / 16;
  std::vector<LinearLayout::Basis> bases;
  for (std::int32_t column = 1; column < w; column *= 2) bases.push_back({0, column});
  for (std::int32_t row = 1; row < rows; row *= 2)
    bases.push_back({row, row < 8 ? vec * ((row / per_phase) % max_phase) : 0});
  for (std::int32_t column = w; column < columns; column *= 2) bases.push_back({0, column});
  return bases;
}

TEST(WgmmaTile, EachSwizzleFollowsTheAtomRule) {
  for (const auto& [rows, columns] : std::vector<std::pair<int, int>>{{64, 16}, {64, 32}, {32, 64}, {16, 128}}) {
    const WgmmaTile tile = wgmma_tile(DotOperand::b, rows, columns, 1, 2);
    std::vector<LinearLayout::Basis> bases;
    for (int bit = 0; bit < tile.layout.in_dim_size_log2("offset"); ++bit)
      bases.push_back(tile.layout.basis("offset", bit));
    EXPECT_EQ(bases, atom_rule_bases(rows, columns, tile.swizzle_bytes)) << name(tile);
  }
}

TEST(WgmmaTile, DescriptorsCarryTheStridesAndTheSwizzleMode) {
  const WgmmaTile b = wgmma_tile(DotOperand::b, 64, 128, 1, 2);
  const std::uint64_t fields = b.descriptor_fields();
  EXPECT_EQ(fields >> 16 & 0x3fff, 64u * 128u / 16u) << "leading: one block of 64 rows of 128 bytes";
  EXPECT_EQ(fields >> 32 & 0x3fff, 1024u / 16u) << "stride: 8 rows of 128 bytes";
  EXPECT_EQ(fields >> 62, 1u) << "128-byte swizzle";
  EXPECT_EQ(fields & 0x3fff, 0u) << "no start address";
  const WgmmaTile a = wgmma_tile(DotOperand::a, 64, 32, 1, 2);
  EXPECT_EQ(a.descriptor_fields() >> 32 & 0x3fff, 512u / 16u);
  EXPECT_EQ(a.descriptor_fields() >> 62, 2u) << "64-byte swizzle";
  EXPECT_EQ(wgmma_tile(DotOperand::b, 16, 16, 1, 2).descriptor_fields() >> 62, 3u) << "32-byte swizzle";
  EXPECT_EQ(a.alignment(), 512u);
}

/// The bank conflicts of the tensor cores reading every 8 x 16-byte core
/// matrix of `tile` (8 rows of one chunk along K for a K-major tile; along
/// MN, 8 K rows of one chunk): one phase of 8 16-byte accesses each.
int core_matrix_read_conflicts(const WgmmaTile& tile, const LinearLayout& shared) {
  const LinearLayout offsets = shared.invert();
  const std::int64_t extents[2] = {tile.rows, tile.columns};
  const int contiguous = tile.contiguous_dim, strided = 1 - contiguous;
  int conflicts = 0;
  for (std::int64_t row = 0; row < extents[strided]; row += 8)
    for (std::int64_t chunk = 0; chunk < extents[contiguous]; chunk += 16 / tile.element_bytes) {
      std::vector<std::uint32_t> addresses;
      for (std::int64_t r = row; r < row + 8; ++r) {
        std::int32_t coordinates[2];
        coordinates[strided] = static_cast<std::int32_t>(r);
        coordinates[contiguous] = static_cast<std::int32_t>(chunk);
        const auto offset = offsets.apply({{"dim0", coordinates[0]}, {"dim1", coordinates[1]}})[0].second;
        addresses.push_back(static_cast<std::uint32_t>(offset * tile.element_bytes));
      }
      conflicts += warp_access_cost(addresses, 16).conflicts();
    }
  return conflicts;
}

TEST(WgmmaTile, CoreMatrixReadsAreConflictFreeOnlyWithTheSwizzle) {
  for (const auto& [operand, rows, columns, dim, bytes] : kTiles) {
    const WgmmaTile tile = wgmma_tile(operand, rows, columns, dim, bytes);
    EXPECT_EQ(core_matrix_read_conflicts(tile, tile.layout), 0) << name(tile);
    // The same rows without the swizzle (row-major, where the tile is one
    // block stored along its columns): the 8 rows of a core matrix lie a
    // swizzle width apart, and rows of 64 or 128 bytes meet in the same banks.
    const bool one_block_of_rows = tile.contiguous_dim == 1 && tile.row_elements() == tile.columns;
    if (tile.swizzle_bytes >= 64 && one_block_of_rows) {
      EXPECT_GT(core_matrix_read_conflicts(tile, row_major_shared_layout(tile.layout.out_dims())), 0)
          << name(tile) << " unswizzled";
    }
  }
}

TEST(WgmmaTile, StoresFromSixteenByteLoadsAreConflictFree) {
  // The loads of a pipelined or staged operand: 16 bytes per thread along
  // the contiguous dimension, the warp's lanes across the rest (4 warps).
  for (const auto& [operand, rows, columns, dim, bytes] : kTiles) {
    const WgmmaTile tile = wgmma_tile(operand, rows, columns, dim, bytes);
    const std::int64_t contiguous_extent = dim == 1 ? columns : rows, vector = 16 / bytes;
    const std::int64_t lanes_along = std::min<std::int64_t>(32, contiguous_extent / vector);
    const std::vector<std::int64_t> per_thread =
        dim == 1 ? std::vector<std::int64_t>{1, vector} : std::vector<std::int64_t>{vector, 1};
    const std::vector<std::int64_t> lanes = dim == 1 ? std::vector<std::int64_t>{32 / lanes_along, lanes_along}
                                                     : std::vector<std::int64_t>{lanes_along, 32 / lanes_along};
    const std::vector<std::int64_t> order =
        dim == 1 ? std::vector<std::int64_t>{1, 0} : std::vector<std::int64_t>{0, 1};
    const std::vector<std::int64_t> warps =
        dim == 1 ? std::vector<std::int64_t>{4, 1} : std::vector<std::int64_t>{1, 4};
    const LinearLayout writer = blocked_layout({rows, columns}, per_thread, lanes, warps, order);
    ASSERT_TRUE(stored_in_16_byte_vectors(writer, tile.layout, bytes)) << name(tile);
    EXPECT_EQ(tile_access_cost(writer, tile.layout, bytes).conflicts(), 0) << name(tile);
  }
}

TEST(WgmmaTile, EveryTileHasItsLayoutFoundAgain) {
  const std::unique_ptr<ir::Function> fn =
      ir::parse_function(R"(kernel @k(%a: tile<64x32xf16>, %b: tile<32x64xf16>, %acc: tile<64x64xf32>) {
  %d = dot %a, %b, %acc {precision = ieee} : tile<64x64xf32>
}
)");
  const ir::Operation& dot = *fn->body.ops.back();
  for (int dim : {0, 1}) {
    const WgmmaTile tile = wgmma_tile(DotOperand::b, 32, 64, dim, 2);
    const std::optional<WgmmaTile> found = wgmma_tile_with_layout(dot, DotOperand::b, tile.layout);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->contiguous_dim, dim);
  }
  EXPECT_FALSE(wgmma_tile_with_layout(dot, DotOperand::a, row_major_shared_layout({{"dim0", 6}, {"dim1", 5}})));
}

}  // namespace
}  // namespace kiln::lowering
