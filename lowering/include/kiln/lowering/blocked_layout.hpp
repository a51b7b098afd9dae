// Register layouts of distributed tiles as linear layouts: Triton's blocked
// encoding and the slice of a layout along one dimension.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// Triton's BlockedEncoding for a tile of `shape`, as a linear layout from
/// (register, lane, warp) to (dim0, dim1, …). Each thread holds a
/// `size_per_thread` block, the lanes of a warp tile `threads_per_warp` such
/// blocks and the warps tile `warps_per_cta` warp tiles; `order` lists the
/// dimensions fastest first and orders registers, lanes and warps alike.
/// Along dimension d, register r of lane l in warp w holds coordinate
///   (s + spt·(t + tpw·(v + wpc·k))) mod shape[d]
/// where s, t, v are the digits of r mod ∏spt, l and w along d (in `order`)
/// and k is the repetition digit of r / ∏spt. A shape larger than one layout
/// tile repeats the tile in more registers (repetitions numbered in `order`);
/// a smaller one wraps, so several registers, lanes or warps hold the same
/// element (Triton's replication). All sizes are powers of two and all lists
/// have the shape's rank; otherwise std::invalid_argument names the list.
LinearLayout blocked_layout(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& size_per_thread,
                            const std::vector<std::int64_t>& threads_per_warp,
                            const std::vector<std::int64_t>& warps_per_cta, const std::vector<std::int64_t>& order);

/// The parameters of a blocked layout (blocked_layout's lists), each with
/// one entry per dimension of the tile.
struct BlockedParameters {
  std::vector<std::int64_t> size_per_thread;
  std::vector<std::int64_t> threads_per_warp;
  std::vector<std::int64_t> warps_per_cta;
  std::vector<std::int64_t> order;  ///< fastest dimension first
  friend bool operator==(const BlockedParameters&, const BlockedParameters&) = default;
};

/// Triton's SliceEncoding: the layout of the tile obtained by removing
/// dimension `dim` from a tile in `parent` (a reduction along `dim`, or the
/// operand of an `expand_dims` at `dim`). The output dimension is dropped, the
/// later ones are renamed down (dim{d+1} becomes dim{d}) and registers that
/// no longer hold a distinct element (zero register bases) are removed; lanes
/// and warps that differed only along `dim` now hold the same element.
/// `parent`'s outputs must be dim0 … dim{rank-1}.
LinearLayout slice_layout(const LinearLayout& parent, int dim);

}  // namespace kiln::lowering
