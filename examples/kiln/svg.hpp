// A small SVG writer for the kiln tool's pictures: rectangles, lines and
// text in user units (pixels at 100 %), written as one standalone file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kiln::tool {

struct TextStyle {
  double size = 12;
  /// start, middle or end: where `x` is along the text.
  std::string_view anchor = "start";
  bool bold = false;
  std::string_view fill = "#222222";
};

class Svg {
 public:
  /// A picture of `width` x `height` on a white background; `title` is its
  /// <title> (shown by viewers as the picture's name).
  Svg(double width, double height, std::string_view title);

  void rect(double x, double y, double width, double height, std::string_view fill, std::string_view stroke = "none");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width = 1);
  /// `text` at baseline `y`; XML's special characters are escaped.
  void text(double x, double y, std::string_view text, const TextStyle& style = {});
  /// Opens a <g> whose <title> is `tooltip` (viewers show it on hover);
  /// every element until end_group() belongs to it.
  void begin_group(std::string_view tooltip);
  void end_group();

  /// The document, closed.
  std::string str() const;

 private:
  std::string body_;
  double width_, height_;
};

/// Writes an SVG document to `path`; throws std::runtime_error naming the
/// path and the reason when it cannot.
void write_picture(const std::filesystem::path& path, const std::string& document);

/// `text` with &, <, >, " and ' replaced by their XML entities.
std::string xml_escape(std::string_view text);

}  // namespace kiln::tool
