// Shared pieces of running a sample kernel: random inputs, timing launches
// (with CUDA events and L2 flushed between them on a GPU), the device's
// parallelism.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/kernels/accuracy.hpp"
#include "kiln/kernels/registry.hpp"
#include "kiln/runtime/cache_flush.hpp"
#include "kiln/runtime/cuda/launch_timer.hpp"

namespace kiln::kernels {

/// n values uniform in [lo, hi), rounded to T, from `seed`.
template <class T>
std::vector<T> random_inputs(std::size_t n, std::uint64_t seed, double lo = -4.0, double hi = 4.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> out(n);
  for (T& v : out) v = static_cast<T>(dist(rng));
  return out;
}

/// Seconds one call of `launch` takes: the GPU time of its kernels, measured
/// with CUDA events, when it launches on `cuda` (the host clock would also
/// count launch calls and the waits after them); else the host clock's time.
template <class F>
double seconds_of(F& launch) {
  using clock = std::chrono::steady_clock;
  const cuda::LaunchTimer gpu;
  const auto start = clock::now();
  launch();
  const double host_seconds = std::chrono::duration<double>(clock::now() - start).count();
  return gpu.launches() > 0 ? gpu.seconds() : host_seconds;
}

/// Median seconds of one call of `launch` on `device` (seconds_of), over
/// enough calls to fill ~0.3 s of host time (at least 3, at most 100), after
/// one warm-up call that also compiles and loads the kernels. Before each
/// timed call the device's caches are flushed (runtime::flush_caches), so a
/// GPU's L2 holds nothing of the previous call, as in Triton's do_bench.
/// Timed calls never count footprints (runtime::FootprintCounting).
template <class F>
double median_seconds(const Device& device, F&& launch) {
  using clock = std::chrono::steady_clock;
  const runtime::FootprintCounting uncounted(false);
  launch();
  std::vector<double> times;
  auto start = clock::now();
  while (times.size() < 3 ||
         (times.size() < 100 && std::chrono::duration<double>(clock::now() - start).count() < 0.3)) {
    runtime::flush_caches(device);
    times.push_back(seconds_of(launch));
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

/// How many programs the device runs at once: its host threads for `cpu` and
/// `emu`, the SM count for `cuda`; the figure tile-size choices divide the
/// work by.
int compute_units(const Device& device);

}  // namespace kiln::kernels
