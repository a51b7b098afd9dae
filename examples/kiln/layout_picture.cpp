// The layout grid of `kiln dump --stage layout --svg` (layout_picture.hpp).
#include "layout_picture.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "svg.hpp"

namespace kiln::tool {

namespace {

constexpr double kCellWidth = 48, kCellHeight = 30, kTop = 118, kCharWidth = 7;

struct Holder {
  std::int32_t warp = 0, lane = 0, reg = 0;
};

/// "#rrggbb" of hue `h` (degrees), saturation `s` and lightness `l` (0 to 1).
std::string hsl_colour(double h, double s, double l) {
  const double c = (1 - std::abs(2 * l - 1)) * s;
  const double hp = std::fmod(h, 360.0) / 60;
  const double x = c * (1 - std::abs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) r = c, g = x;
  else if (hp < 2) r = x, g = c;
  else if (hp < 3) g = c, b = x;
  else if (hp < 4) g = x, b = c;
  else if (hp < 5) r = x, b = c;
  else r = c, b = x;
  const double m = l - c / 2;
  auto byte = [&](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b));
}

/// Warps' hues a golden angle apart, so that neighbouring warps differ most.
std::string warp_colour(std::int32_t warp, bool odd_lane) {
  return hsl_colour(137.5 * warp + 210, 0.55, odd_lane ? 0.74 : 0.86);
}

std::int32_t in_size(const lowering::LinearLayout& layout, const char* name) {
  return layout.has_in_dim(name) ? layout.in_dim_size(name) : 1;
}

}  // namespace

