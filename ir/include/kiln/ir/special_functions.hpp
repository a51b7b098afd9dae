// The host's erfinv and lgamma, which C++ lacks or gives with a global side
// effect: shared by the cpu interpreter and the emu's libdevice, so that the
// two devices compute these ops alike (the GPU runs libdevice's, within its
// documented error).
#pragma once

#include <cmath>
#include <limits>

namespace kiln::ir {

/// The inverse error function: the x with erf(x) = y, for y in [-1, 1];
/// ±infinity at ±1, NaN outside, and y itself for a zero (keeping its sign).
/// Winitzki's closed form (relative error below 2e-3) refined by Halley's
/// iteration, which at least triples the correct digits per step, on the
/// equation that keeps its digits: erf(x) = |y| below 1/2, erfc(x) = 1 - |y|
/// (exact there) above, where erf(x) rounds to 1 first. Within a few ulps of
/// the exact result in double precision.
inline double erfinv(double y) {
  const double a = std::fabs(y);
  if (!(a <= 1)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 1) return std::copysign(std::numeric_limits<double>::infinity(), y);
  if (a == 0) return y;
  constexpr double pi = 3.141592653589793238;
  constexpr double winitzki = 0.147;
  const double log_term = std::log1p(-a * a);
  const double shift = 2 / (pi * winitzki) + log_term / 2;
  double x = std::sqrt(std::sqrt(shift * shift - log_term / winitzki) - shift);
  const double complement = 1 - a;
  for (int step = 0; step < 3; ++step) {
    // residual: erf(x) - a; slope: its derivative, 2/sqrt(pi) e^(-x^2).
    const double residual = a < 0.5 ? std::erf(x) - a : complement - std::erfc(x);
    const double slope = 2 / std::sqrt(pi) * std::exp(-x * x);
    const double newton = residual / slope;
    x -= newton / (1 + x * newton);
  }
  return std::copysign(x, y);
}

/// log |Gamma(x)|, as C's lgamma, without writing the global signgam (glibc's
/// lgamma does, a data race between threads).
inline float log_gamma(float x) {
  int sign = 0;
  return ::lgammaf_r(x, &sign);
}
inline double log_gamma(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

}  // namespace kiln::ir
