// The chart of bench/compare's GPU-half results (compare_chart.hpp).
#include "compare_chart.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kiln::tool {

BenchChart compare_chart(const std::filesystem::path& file) {
  const std::string where = "--compare " + file.string();
  std::ifstream in(file);
  if (!in) throw std::runtime_error(where + ": cannot open the file");
  nlohmann::json results;
  try {
    results = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(where + ": not JSON (" + e.what() + ")");
  }
  if (!results.is_object() || !results.contains("results") || !results["results"].is_array())
    throw std::runtime_error(where + ": no \"results\" list; the file compare.py gpu --json writes has one");
  // A side's time in milliseconds, when the result has a positive one.
  auto milliseconds = [](const nlohmann::json& result, const char* side) -> std::optional<double> {
    if (!result.contains(side) || !result[side].is_object() || !result[side].contains("ms")) return std::nullopt;
    const nlohmann::json& ms = result[side]["ms"];
    if (!ms.is_number() || !(ms.get<double>() > 0)) return std::nullopt;
    return ms.get<double>();
  };
  BenchChart chart;
  chart.series = {"kiln", "Triton", "torch"};
  std::vector<std::string> left_out;
  for (const nlohmann::json& result : results["results"]) {
    if (!result.is_object() || !result.contains("case") || !result["case"].is_string())
      throw std::runtime_error(where + ": a result without a \"case\" name");
    const std::string name = result["case"].get<std::string>();
    const std::optional<double> kiln = milliseconds(result, "kiln");
    if (!kiln) {
      left_out.push_back(name);
      continue;
    }
    BenchChart::Group group{.label = name, .bars = {{0, "kiln", *kiln * 1e-3}}};
    for (const auto& [series, side] : {std::pair{1, "triton"}, std::pair{2, "torch"}}) {
      const std::optional<double> ms = milliseconds(result, side);
      if (!ms) throw std::runtime_error(where + ": case " + name + " has no \"" + side + "\" time in ms");
      group.bars.push_back({series, chart.series[static_cast<std::size_t>(series)], *ms * 1e-3});
    }
    chart.groups.push_back(std::move(group));
  }
  if (chart.groups.empty()) throw std::runtime_error(where + ": no case with a kiln time");
  const std::string device = results.value("device", std::string("an unnamed GPU"));
  chart.title = "bench/compare on " + device + ": kiln, Triton and torch";
  chart.subtitle = fmt::format("from {}: one run of compare.py gpu, L2 flushed before each launch; ratios are to kiln",
                               file.filename().string());
  if (!left_out.empty())
    chart.subtitle +=
        fmt::format("; {} case{} without a kiln time left out", left_out.size(), left_out.size() == 1 ? "" : "s");
  return chart;
}

}  // namespace kiln::tool
