// wgmma on sm_90a (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply"):
// which dots run on it, and the canonical shared-memory layout its operand
// tiles must have for the matrix descriptors. A warpgroup (4 consecutive
// warps) multiplies a 64-row slice of A by B into accumulators that lie as
// the mma.sync accumulator layout does when every warp runs along M, so a
// wgmma dot keeps dot_accumulator_layout; A and B are read by the tensor
// cores straight from shared memory (8-bit tiles K-major only), laid out
// as a "swizzle atom" repeated: rows of W elements (W x element bytes = the
// swizzle width, 32, 64 or 128 bytes) along the contiguous dimension, 8
// rows per atom, the 16-byte chunks of row r XORed with row bits as the
// swizzle mode says, and the contiguous dimension beyond W split into
// blocks of W placed one after the other, each holding every row.
#pragma once

#include <cstdint>
#include <optional>

#include "kiln/ir/ir.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// Rows of the accumulator one warpgroup's wgmma covers.
inline constexpr int kWgmmaRows = 64;
/// The widest N one wgmma takes.
inline constexpr int kWgmmaMaxColumns = 256;
/// The bytes of the largest swizzle pattern (8 rows of 128 bytes): a tile
/// starting on a multiple of it starts on its pattern whatever its swizzle.
inline constexpr std::uint64_t kWgmmaLargestAtomBytes = 1024;
/// Warps per warpgroup.
inline constexpr int kWarpsPerWarpgroup = 4;

/// The bytes of K one wgmma instruction takes (k16 of f16 and bf16, k32 of
/// 8-bit inputs).
inline constexpr int kWgmmaDepthBytes = 32;

/// Whether `dot` runs on wgmma for `target`: a tensor-core dot
/// (dot_uses_tensor_cores) on sm_90a with f16, bf16 or 8-bit inputs (i8,
/// f8e4m3, f8e5m2), whose M is a multiple of 64 and at least 16 x num_warps
/// (so the mma layout puts every warp along M and a warpgroup's four warps
/// on 64 consecutive rows), with num_warps a multiple of 4. wgmma reads
/// 8-bit tiles only K-major, so an 8-bit operand read from a ring slot
/// needs copies into the ring that do not run along M or N in vectors
/// (cp.async does not transpose; `axes` gives the copies' pointers); an
/// operand the dot stores itself is stored K-major.
bool dot_uses_wgmma(const ir::Function& fn, const ir::Operation& dot, const GpuTarget& target, const AxisInfoMap& axes);

/// The part of dot_uses_wgmma's conditions that the dot and the target
/// decide alone: all but the memory order of 8-bit operands.
bool dot_fits_wgmma(const ir::Operation& dot, const GpuTarget& target);

/// Whether wgmma reads tiles of `dtype` only K-major (it has imm-trans for
/// f16 and bf16 alone).
bool wgmma_reads_only_k_major(ir::DType dtype);

/// The dimension the tile of `operand` of a wgmma `dot` is stored along
/// when its writer holds contiguous elements along `writer_dim`: K (1 for
/// a, 0 for b) for inputs wgmma reads only K-major, else `writer_dim`.
int wgmma_contiguous_dim(const ir::Operation& dot, DotOperand operand, int writer_dim);

/// The shared tile of one wgmma operand: a [rows, columns] tile of
/// `element_bytes`-byte elements stored along `contiguous_dim` in the
/// canonical layout of a `swizzle_bytes` swizzle.
struct WgmmaTile {
  DotOperand operand = DotOperand::a;
  std::int64_t rows = 0, columns = 0;
  int element_bytes = 2;
  int contiguous_dim = 1;
  int swizzle_bytes = 128;
  /// offset (elements) → (dim0, dim1), with the swizzle.
  LinearLayout layout;

  /// Whether the tile runs along M (a) or N (b) rather than K: wgmma's
  /// imm-trans flag for it.
  bool mn_major() const;
  /// Elements per row of an atom (W).
  std::int64_t row_elements() const { return swizzle_bytes / element_bytes; }
  /// The offset (elements) of element (dim0, dim1) before the swizzle: the
  /// address a descriptor starting at that element names (the tensor cores
  /// apply the swizzle to the address bits).
  std::int64_t unswizzled_offset(std::int64_t dim0, std::int64_t dim1) const;
  /// The descriptor's fields other than the start address: the leading and
  /// stride dimension byte offsets (>> 4) and the swizzle mode.
  std::uint64_t descriptor_fields() const;
  /// The alignment (bytes) the tile's start needs so that the swizzle
  /// pattern starts on it: 8 rows of the atom.
  std::uint64_t alignment() const { return 8 * static_cast<std::uint64_t>(swizzle_bytes); }
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(rows * columns * element_bytes); }
};

/// The tile of operand `operand` ([rows, columns]: M x K for a, K x N for b)
/// stored along `preferred_dim` (the dimension its writer holds contiguous
/// elements along) when that dimension has at least 32 bytes, else along
/// the other; the swizzle is the widest (up to 128 bytes) the contiguous
/// dimension fills. Throws std::invalid_argument for sizes that are not
/// powers of two or a tile neither of whose dimensions has 32 bytes.
WgmmaTile wgmma_tile(DotOperand operand, std::int64_t rows, std::int64_t columns, int preferred_dim, int element_bytes);

/// The wgmma tile of `operand` of `dot` whose layout is `shared`, if one is.
std::optional<WgmmaTile> wgmma_tile_with_layout(const ir::Operation& dot, DotOperand operand,
                                                const LinearLayout& shared);

}  // namespace kiln::lowering
