// Shared pieces of running a sample kernel: random inputs, the relative error
// against a reference, the tolerance of a dtype, timing launches.
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

/// ||got - want|| / ||want|| in double (the normwise relative error).
template <class T, class U>
double relative_error(const std::vector<T>& got, const std::vector<U>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    diff += (g - w) * (g - w);
    norm += w * w;
  }
  return norm == 0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

/// Unit roundoff of a float dtype: 2^-(mantissa bits + 1).
double unit_roundoff(ir::DType t);

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

std::string shape_string(const RunOptions& options, const std::vector<Dim>& dims);

}  // namespace kiln::kernels
