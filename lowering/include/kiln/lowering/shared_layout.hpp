// Shared-memory layouts of 2-D tiles as linear layouts from "offset" (in
// elements) to the tile's coordinates (dim0, dim1): row-major along a chosen
// contiguous dimension, with the 16-byte chunks of each 128-byte line
// permuted by an XOR of row bits (a swizzle) so that the warps storing a
// tile and the warps reading it back hit distinct banks. The swizzle is
// chosen by counting the accesses' bank conflicts (shared_access.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// The row-major layout from "offset" (elements) onto a tile of dimensions
/// `dims` (any rank), the last one fastest: what a layout conversion stores
/// and reads back.
LinearLayout row_major_shared_layout(const std::vector<LinearLayout::OutDim>& dims);

/// The XOR swizzle of a shared tile stored along its contiguous dimension
/// (columns) in rows: the 16-byte chunk index of an element within its row
/// is XORed with `bits` bits of its row index, starting at row bit `shift`
/// (Triton's per_phase = 2^shift, max_phase = 2^bits). No swizzle: bits = 0.
struct SharedSwizzle {
  int shift = 0;
  int bits = 0;
  friend bool operator==(const SharedSwizzle&, const SharedSwizzle&) = default;
};

/// The layout from "offset" (elements) to (dim0, dim1) of a [dim0_size,
/// dim1_size] tile of `element_bytes`-byte elements stored with dimension
/// `contiguous_dim` (0 or 1) fastest, swizzled by `swizzle`. Sizes are powers
/// of two; the swizzle's bits must fit in the row's chunks (a chunk is 16
/// bytes, or the whole row when it is shorter) and in the row count;
/// otherwise std::invalid_argument names the values.
LinearLayout swizzled_shared_layout(std::int64_t dim0_size, std::int64_t dim1_size, int contiguous_dim,
                                    int element_bytes, SharedSwizzle swizzle);

/// How many row bits a swizzle of a row of `row_elements` elements of
/// `element_bytes` bytes can XOR into its chunk index: the row's chunk bits.
int swizzle_bits_available(std::int64_t row_elements, int element_bytes);

/// The dimension (0 or 1) along which `registers` (a layout over register,
/// lane and warp onto dim0, dim1) puts a thread's first registers: the one
/// its register bit 0 steps along, so that a row-major copy along it is
/// stored with vector accesses. 1 when the layout has a single register or
/// its first register basis is 0.
int contiguous_dim_of(const LinearLayout& registers);

}  // namespace kiln::lowering
