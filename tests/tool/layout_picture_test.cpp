// The layout picture of `kiln dump --stage layout --svg` (examples/kiln/layout_picture.hpp)
// on layouts built by hand: a 3-D tile's rows and cells, copies, the cap and bad layouts.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "kiln/lowering/linear_layout.hpp"
#include "layout_picture.hpp"

namespace kiln::tool {
namespace {

using lowering::LinearLayout;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A 2 x 4 x 32 tile: registers take 4 neighbours along dim2, lanes the rest
// of dim2 and all of dim1, the warp bit dim0.
LinearLayout three_dimensional() {
  return LinearLayout({{"register", {{0, 0, 1}, {0, 0, 2}}},
                       {"lane", {{0, 0, 4}, {0, 0, 8}, {0, 0, 16}, {0, 1, 0}, {0, 2, 0}}},
                       {"warp", {{1, 0, 0}}}},
                      {{"dim0", 1}, {"dim1", 2}, {"dim2", 5}});
}

TEST(LayoutPicture, ThreeDimensionalTileHasACellPerElementAndRowsByLeadingCoordinates) {
  const std::string svg = layout_svg(three_dimensional(), "t");
  EXPECT_EQ(count(svg, "<g><title>element ("), 256u);
  // Element (1, 2, 13): warp 1; lane 2 * 8 + 13 / 4 = 19; register 13 % 4 = 1.
  EXPECT_NE(svg.find("<title>element (1,2,13): warp 1 lane 19 register 1;</title>"), std::string::npos);
  EXPECT_NE(svg.find(">w1 l19</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1,3</text>"), std::string::npos) << "the last row's label: its leading coordinates";
  EXPECT_NE(svg.find("all 256 elements of the 2 x 4 x 32 tile shown"), std::string::npos);
}

TEST(LayoutPicture, CopiesAreCountedAndAllHoldersNamed) {
  // 32 elements over 32 lanes and 2 warps: each element in lane l of both warps.
  const LinearLayout layout({{"register", {}}, {"lane", {{1}, {2}, {4}, {8}, {16}}}, {"warp", {{0}}}}, {{"dim0", 5}});
  const std::string svg = layout_svg(layout, "t");
  EXPECT_EQ(count(svg, "<g><title>element ("), 32u);
  EXPECT_NE(svg.find("<title>element (7): warp 0 lane 7 register 0; warp 1 lane 7 register 0;</title>"),
            std::string::npos);
  EXPECT_EQ(count(svg, " +1</text>"), 32u);
}

TEST(LayoutPicture, LargeTileIsCappedAndSaysSo) {
  const LinearLayout layout({{"register", {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {0, 32}, {1, 0}}},
                             {"lane", {{2, 0}, {4, 0}, {8, 0}, {16, 0}, {32, 0}}},
                             {"warp", {}}},
                            {{"dim0", 6}, {"dim1", 6}});
  const std::string svg = layout_svg(layout, "t");
  EXPECT_EQ(count(svg, "<g><title>element ("), std::size_t{kLayoutPictureCells} * kLayoutPictureCells);
  EXPECT_NE(svg.find("32 of 64 rows and 32 of 64 columns of the 64 x 64 tile shown"), std::string::npos);
}

TEST(LayoutPicture, RejectsLayoutsOtherThanRegisterLayouts) {
  EXPECT_THROW(layout_svg(LinearLayout::identity_1d(64, "offset", "dim0"), "t"), std::invalid_argument);
  EXPECT_THROW(layout_svg(LinearLayout(), "t"), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::tool
