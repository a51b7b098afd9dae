// `kiln bench --svg`: the suite's timings as a horizontal bar chart, one group
// of bars per kernel (the fused kernel, then what it is compared with), each
// bar labelled with its time and its ratio to the group's first bar.
#pragma once

#include <string>
#include <vector>

namespace kiln::tool {

struct BenchChart {
  struct Bar {
    int series = 0;    // index into `series`: the bar's colour and legend entry
    std::string name;  // the kernel or implementation the bar times
    double seconds = 0;
  };
  struct Group {
    std::string label;      // "matmul f32"
    std::vector<Bar> bars;  // the first is the one the others are compared with
  };
  std::string title;
  std::string subtitle;
  std::vector<std::string> series;  // legend names, in colour order
  std::vector<Group> groups;
};

/// The chart as an SVG document. The time axis is linear, or logarithmic
/// (and says so) when the longest bar is more than 30 times the shortest;
/// its unit (s, ms or us) follows the longest bar. Throws
/// std::invalid_argument when a time is not positive or a group has no bar.
std::string bench_chart_svg(const BenchChart& chart);
/// Several charts, one below the other, each with its own title, legend and
/// axis; the picture's title is the first one's.
std::string bench_chart_svg(const std::vector<BenchChart>& charts);

}  // namespace kiln::tool
