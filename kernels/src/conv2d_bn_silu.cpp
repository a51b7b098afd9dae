// Registry entry for the fused conv2d + batchnorm + SiLU (inference, NCHW).
#include "kiln/kernels/conv2d_launch.hpp"
#include "kiln/kernels/conv2d_options.hpp"
#include "kiln/kernels/conv2d_problem.hpp"

#include "dtype_dispatch.hpp"
#include "entries.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {
template <class C>
RunReport run(const RunOptions& options, const Conv2dPlan& plan) {
  const Conv2dShape shape = conv2d_shape_of(options);
  const auto problem = conv2d_random_problem<C>(shape, options.seed);
  auto x = Buffer<C>::from(problem.x, options.device);
  auto w = Buffer<C>::from(problem.w, options.device);
  auto scale = Buffer<float>::from(problem.bn.scale, options.device);
  auto shift = Buffer<float>::from(problem.bn.shift, options.device);
  Buffer<C> y(static_cast<std::size_t>(shape.output_size()), options.device);
  RunReport report;
  with_conv2d_kernel<C, true>(plan, [&](auto kernel) {
    report.stats = launch_conv2d_kernel(kernel, plan, shape, x, w, scale, shift, y);
    if (options.bench)
      report.seconds =
          median_seconds(options.device, [&] { launch_conv2d_kernel(kernel, plan, shape, x, w, scale, shift, y); });
  });
  // Read the input, weights and per-channel scale/shift once, write the output once.
  report.bytes = static_cast<double>(shape.input_size() + shape.weight_size() + shape.output_size()) * sizeof(C) +
                 2.0 * static_cast<double>(shape.k) * sizeof(float);
  report.flops = 2.0 * static_cast<double>(shape.output_size()) * static_cast<double>(shape.reduction());
  if (options.check) {
    const auto ref = conv2d_bn_silu_reference(problem.x, problem.w, problem.bn.scale, problem.bn.shift, shape);
    // The per-element bound of conv2d_error_bound (rounding of the f32 sum of
    // the reduction, the epilogue, the output dtype) in normwise form.
    report.tolerance = conv2d_relative_tolerance(ref, conv2d_error_bound(ref, shape.reduction(), dtype_v<C>));
    report.error = relative_error(y.to_host(), ref.y);
  }
  return report;
}
}  // namespace

RunReport run_conv2d_bn_silu(const RunOptions& options) {
  const Conv2dPlan plan = conv2d_plan_of(options, compute_units(options.device));
  RunReport report =
      with_dot_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options, plan); });
  report.plan = conv2d_plan_summary(plan);
  return report;
}

}  // namespace kiln::kernels
