// Which dots run on wgmma, and the canonical shared layouts of their
// operand tiles (wgmma_layout.hpp).
#include "kiln/lowering/wgmma_layout.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "operand_uses.hpp"

namespace kiln::lowering {

namespace {

int log2_of(const char* what, std::int64_t value) {
  if (value <= 0 || !std::has_single_bit(static_cast<std::uint64_t>(value)) || value > (std::int64_t{1} << 30))
    throw std::invalid_argument(std::string("wgmma tile: ") + what + " is " + std::to_string(value) +
                                ", not a power of two");
  return std::countr_zero(static_cast<std::uint64_t>(value));
}

/// The descriptor's swizzle mode (bits 62-63) of a swizzle width.
std::uint64_t swizzle_mode(int swizzle_bytes) {
  switch (swizzle_bytes) {
    case 128: return 1;
    case 64: return 2;
    case 32: return 3;
    default: throw std::invalid_argument("wgmma tile: no swizzle mode is " + std::to_string(swizzle_bytes) + " bytes");
  }
}

/// The layout of `tile` from offset to (dim0, dim1): the row's elements,
/// then its rows (each XORing its swizzle bits into the chunk index), then
/// the blocks of W along the contiguous dimension.
LinearLayout tile_layout(const WgmmaTile& tile) {
  const int contiguous = tile.contiguous_dim, strided = 1 - contiguous;
  const std::int64_t extents[2] = {tile.rows, tile.columns};
  const int contiguous_bits = log2_of("the contiguous extent", extents[contiguous]);
  const int row_bits = log2_of("the strided extent", extents[strided]);
  const int w_bits = log2_of("the atom row", tile.row_elements());
  const int chunk_element_bits = log2_of("a 16-byte chunk", 16 / tile.element_bytes);
  const int swizzle_bits = log2_of("the swizzle", tile.swizzle_bytes / 16);
  const int swizzle_shift = 3 - swizzle_bits;
  auto basis = [&](std::int32_t along_contiguous, std::int32_t along_strided) {
    LinearLayout::Basis b = {0, 0};
    b[static_cast<std::size_t>(contiguous)] = along_contiguous;
    b[static_cast<std::size_t>(strided)] = along_strided;
    return b;
  };
  std::vector<LinearLayout::Basis> offsets;
  for (int bit = 0; bit < w_bits; ++bit) offsets.push_back(basis(std::int32_t{1} << bit, 0));
  for (int bit = 0; bit < row_bits; ++bit) {
    const int chunk_bit = bit - swizzle_shift;
    const std::int32_t xored =
        chunk_bit >= 0 && chunk_bit < swizzle_bits ? std::int32_t{1} << (chunk_element_bits + chunk_bit) : 0;
    offsets.push_back(basis(xored, std::int32_t{1} << bit));
  }
  for (int bit = w_bits; bit < contiguous_bits; ++bit) offsets.push_back(basis(std::int32_t{1} << bit, 0));
  return LinearLayout({{"offset", std::move(offsets)}},
                      {{"dim0", log2_of("dim0", tile.rows)}, {"dim1", log2_of("dim1", tile.columns)}});
}

}  // namespace

bool wgmma_reads_only_k_major(ir::DType dtype) { return dtype != ir::DType::f16 && dtype != ir::DType::bf16; }

int wgmma_contiguous_dim(const ir::Operation& dot, DotOperand operand, int writer_dim) {
  if (!wgmma_reads_only_k_major(dot.operands.at(0)->type.dtype)) return writer_dim;
  return operand == DotOperand::a ? 1 : 0;
}

bool dot_fits_wgmma(const ir::Operation& dot, const GpuTarget& target) {
  if (!target.wgmma || target.arch != "sm_90a" || !dot_uses_tensor_cores(dot, target)) return false;
  if (dot.operands[0]->type.dtype == ir::DType::f32) return false;
  const std::int64_t m_size = dot.operands[0]->type.shape[0], n_size = dot.operands[1]->type.shape[1];
  return target.num_warps % kWarpsPerWarpgroup == 0 && m_size % kWgmmaRows == 0 &&
         m_size >= 16 * std::int64_t{target.num_warps} && n_size >= 8 && n_size % 8 == 0;
}

bool dot_uses_wgmma(const ir::Function& fn, const ir::Operation& dot, const GpuTarget& target,
                    const AxisInfoMap& axes) {
  if (!dot_fits_wgmma(dot, target)) return false;
  if (!wgmma_reads_only_k_major(dot.operands[0]->type.dtype)) return true;
  for (const int index : {0, 1}) {
    if (!reads_shared_slot(dot, index)) continue;
    const int k_dim = index == 0 ? 1 : 0;
    const ir::Value& ring = *dot.operands[static_cast<std::size_t>(index)]->def->operands.at(0);
    for (const auto& [copy, operand] : uses_of(fn, ring))
      if (copy->code == ir::OpCode::async_copy && access_vector_width(axes, *copy) > 1 &&
          fastest_dimension(axes.at(*copy->operands[2])) != k_dim)
        return false;
  }
  return true;
}

bool WgmmaTile::mn_major() const { return operand == DotOperand::a ? contiguous_dim == 0 : contiguous_dim == 1; }

std::int64_t WgmmaTile::unswizzled_offset(std::int64_t dim0, std::int64_t dim1) const {
  const std::int64_t along = contiguous_dim == 1 ? dim1 : dim0, across = contiguous_dim == 1 ? dim0 : dim1;
  const std::int64_t strided_extent = contiguous_dim == 1 ? rows : columns;
  const std::int64_t w = row_elements();
  return along / w * (strided_extent * w) + across * w + along % w;
}

std::uint64_t WgmmaTile::descriptor_fields() const {
  const std::uint64_t atom_row_bytes = static_cast<std::uint64_t>(swizzle_bytes);
  const std::uint64_t strided_extent = static_cast<std::uint64_t>(contiguous_dim == 1 ? rows : columns);
  const std::uint64_t stride_bytes = 8 * atom_row_bytes;  // from one 8-row group to the next
  const std::uint64_t leading_bytes = mn_major() ? strided_extent * atom_row_bytes : 16;  // one block to the next
  return (leading_bytes >> 4) << 16 | (stride_bytes >> 4) << 32 | swizzle_mode(swizzle_bytes) << 62;
}

WgmmaTile wgmma_tile(DotOperand operand, std::int64_t rows, std::int64_t columns, int preferred_dim,
                     int element_bytes) {
  if (preferred_dim != 0 && preferred_dim != 1)
    throw std::invalid_argument("wgmma tile: the contiguous dimension is " + std::to_string(preferred_dim) +
                                ", not 0 or 1");
  const std::int64_t extents[2] = {rows, columns};
  auto wide_enough = [&](int dim) { return extents[dim] * element_bytes >= 32; };
  int contiguous = preferred_dim;
  if (!wide_enough(contiguous)) contiguous = 1 - contiguous;
  if (!wide_enough(contiguous))
    throw std::invalid_argument("wgmma tile: neither dimension of a [" + std::to_string(rows) + ", " +
                                std::to_string(columns) + "] tile of " + std::to_string(element_bytes) +
                                "-byte elements has 32 bytes");
  WgmmaTile tile;
  tile.operand = operand;
  tile.rows = rows;
  tile.columns = columns;
  tile.element_bytes = element_bytes;
  tile.contiguous_dim = contiguous;
  tile.swizzle_bytes = static_cast<int>(std::min<std::int64_t>(128, extents[contiguous] * element_bytes));
  tile.layout = tile_layout(tile);
  return tile;
}

std::optional<WgmmaTile> wgmma_tile_with_layout(const ir::Operation& dot, DotOperand operand,
                                                const LinearLayout& shared) {
  const ir::Type& type = dot.operands.at(operand == DotOperand::a ? 0 : 1)->type;
  const int element_bytes = static_cast<int>(ir::dtype_bytes(type.dtype));
  for (int dim : {1, 0}) {
    WgmmaTile tile = wgmma_tile(operand, type.shape[0], type.shape[1], dim, element_bytes);
    if (tile.layout == shared) return tile;
  }
  return std::nullopt;
}

}  // namespace kiln::lowering
