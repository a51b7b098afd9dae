// The kiln tool's SVG writer (svg.hpp).
#include "svg.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace kiln::tool {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

Svg::Svg(double width, double height, std::string_view title) : width_(width), height_(height) {
  body_ += fmt::format("<title>{}</title>\n", xml_escape(title));
  rect(0, 0, width, height, "#ffffff");
}

void Svg::rect(double x, double y, double width, double height, std::string_view fill, std::string_view stroke) {
  body_ +=
      fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}")", x, y, width, height, fill);
  if (stroke != "none") body_ += fmt::format(R"( stroke="{}" stroke-width="0.6")", stroke);
  body_ += "/>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width) {
  body_ += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="{:.1f}"/>)",
                       x1, y1, x2, y2, stroke, stroke_width);
  body_ += "\n";
}

void Svg::text(double x, double y, std::string_view text, const TextStyle& style) {
  body_ += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="{:.1f}" text-anchor="{}" fill="{}")", x, y, style.size,
                       style.anchor, style.fill);
  if (style.bold) body_ += R"( font-weight="bold")";
  body_ += fmt::format(">{}</text>\n", xml_escape(text));
}

void Svg::begin_group(std::string_view tooltip) { body_ += fmt::format("<g><title>{}</title>\n", xml_escape(tooltip)); }

void Svg::end_group() { body_ += "</g>\n"; }

std::string Svg::str() const {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n{2}</svg>\n",
      width_, height_, body_);
}

void write_picture(const std::filesystem::path& path, const std::string& document) {
  std::ofstream out(path, std::ios::binary);
  if (out) out << document;
  if (!out || !out.flush())
    throw std::runtime_error("cannot write the picture to " + path.string() + ": " + std::strerror(errno));
}

}  // namespace kiln::tool
