// `kiln dump --stage layout --svg`: one tile's register layout as a grid of
// its elements, each cell naming the warp, lane and register that hold it.
#pragma once

#include <string>

#include "kiln/lowering/linear_layout.hpp"

namespace kiln::tool {

/// At most this many rows and columns of cells are drawn; a larger tile is
/// shown from its first element, and the picture's title says which part.
inline constexpr int kLayoutPictureCells = 32;
/// A 1-D tile is drawn in rows of this many elements.
inline constexpr int kLayoutPictureRowLength = 32;

/// The SVG picture of `layout` (inputs register, lane and warp; outputs the
/// tile's dims): cells coloured by warp, odd lanes a shade darker, each
/// reading "w<warp> l<lane>" over "r<register>" for the first thread and
/// register holding the element (warp, then lane, then register, lowest
/// first) and "+N" when N more hold copies of it. Each cell's tooltip names
/// its coordinates and every holder. Rows are the tile's last dimension laid
/// out across, the other dimensions down. `title` heads the picture. Throws
/// std::invalid_argument for a layout with other inputs or no output.
std::string layout_svg(const lowering::LinearLayout& layout, const std::string& title);

}  // namespace kiln::tool
