// Registry entry for vector_add.
#include "kiln/kernels/vector_add.hpp"

#include "dtype_dispatch.hpp"
#include "entries.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {
constexpr int kBlock = 1024;

template <class C>
auto compiled() {
  return kl::compile<vector_add<kl::Scalar<C>, kBlock>>();
}

template <class C>
RunReport run(const RunOptions& options) {
  const auto n = options.dims.at("n");
  auto x_host = random_inputs<C>(n, options.seed);
  auto y_host = random_inputs<C>(n, options.seed + 1);
  auto x = Buffer<C>::from(x_host, options.device);
  auto y = Buffer<C>::from(y_host, options.device);
  Buffer<C> out(n, options.device);
  auto kernel = compiled<C>();
  const kl::Grid grid(static_cast<int>((n + kBlock - 1) / kBlock));
  RunReport report;
  report.stats = kernel.launch(grid, x, y, out, n);
  report.bytes = 3.0 * static_cast<double>(n) * sizeof(C);
  // One rounding of the exact sum to the output dtype.
  report.tolerance = unit_roundoff(dtype_v<C>);
  if (options.check) report.error = relative_error(out.to_host(), vector_add_reference(x_host, y_host));
  if (options.bench) report.seconds = median_seconds(options.device, [&] { kernel.launch(grid, x, y, out, n); });
  return report;
}
}  // namespace

RunReport run_vector_add(const RunOptions& options) {
  return with_float_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options); });
}

}  // namespace kiln::kernels
