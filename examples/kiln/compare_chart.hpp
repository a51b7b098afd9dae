// `kiln bench --compare FILE`: the results file of bench/compare's GPU half
// (compare.py gpu --json FILE) as a chart of kiln, Triton and torch times.
#pragma once

#include <filesystem>

#include "bench_chart.hpp"

namespace kiln::tool {

/// One group per case of the file with a kiln time: kiln's bar, then
/// Triton's and torch's (times with L2 flushed, as compare.py timed them),
/// each compared with kiln's. The subtitle names the file and the cases left
/// out for want of a kiln time. Throws std::runtime_error naming the file and
/// the field when it cannot be read or lacks what the chart needs.
BenchChart compare_chart(const std::filesystem::path& file);

}  // namespace kiln::tool
