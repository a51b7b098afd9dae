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
#include "kiln/runtime/bench.hpp"
#include "kiln/runtime/cache_flush.hpp"

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

/// Median seconds of one call of `launch` on `device` (runtime::timed_call), over
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
    times.push_back(runtime::timed_call([&] { launch(); }).seconds);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

/// How many programs the device runs at once: its host threads for `cpu` and
/// `emu`, the SM count for `cuda`; the figure tile-size choices divide the
/// work by.
int compute_units(const Device& device);

/// The GPU architecture whose configuration the run launches in: the
/// options' `arch` when set, else the device's (target_arch.hpp).
std::string target_arch(const RunOptions& options);

}  // namespace kiln::kernels
