// The bar chart of `kiln bench --svg` (bench_chart.hpp).
#include "bench_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

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

/// The shortest and longest bar of a chart, after checking every group has
/// bars and every time is positive.
std::pair<double, double> time_range(const BenchChart& chart) {
  if (chart.groups.empty()) throw std::invalid_argument("bench chart: no kernel to draw");
  double shortest = INFINITY, longest = 0;
  for (const BenchChart::Group& group : chart.groups) {
    if (group.bars.empty()) throw std::invalid_argument("bench chart: group '" + group.label + "' has no bar");
    for (const BenchChart::Bar& bar : group.bars) {
      if (!(bar.seconds > 0))
        throw std::invalid_argument(fmt::format("bench chart: {} in group '{}' has time {} s, not positive", bar.name,
                                                group.label, bar.seconds));
      shortest = std::min(shortest, bar.seconds);
      longest = std::max(longest, bar.seconds);
    }
  }
  return {shortest, longest};
}

Axis axis_of(const BenchChart& chart) {
  const auto [shortest, longest] = time_range(chart);
  return Axis(shortest, longest, unit_for(longest));
}

/// One chart with its own title, legend and axis, drawn at some height of the picture.
class Panel {
 public:
  explicit Panel(const BenchChart& chart) : chart_(chart), axis_(axis_of(chart)) {
    std::size_t label_chars = 0, bars = 0;
    // How far right the notes after the bars reach (at about 6 pixels a character).
    double notes_end = kPlotWidth;
    for (const BenchChart::Group& group : chart.groups) {
      label_chars = std::max(label_chars, group.label.size());
      bars += group.bars.size();
      for (const BenchChart::Bar& bar : group.bars)
        notes_end = std::max(notes_end, axis_.length(axis_.in_unit(bar.seconds)) + 6 +
                                            6.0 * static_cast<double>(bar_note(bar, group.bars.front(), axis_).size()));
    }
    left_ = 24 + 7.8 * static_cast<double>(label_chars);  // bold labels are wider than kCharWidth
    plot_height_ = static_cast<double>(bars) * (kBarHeight + kBarGap) +
                   static_cast<double>(chart.groups.size() - 1) * kGroupGap + kBarGap;
    width_ = std::max({left_ + notes_end + 16, 16 + 9.0 * static_cast<double>(chart.title.size()),
                       16 + 6.5 * static_cast<double>(chart.subtitle.size())});
  }
  double width() const { return width_; }
  double height() const { return kTop + plot_height_ + kAxisHeight + 10; }

  void draw(Svg& svg, double top) const {
    svg.text(16, top + 26, chart_.title, {.size = 16, .bold = true});
    svg.text(16, top + 46, chart_.subtitle, {.size = 12, .fill = "#555555"});
    double legend_x = left_;  // one swatch per series
    for (std::size_t s = 0; s < chart_.series.size(); ++s) {
      svg.rect(legend_x, top + 58, 14, 12, kSeriesColours[s % kSeriesColours.size()]);
      svg.text(legend_x + 19, top + 69, chart_.series[s]);
      legend_x += 34 + kCharWidth * static_cast<double>(chart_.series[s].size());
    }
    // Grid lines and tick labels.
    const double plot_top = top + kTop, axis_y = plot_top + plot_height_;
    for (const double tick : axis_.ticks()) {
      const double x = left_ + axis_.length(tick);
      svg.line(x, plot_top, x, axis_y, "#e3e3e3");
      svg.line(x, axis_y, x, axis_y + 5, "#444444");
      svg.text(x, axis_y + 19, fmt::format("{:g}", tick), {.size = 11, .anchor = "middle"});
    }
    svg.line(left_, plot_top, left_, axis_y, "#444444");
    svg.line(left_, axis_y, left_ + kPlotWidth, axis_y, "#444444");
    svg.text(left_ + kPlotWidth / 2, axis_y + 40,
             fmt::format("time per launch ({}){}", axis_.unit(), axis_.logarithmic() ? ", logarithmic scale" : ""),
             {.size = 12, .anchor = "middle"});

    double y = plot_top + kBarGap;
    for (const BenchChart::Group& group : chart_.groups) {
      const double group_height = static_cast<double>(group.bars.size()) * (kBarHeight + kBarGap) - kBarGap;
      svg.text(left_ - 8, y + group_height / 2 + 4, group.label, {.size = 12, .anchor = "end", .bold = true});
      const BenchChart::Bar& reference = group.bars.front();
      for (const BenchChart::Bar& bar : group.bars) {
        const double value = axis_.in_unit(bar.seconds);
        svg.begin_group(fmt::format("{}: {} {} per launch", bar.name, number(value), axis_.unit()));
        const double length = std::max(1.0, axis_.length(value));
        svg.rect(left_, y, length, kBarHeight,
                 kSeriesColours[static_cast<std::size_t>(bar.series) % kSeriesColours.size()]);
        svg.text(left_ + length + 6, y + kBarHeight - 5, bar_note(bar, reference, axis_), {.size = 11});
        svg.end_group();
        y += kBarHeight + kBarGap;
      }
      y += kGroupGap;
    }
  }

 private:
  const BenchChart& chart_;
  Axis axis_;
  double left_ = 0, plot_height_ = 0, width_ = 0;
};

}  // namespace

std::string bench_chart_svg(const std::vector<BenchChart>& charts) {
  if (charts.empty()) throw std::invalid_argument("bench chart: no chart to draw");
  std::vector<Panel> panels(charts.begin(), charts.end());
  double width = 0, height = 0;
  for (const Panel& panel : panels) {
    width = std::max(width, panel.width());
    height += panel.height();
  }
  Svg svg(width, height, charts.front().title);
  double top = 0;
  for (const Panel& panel : panels) {
    panel.draw(svg, top);
    top += panel.height();
  }
  return svg.str();
}

std::string bench_chart_svg(const BenchChart& chart) { return bench_chart_svg(std::vector<BenchChart>{chart}); }

}  // namespace kiln::tool
