// Timing a piece of host code that launches kernels, as Triton's
// triton.testing.do_bench does: warm-up calls first, then timed calls for a
// time budget, each after the device's caches are flushed; on `cuda` each
// call is timed by CUDA events around its launches, elsewhere by the host
// clock. kl::autotune and the kernels' benchmarks time the same way
// (timed_call).
#pragma once

#include <functional>
#include <vector>

#include "kiln/runtime/device.hpp"

namespace kiln {

namespace runtime {

/// One call's time: the GPU time of its launches (CUDA events) when it
/// launched on `cuda`, else the host time around it.
struct TimedCall {
  double seconds = 0;
  bool gpu = false;
};

/// Calls `fn` once and times it (TimedCall).
TimedCall timed_call(const std::function<void()>& fn);

}  // namespace runtime

struct BenchOptions {
  /// Milliseconds of untimed calls before timing (at least one call).
  double warmup_ms = 25;
  /// Milliseconds of timed calls (at least one, at most kMaxBenchRepeats).
  double rep_ms = 100;
  /// Runs before every call, never timed: resets what `fn` accumulates into
  /// (Triton's grad_to_none).
  std::function<void()> prepare;
};

/// The most timed calls do_bench makes, whatever rep_ms asks.
inline constexpr int kMaxBenchRepeats = 1000;

struct BenchResult {
  /// Each timed call's milliseconds, in call order.
  std::vector<double> ms;
  /// Whether they are GPU times (CUDA events) rather than host times.
  bool gpu_time = false;

  double median_ms() const { return quantile_ms(0.5); }
  double mean_ms() const;
  double min_ms() const { return quantile_ms(0); }
  double max_ms() const { return quantile_ms(1); }
  /// The q-quantile (0 ≤ q ≤ 1) of the times, interpolated linearly between
  /// neighbours as numpy's and torch's quantile do.
  double quantile_ms(double q) const;
};

/// Times `fn` on `device`: five calls estimate one call's time, then
/// warmup_ms / estimate untimed calls and rep_ms / estimate timed ones
/// (1 to kMaxBenchRepeats), each timed one after flush_caches(device) and
/// `options.prepare`. Throws std::invalid_argument naming the option when a
/// time is not positive and finite, or a quantile is outside [0, 1].
BenchResult do_bench(const Device& device, const std::function<void()>& fn, const BenchOptions& options = {});

}  // namespace kiln
