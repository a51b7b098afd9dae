// Shared pieces of running a sample kernel: random inputs, timing launches,
// the device's parallelism, traffic sums.
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

/// Median seconds of one call of `launch`, over enough calls to fill ~0.3 s
/// (at least 3, at most 100), after one warm-up call.
template <class F>
double median_seconds(F&& launch) {
  using clock = std::chrono::steady_clock;
  launch();
  std::vector<double> times;
  auto start = clock::now();
  while (times.size() < 3 || (times.size() < 100 && std::chrono::duration<double>(clock::now() - start).count() < 0.3)) {
    auto t0 = clock::now();
    launch();
    times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

/// How many programs the device runs at once: its threads for the cpu (the
/// SM count for a GPU), the figure tile-size choices divide the work by.
int compute_units(const Device& device);

/// The sum of the traffic of several launches (an unfused sequence).
runtime::LaunchStats& operator+=(runtime::LaunchStats& total, const runtime::LaunchStats& launch);

}  // namespace kiln::kernels
