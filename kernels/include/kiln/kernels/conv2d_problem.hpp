// Seeded random inputs of a conv2d + batchnorm + SiLU layer: input, weights
// and batchnorm statistics folded into scale/shift, scaled so that the
// pre-activation stays of order one (SiLU neither saturated nor flat) for any
// reduction length. Shared by the registry entries and the kernel tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kiln/kernels/conv2d_shape.hpp"

namespace kiln::kernels {

template <class T>
struct Conv2dProblem {
  Conv2dShape shape;
  std::vector<T> x;  // [n, c, h, w], uniform in [-1, 1]
  std::vector<T> w;  // [k, c / groups, r, s], uniform in [-a, a], a = sqrt(3 / reduction): unit variance sums
  FoldedBatchnorm bn;
};

/// A random layer of `shape` from `seed` (never all zeros); batchnorm with
/// gamma in [0.5, 1.5], beta in [-0.5, 0.5], mean in [-0.2, 0.2], var in
/// [0.5, 2], eps 1e-5 and a conv bias in [-0.1, 0.1].
template <class T>
Conv2dProblem<T> conv2d_random_problem(const Conv2dShape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto draw = [&](std::size_t n, double lo, double hi) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> out(n);
    for (double& v : out) v = dist(rng);
    return out;
  };
  auto as = [](const std::vector<double>& v, auto zero) {
    std::vector<decltype(zero)> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<decltype(zero)>(static_cast<float>(v[i]));
    return out;
  };
  const auto k = static_cast<std::size_t>(shape.k);
  const double a = std::sqrt(3.0 / static_cast<double>(shape.reduction()));
  Conv2dProblem<T> p{shape,
                     as(draw(static_cast<std::size_t>(shape.input_size()), -1, 1), T{}),
                     as(draw(static_cast<std::size_t>(shape.weight_size()), -a, a), T{}),
                     {}};
  const auto gamma = as(draw(k, 0.5, 1.5), 0.f), beta = as(draw(k, -0.5, 0.5), 0.f);
  const auto mean = as(draw(k, -0.2, 0.2), 0.f), var = as(draw(k, 0.5, 2.0), 0.f), bias = as(draw(k, -0.1, 0.1), 0.f);
  p.bn = fold_batchnorm(gamma, beta, mean, var, 1e-5, bias);
  return p;
}

}  // namespace kiln::kernels
