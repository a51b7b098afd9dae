// GPU time of kernel launches measured with CUDA events, which benchmarks read
// instead of a host clock on the `cuda` device: a host clock around a launch
// also counts the driver's launch call and the wait that follows it.
#pragma once

namespace kiln::cuda {

/// While alive, each kernel the calling thread launches on a `cuda` device
/// is bracketed by two CUDA events on the GPU's stream, and the time between
/// them is added here. Timers nest: only the innermost one on a thread counts.
/// Not copyable or movable.
class LaunchTimer {
 public:
  LaunchTimer();
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

  /// How many cuda launches were timed.
  int launches() const { return launches_; }
  /// Their summed GPU time.
  double seconds() const { return seconds_; }

  /// The innermost timer alive on the calling thread, or null.
  static LaunchTimer* active();
  /// Adds one launch that took `seconds` on the GPU (the cuda device calls this).
  void add_launch(double seconds);

 private:
  LaunchTimer* enclosing_;
  int launches_ = 0;
  double seconds_ = 0;
};

}  // namespace kiln::cuda
