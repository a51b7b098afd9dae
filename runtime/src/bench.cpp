// do_bench and timed_call (bench.hpp).
#include "kiln/runtime/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "kiln/runtime/cache_flush.hpp"
#include "kiln/runtime/cuda/launch_timer.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln {

namespace runtime {

TimedCall timed_call(const std::function<void()>& fn) {
  using clock = std::chrono::steady_clock;
  const cuda::LaunchTimer gpu;
  const auto start = clock::now();
  fn();
  const double host_seconds = std::chrono::duration<double>(clock::now() - start).count();
  if (gpu.launches() > 0) return {gpu.seconds(), true};
  return {host_seconds, false};
}

}  // namespace runtime

namespace {

void check_positive(double value, const char* option) {
  if (!(value > 0) || !std::isfinite(value))
    throw std::invalid_argument(std::string("do_bench: BenchOptions::") + option +
                                " must be a positive, finite number of milliseconds, not " + std::to_string(value));
}

/// How many calls of `call_ms` each fill `budget_ms`, within [1, most].
int calls_for(double budget_ms, double call_ms, int most) {
  const double calls = call_ms > 0 ? std::ceil(budget_ms / call_ms) : most;
  return static_cast<int>(std::clamp(calls, 1.0, static_cast<double>(most)));
}

}  // namespace

double BenchResult::mean_ms() const {
  if (ms.empty()) throw std::invalid_argument("BenchResult: no timed calls");
  return std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
}

double BenchResult::quantile_ms(double q) const {
  if (!(q >= 0 && q <= 1))
    throw std::invalid_argument("BenchResult::quantile_ms: q is " + std::to_string(q) + ", outside [0, 1]");
  if (ms.empty()) throw std::invalid_argument("BenchResult: no timed calls");
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double position = q * static_cast<double>(sorted.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

BenchResult do_bench(const Device& device, const std::function<void()>& fn, const BenchOptions& options) {
  check_positive(options.warmup_ms, "warmup_ms");
  check_positive(options.rep_ms, "rep_ms");
  const runtime::FootprintCounting uncounted(false);
  const auto call = [&] {
    if (options.prepare) options.prepare();
    runtime::flush_caches(device);
    return runtime::timed_call(fn);
  };
  // The first call also compiles and loads; the next five estimate one call.
  call();
  double estimate_seconds = 0;
  constexpr int kEstimateCalls = 5;
  for (int i = 0; i < kEstimateCalls; ++i) estimate_seconds += call().seconds;
  const double estimate_ms = 1e3 * estimate_seconds / kEstimateCalls;
  for (int i = calls_for(options.warmup_ms, estimate_ms, kMaxBenchRepeats); i > 0; --i) call();
  BenchResult result;
  const int repeats = calls_for(options.rep_ms, estimate_ms, kMaxBenchRepeats);
  result.ms.reserve(repeats);
  for (int i = 0; i < repeats; ++i) {
    const runtime::TimedCall timed = call();
    result.ms.push_back(1e3 * timed.seconds);
    result.gpu_time = timed.gpu;
  }
  return result;
}

}  // namespace kiln