std::string layout_svg(const lowering::LinearLayout& layout, const std::string& title) {
  for (const lowering::LinearLayout::InDim& in : layout.in_dims())
    if (in.name != "register" && in.name != "lane" && in.name != "warp")
      throw std::invalid_argument("layout picture: the layout has input '" + in.name +
                                  "'; only register layouts (register, lane, warp) are drawn");
  const std::vector<lowering::LinearLayout::OutDim>& outs = layout.out_dims();
  if (outs.empty()) throw std::invalid_argument("layout picture: the layout has no output dimension");

  // Every holder of every element, in order warp, lane, register.
  const std::int64_t elements = std::int64_t{1} << layout.total_out_bits();
  std::vector<std::vector<Holder>> holders(static_cast<std::size_t>(elements));
  const std::int32_t warps = in_size(layout, "warp"), lanes = in_size(layout, "lane");
  const std::int32_t registers = in_size(layout, "register");
  for (std::int32_t w = 0; w < warps; ++w)
    for (std::int32_t l = 0; l < lanes; ++l)
      for (std::int32_t r = 0; r < registers; ++r) {
        lowering::LinearLayout::Coordinates in;
        for (const lowering::LinearLayout::InDim& dim : layout.in_dims())
          in.emplace_back(dim.name, dim.name == "warp" ? w : dim.name == "lane" ? l : r);
        std::int64_t index = 0;
        for (const auto& [name, value] : layout.apply(in)) index = (index << layout.out_dim_size_log2(name)) | value;
        holders[static_cast<std::size_t>(index)].push_back({w, l, r});
      }

  // Rows of the last dimension (a 1-D tile: of kLayoutPictureRowLength elements).
  const std::int64_t last = layout.out_dim_size(outs.back().name);
  const std::int64_t row_length = outs.size() == 1 ? std::min<std::int64_t>(last, kLayoutPictureRowLength) : last;
  const std::int64_t rows = elements / row_length;
  const std::int64_t shown_rows = std::min<std::int64_t>(rows, kLayoutPictureCells);
  const std::int64_t shown_columns = std::min<std::int64_t>(row_length, kLayoutPictureCells);

  std::string shape;
  for (const lowering::LinearLayout::OutDim& out : outs)
    shape += (shape.empty() ? "" : " x ") + std::to_string(std::int64_t{1} << out.log2_size);
  auto coordinates = [&](std::int64_t index, std::size_t dims) {
    std::string text;
    std::int64_t rest = index;
    std::vector<std::int64_t> coords(outs.size());
    for (std::size_t d = outs.size(); d-- > 0;) {
      coords[d] = rest & ((std::int64_t{1} << outs[d].log2_size) - 1);
      rest >>= outs[d].log2_size;
    }
    for (std::size_t d = 0; d < dims; ++d) text += (d ? "," : "") + std::to_string(coords[d]);
    return text;
  };
  auto row_label = [&](std::int64_t row) {
    if (outs.size() == 1) return std::to_string(row * row_length);
    return coordinates(row * row_length, outs.size() - 1);
  };
  std::string part = fmt::format("all {} elements of the {} tile shown", elements, shape);
  if (shown_rows < rows || shown_columns < row_length)
    part = fmt::format("{} of {} rows and {} of {} columns of the {} tile shown (the first ones)", shown_rows, rows,
                       shown_columns, row_length, shape);
  const std::string explained =
      outs.size() == 1   ? fmt::format("rows of {} consecutive elements, each labelled with its first", row_length)
      : outs.size() == 2 ? std::string("rows: dim0, columns: dim1")
                         : "rows: every dimension but the last, columns: the last";

  std::size_t label_chars = 0;
  for (std::int64_t row = 0; row < shown_rows; ++row) label_chars = std::max(label_chars, row_label(row).size());
  const double left = 20 + kCharWidth * static_cast<double>(label_chars);
  const double width = std::max(left + kCellWidth * static_cast<double>(shown_columns) + 20,
                                16 + 7.8 * static_cast<double>(title.size()));
  const double height = kTop + kCellHeight * static_cast<double>(shown_rows) + 20;
  Svg svg(width, height, title);
  svg.text(16, 24, title, {.size = 15, .bold = true});
  svg.text(16, 44, fmt::format("{}; {}", part, explained), {.size = 12, .fill = "#444444"});
  svg.text(16, 62,
           "Each cell: the warp (w), lane (l) and register (r) holding the element; colour: warp, darker: odd lane; "
           "+N: N more registers hold copies",
           {.size = 12, .fill = "#444444"});
  double legend_x = 16;
  for (std::int32_t w = 0; w < warps; ++w) {
    svg.rect(legend_x, 72, 14, 12, warp_colour(w, false), "#666666");
    svg.text(legend_x + 18, 83, fmt::format("warp {}", w), {.size = 11});
    legend_x += 72;
  }

  for (std::int64_t c = 0; c < shown_columns; ++c)
    svg.text(left + kCellWidth * (static_cast<double>(c) + 0.5), kTop - 8, std::to_string(c),
             {.size = 10, .anchor = "middle", .fill = "#555555"});
  for (std::int64_t row = 0; row < shown_rows; ++row) {
    const double y = kTop + kCellHeight * static_cast<double>(row);
    svg.text(left - 6, y + kCellHeight / 2 + 4, row_label(row), {.size = 10, .anchor = "end", .fill = "#555555"});
    for (std::int64_t c = 0; c < shown_columns; ++c) {
      const std::int64_t index = row * row_length + c;
      const std::vector<Holder>& held = holders[static_cast<std::size_t>(index)];
      const double x = left + kCellWidth * static_cast<double>(c);
      std::string tooltip = fmt::format("element ({}):", coordinates(index, outs.size()));
      for (const Holder& h : held) tooltip += fmt::format(" warp {} lane {} register {};", h.warp, h.lane, h.reg);
      if (held.empty()) tooltip += " held by no thread";
      svg.begin_group(tooltip);
      if (held.empty()) {
        svg.rect(x, y, kCellWidth, kCellHeight, "#ffffff", "#999999");
        svg.text(x + kCellWidth / 2, y + 19, "none", {.size = 10, .anchor = "middle"});
      } else {
        const Holder& first = held.front();
        svg.rect(x, y, kCellWidth, kCellHeight, warp_colour(first.warp, first.lane % 2 == 1), "#ffffff");
        svg.text(x + kCellWidth / 2, y + 13, fmt::format("w{} l{}", first.warp, first.lane),
                 {.size = 10, .anchor = "middle"});
        const std::string copies = held.size() > 1 ? fmt::format(" +{}", held.size() - 1) : "";
        svg.text(x + kCellWidth / 2, y + 25, fmt::format("r{}{}", first.reg, copies), {.size = 10, .anchor = "middle"});
      }
      svg.end_group();
    }
  }
  return svg.str();
}

}  // namespace kiln::tool
