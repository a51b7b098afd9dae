// Registry entry for rms_norm (the forward).
#include "kiln/kernels/rms_norm.hpp"

#include "dtype_dispatch.hpp"
#include "entries.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {
constexpr float kEps = 1e-5f;

template <class C>
RunReport run(const RunOptions& options) {
  const auto m = options.dims.at("m");
  const auto n = options.dims.at("n");
  // x uniform in [-1, 7] (mean(x^2) is not the variance), weight in [0.5, 1.5].
  auto x_host = random_inputs<C>(m * n, options.seed, -1.0, 7.0);
  auto weight_host = random_inputs<C>(n, options.seed + 1, 0.5, 1.5);
  auto x = Buffer<C>::from(x_host, options.device);
  auto weight = Buffer<C>::from(weight_host, options.device);
  Buffer<C> y(m * n, options.device);
  Buffer<float> rstd(m, options.device);
  RunReport report;
  auto launch = [&] { return rms_norm_forward_launch<C>(x, weight, y, rstd, m, n, kEps); };
  report.stats = launch();
  if (options.bench) report.seconds = median_seconds(options.device, launch);
  // x read, y written, w read, rstd written.
  report.bytes = static_cast<double>(2 * m * n + n) * sizeof(C) + static_cast<double>(m) * sizeof(float);
  // Per element: a square and an add for the statistic, two multiplies for y.
  report.flops = 4.0 * static_cast<double>(m * n);
  if (options.check) {
    // The tolerance of each output is the norm of its elementwise error
    // bounds (rms_norm_error_bounds: the dtype's rounding of y plus the f32
    // sum of n squares) over the norm of the reference.
    const auto ref = rms_norm_reference(x_host, weight_host, m, n, kEps);
    const auto bounds = rms_norm_error_bounds(ref, n, dtype_v<C>);
    const NormCheck check =
        worst_check({norm_check(y.to_host(), ref.y, bounds.y), norm_check(rstd.to_host(), ref.rstd, bounds.rstd)});
    report.error = check.error;
    report.tolerance = check.tolerance;
  }
  return report;
}
}  // namespace

RunReport run_rms_norm(const RunOptions& options) {
  return with_dot_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options); });
}

}  // namespace kiln::kernels
