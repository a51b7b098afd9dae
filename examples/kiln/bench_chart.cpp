// The bar chart of `kiln bench --svg` (bench_chart.hpp).
#include "bench_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "svg.hpp"

namespace kiln::tool {

namespace {

constexpr std::array<const char*, 6> kSeriesColours = {"#3b6fb6", "#e07b39", "#5aa05a",
                                                       "#9c5fb5", "#c44e52", "#8c8c8c"};
constexpr double kBarHeight = 18, kBarGap = 4, kGroupGap = 16, kPlotWidth = 520;
constexpr double kTop = 84, kAxisHeight = 52, kCharWidth = 7.2;

struct Unit {
  const char* name;
  double seconds;
};

Unit unit_for(double longest) {
  if (longest >= 1) return {"s", 1};
  if (longest >= 1e-3) return {"ms", 1e-3};
  return {"us", 1e-6};
}

/// Maps a time to a length along the axis, and lists the axis's ticks.
class Axis {
 public:
  Axis(double shortest, double longest, Unit unit) : unit_(unit), log_(longest > 30 * shortest) {
    if (log_) {
      low_ = std::pow(10.0, std::floor(std::log10(shortest / unit.seconds)));
      high_ = std::pow(10.0, std::ceil(std::log10(longest / unit.seconds)));
      for (double t = low_; t <= high_ * 1.0001; t *= 10) ticks_.push_back(t);
    } else {
      const double top = longest / unit.seconds;
      const double raw = top / 5;
      const double decade = std::pow(10.0, std::floor(std::log10(raw)));
      double step = decade;
      for (const double m : {1.0, 2.0, 5.0, 10.0})
        if (m * decade >= raw) {
          step = m * decade;
          break;
        }
      high_ = std::ceil(top / step) * step;
      for (double t = 0; t <= high_ * 1.0001; t += step) ticks_.push_back(t);
    }
  }
  bool logarithmic() const { return log_; }
  const std::vector<double>& ticks() const { return ticks_; }
  /// Length along the axis of `value` in the axis unit.
  double length(double value) const {
    if (log_) return kPlotWidth * std::log10(value / low_) / std::log10(high_ / low_);
    return kPlotWidth * value / high_;
  }
  double in_unit(double seconds) const { return seconds / unit_.seconds; }
  const char* unit() const { return unit_.name; }

 private:
  Unit unit_;
  bool log_;
  double low_ = 0, high_ = 1;
  std::vector<double> ticks_;
};

std::string number(double value) {
  if (value >= 100) return fmt::format("{:.0f}", value);
  if (value >= 10) return fmt::format("{:.1f}", value);
  if (value >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3g}", value);
}

/// The text after a bar: its name, time and ratio to the group's first bar.
std::string bar_note(const BenchChart::Bar& bar, const BenchChart::Bar& reference, const Axis& axis) {
  std::string note = fmt::format("{}  {} {}", bar.name, number(axis.in_unit(bar.seconds)), axis.unit());
  if (&bar != &reference)
    note += fmt::format("  ({:.2f}x the time of {})", bar.seconds / reference.seconds, reference.name);
  return note;
}

}  // namespace

std::string bench_chart_svg(const BenchChart& chart) {
  double shortest = INFINITY, longest = 0;
  std::size_t label_chars = 0, bars = 0;
  for (const BenchChart::Group& group : chart.groups) {
    if (group.bars.empty()) throw std::invalid_argument("bench chart: group '" + group.label + "' has no bar");
    label_chars = std::max(label_chars, group.label.size());
    for (const BenchChart::Bar& bar : group.bars) {
      if (!(bar.seconds > 0))
        throw std::invalid_argument(fmt::format("bench chart: {} in group '{}' has time {} s, not positive", bar.name,
                                                group.label, bar.seconds));
      shortest = std::min(shortest, bar.seconds);
      longest = std::max(longest, bar.seconds);
      ++bars;
    }
  }
  if (chart.groups.empty()) throw std::invalid_argument("bench chart: no kernel to draw");
  const Axis axis(shortest, longest, unit_for(longest));
  // How far right the notes after the bars reach (at about 6 pixels a character).
  double notes_end = kPlotWidth;
  for (const BenchChart::Group& group : chart.groups)
    for (const BenchChart::Bar& bar : group.bars)
      notes_end = std::max(notes_end, axis.length(axis.in_unit(bar.seconds)) + 6 +
                                          6.0 * static_cast<double>(bar_note(bar, group.bars.front(), axis).size()));

  const double left = 24 + kCharWidth * static_cast<double>(label_chars);
  const double plot_height = static_cast<double>(bars) * (kBarHeight + kBarGap) +
                             static_cast<double>(chart.groups.size() - 1) * kGroupGap + kBarGap;
  const double width = std::max(left + notes_end + 16, 16 + 9.0 * static_cast<double>(chart.title.size()));
  const double height = kTop + plot_height + kAxisHeight + 10;
  Svg svg(width, height, chart.title);
  svg.text(16, 26, chart.title, {.size = 16, .bold = true});
  svg.text(16, 46, chart.subtitle, {.size = 12, .fill = "#555555"});

  // Legend, one swatch per series.
  double legend_x = left;
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    svg.rect(legend_x, 58, 14, 12, kSeriesColours[s % kSeriesColours.size()]);
    svg.text(legend_x + 19, 69, chart.series[s]);
    legend_x += 34 + kCharWidth * static_cast<double>(chart.series[s].size());
  }

  // Grid lines and tick labels.
  const double axis_y = kTop + plot_height;
  for (const double tick : axis.ticks()) {
    const double x = left + axis.length(tick);
    svg.line(x, kTop, x, axis_y, "#e3e3e3");
    svg.line(x, axis_y, x, axis_y + 5, "#444444");
    svg.text(x, axis_y + 19, fmt::format("{:g}", tick), {.size = 11, .anchor = "middle"});
  }
  svg.line(left, kTop, left, axis_y, "#444444");
  svg.line(left, axis_y, left + kPlotWidth, axis_y, "#444444");
  svg.text(left + kPlotWidth / 2, axis_y + 40,
           fmt::format("time per launch ({}){}", axis.unit(), axis.logarithmic() ? ", logarithmic scale" : ""),
           {.size = 12, .anchor = "middle"});

  double y = kTop + kBarGap;
  for (const BenchChart::Group& group : chart.groups) {
    const double group_height = static_cast<double>(group.bars.size()) * (kBarHeight + kBarGap) - kBarGap;
    svg.text(left - 8, y + group_height / 2 + 4, group.label, {.size = 12, .anchor = "end", .bold = true});
    const BenchChart::Bar& reference = group.bars.front();
    for (const BenchChart::Bar& bar : group.bars) {
      const double value = axis.in_unit(bar.seconds);
      svg.begin_group(fmt::format("{}: {} {} per launch", bar.name, number(value), axis.unit()));
      const double length = std::max(1.0, axis.length(value));
      svg.rect(left, y, length, kBarHeight,
               kSeriesColours[static_cast<std::size_t>(bar.series) % kSeriesColours.size()]);
      svg.text(left + length + 6, y + kBarHeight - 5, bar_note(bar, reference, axis), {.size = 11});
      svg.end_group();
      y += kBarHeight + kBarGap;
    }
    y += kGroupGap;
  }
  return svg.str();
}

}  // namespace kiln::tool
