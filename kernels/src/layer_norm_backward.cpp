// Registry entry for layer_norm_backward (dx, and dw and db reduced through
// G partial rows).
#include "kiln/kernels/layer_norm_backward.hpp"

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
  const int groups = layer_norm_backward_groups(m, compute_units(options.device));
  // x uniform in [-1, 7] and dy in [-0.5, 1.5] (both off zero mean), weight in
  // [0.5, 1.5]; each row's mean and rstd from the double forward, in f32 as
  // the forward kernel stores them.
  auto dy_host = random_inputs<C>(m * n, options.seed, -0.5, 1.5);
  auto x_host = random_inputs<C>(m * n, options.seed + 1, -1.0, 7.0);
  auto weight_host = random_inputs<C>(n, options.seed + 2, 0.5, 1.5);
  const auto forward = layer_norm_reference(x_host, weight_host, weight_host, m, n, kEps);
  std::vector<float> mean_host(forward.mean.begin(), forward.mean.end());
  std::vector<float> rstd_host(forward.rstd.begin(), forward.rstd.end());
  auto dy = Buffer<C>::from(dy_host, options.device);
  auto x = Buffer<C>::from(x_host, options.device);
  auto weight = Buffer<C>::from(weight_host, options.device);
  auto mean = Buffer<float>::from(mean_host, options.device);
  auto rstd = Buffer<float>::from(rstd_host, options.device);
  Buffer<C> dx(m * n, options.device);
  Buffer<float> dw(n, options.device), db(n, options.device);
  Buffer<float> partial_dw(groups * n, options.device), partial_db(groups * n, options.device);
  RunReport report;
  report.plan = std::to_string(groups) + " programs, each summing the dw/db partials of every " +
                std::to_string(groups) + "th row, then one reduction";
  auto launch = [&] {
    return layer_norm_backward_launch<C>(dy, x, weight, mean, rstd, dx, dw, db, partial_dw, partial_db, m, n, groups);
  };
  report.stats = launch();
  if (options.bench) report.seconds = median_seconds(options.device, launch);
  // dy and x read, dx written, w read, mean and rstd read, dw and db written
  // (the partial rows are extra traffic of this method, not of the problem).
  report.bytes = static_cast<double>(3 * m * n + n) * sizeof(C) + static_cast<double>(2 * m + 2 * n) * sizeof(float);
  // Per element: xhat (2), w dy (1), the two row sums (3), dx (4), dw and db (3).
  report.flops = 13.0 * static_cast<double>(m * n);
  if (options.check) {
    // The tolerance of each output is the norm of its elementwise error
    // bounds (layer_norm_backward_error_bounds: dx's f32 row sums of n terms
    // and rounding to the dtype; dw's and db's f32 sums of m terms) over the
    // norm of the reference. dw and db are f32.
    const auto ref = layer_norm_backward_reference(dy_host, x_host, weight_host, mean_host, rstd_host, m, n);
    const auto bounds =
        layer_norm_backward_error_bounds(dy_host, x_host, weight_host, mean_host, rstd_host, ref, m, n, dtype_v<C>);
    const NormCheck check =
        worst_check({norm_check(dx.to_host(), ref.dx, bounds.dx), norm_check(dw.to_host(), ref.dw, bounds.dw),
                     norm_check(db.to_host(), ref.db, bounds.db)});
    report.error = check.error;
    report.tolerance = check.tolerance;
  }
  return report;
}
}  // namespace

RunReport run_layer_norm_backward(const RunOptions& options) {
  return with_dot_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options); });
}

}  // namespace kiln::kernels
