// The bar chart of `kiln bench --svg` (examples/kiln/bench_chart.hpp): its
// axis, bars, notes and bad input.
#include <gtest/gtest.h>

#include <stdexcept>

#include "bench_chart.hpp"

namespace kiln::tool {
namespace {

BenchChart chart_of(double fused_seconds, double unfused_seconds) {
  return {.title = "t",
          .subtitle = "s",
          .series = {"fused", "unfused"},
          .groups = {{"k f32", {{0, "k", fused_seconds}, {1, "k_unfused", unfused_seconds}}}}};
}

TEST(BenchChart, LinearAxisInTheLongestBarsUnit) {
  const std::string svg = bench_chart_svg(chart_of(0.0123, 0.0246));
  EXPECT_NE(svg.find(">time per launch (ms)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">k  12.3 ms</text>"), std::string::npos);
  EXPECT_NE(svg.find(">k_unfused  24.6 ms  (2.00x the time of k)</text>"), std::string::npos);
  for (const char* tick : {">0</text>", ">5</text>", ">10</text>", ">25</text>"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
}

TEST(BenchChart, LogarithmicAxisAboveAThirtyfoldRange) {
  const std::string svg = bench_chart_svg(chart_of(0.00002, 0.02));
  EXPECT_NE(svg.find(">time per launch (ms), logarithmic scale</text>"), std::string::npos);
  for (const char* tick : {">0.01</text>", ">0.1</text>", ">1</text>", ">10</text>", ">100</text>"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_NE(svg.find("(1000.00x the time of k)"), std::string::npos);
}

TEST(BenchChart, EscapesNamesAndRejectsBadTimes) {
  BenchChart chart = chart_of(1e-3, 2e-3);
  chart.groups[0].label = "a<b & c";
  EXPECT_NE(bench_chart_svg(chart).find(">a&lt;b &amp; c</text>"), std::string::npos);
  EXPECT_THROW(bench_chart_svg(chart_of(0, 1e-3)), std::invalid_argument);
  EXPECT_THROW(bench_chart_svg(chart_of(1e-3, -1)), std::invalid_argument);
  EXPECT_THROW(bench_chart_svg(BenchChart{}), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::tool
