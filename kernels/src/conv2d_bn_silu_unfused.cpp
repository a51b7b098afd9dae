// Registry entry for the unfused conv2d -> batchnorm -> SiLU sequence (three
// launches through global memory), the baseline of conv2d_bn_silu.
#include "kiln/kernels/conv2d_options.hpp"
#include "kiln/kernels/conv2d_problem.hpp"
#include "kiln/kernels/conv2d_unfused.hpp"

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
  const auto out_size = static_cast<std::size_t>(shape.output_size());
  Buffer<C> conv_out(out_size, options.device), bn_out(out_size, options.device), y(out_size, options.device);
  RunReport report;
  auto launch = [&] { return launch_conv2d_unfused(plan, shape, x, w, scale, shift, conv_out, bn_out, y); };
  report.stats = launch();
  if (options.bench) report.seconds = median_seconds(options.device, launch);
  // The convolution reads x and w and writes its output; batchnorm reads that
  // and scale/shift and writes; SiLU reads that and writes y.
  report.bytes = static_cast<double>(shape.input_size() + shape.weight_size() + 5 * shape.output_size()) * sizeof(C) +
                 2.0 * static_cast<double>(shape.k) * sizeof(float);
  report.flops = 2.0 * static_cast<double>(shape.output_size()) * static_cast<double>(shape.reduction());
  if (options.check) {
    const auto ref = conv2d_bn_silu_reference(problem.x, problem.w, problem.bn.scale, problem.bn.shift, shape);
    // conv2d_error_bound with the conv and batchnorm outputs rounded to C.
    report.tolerance = conv2d_relative_tolerance(ref, conv2d_error_bound(ref, shape.reduction(), dtype_v<C>, true));
    report.error = relative_error(y.to_host(), ref.y);
  }
  return report;
}
}  // namespace

RunReport run_conv2d_bn_silu_unfused(const RunOptions& options) {
  const Conv2dPlan plan = conv2d_plan_of(options, compute_units(options.device));
  RunReport report =
      with_dot_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options, plan); });
  report.plan = conv2d_plan_summary(plan);
  return report;
}

}  // namespace kiln::kernels
