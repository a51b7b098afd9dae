// Registry entry for layer_norm (the forward).
#include "kiln/kernels/layer_norm.hpp"

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
  // x uniform in [-1, 7]: a mean of 3 next to a spread of 2.3, so that the
  // centring matters; weight in [0.5, 1.5], bias in [-1, 1].
  auto x_host = random_inputs<C>(m * n, options.seed, -1.0, 7.0);
  auto weight_host = random_inputs<C>(n, options.seed + 1, 0.5, 1.5);
  auto bias_host = random_inputs<C>(n, options.seed + 2, -1.0, 1.0);
  auto x = Buffer<C>::from(x_host, options.device);
  auto weight = Buffer<C>::from(weight_host, options.device);
  auto bias = Buffer<C>::from(bias_host, options.device);
  Buffer<C> y(m * n, options.device);
  Buffer<float> mean(m, options.device), rstd(m, options.device);
  RunReport report;
  auto launch = [&] { return layer_norm_forward_launch<C>(x, weight, bias, y, mean, rstd, m, n, kEps); };
  report.stats = launch();
  if (options.bench) report.seconds = median_seconds(options.device, launch);
  // x read, y written, w and b read, mean and rstd written.
  report.bytes = static_cast<double>(2 * m * n + 2 * n) * sizeof(C) + 2.0 * static_cast<double>(m) * sizeof(float);
  // Per element: the tile sum, centring, square and sum for the statistics;
  // subtract, two multiplies and an add for y.
  report.flops = 8.0 * static_cast<double>(m * n);
  if (options.check) {
    // The tolerance of each output is the norm of its elementwise error
    // bounds (layer_norm_error_bounds: the dtype's rounding of y plus the f32
    // statistics' errors, growing with n) over the norm of the reference.
    const auto ref = layer_norm_reference(x_host, weight_host, bias_host, m, n, kEps);
    const auto bounds =
        layer_norm_error_bounds(x_host, weight_host, bias_host, ref, m, n, norm_block_size(n), dtype_v<C>);
    const NormCheck check =
        worst_check({norm_check(y.to_host(), ref.y, bounds.y), norm_check(mean.to_host(), ref.mean, bounds.mean),
                     norm_check(rstd.to_host(), ref.rstd, bounds.rstd)});
    report.error = check.error;
    report.tolerance = check.tolerance;
  }
  return report;
}
}  // namespace

RunReport run_layer_norm(const RunOptions& options) {
  return with_dot_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options); });
}

}  // namespace kiln::kernels
