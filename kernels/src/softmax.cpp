// Registry entry for softmax.
#include "kiln/kernels/softmax.hpp"

#include "dtype_dispatch.hpp"
#include "entries.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {
// Rows up to 128 wide fit one small tile; wider rows loop over 1024-wide tiles.
template <class C, class F>
decltype(auto) with_block(std::int64_t cols, F&& fn) {
  if (cols <= 128) return fn(kl::compile<softmax<kl::Scalar<C>, 128>>());
  return fn(kl::compile<softmax<kl::Scalar<C>, 1024>>());
}

template <class C>
RunReport run(const RunOptions& options) {
  const auto rows = options.dims.at("rows");
  const auto cols = options.dims.at("cols");
  auto in_host = random_inputs<C>(rows * cols, options.seed);
  auto in = Buffer<C>::from(in_host, options.device);
  Buffer<C> out(rows * cols, options.device);
  RunReport report;
  with_block<C>(cols, [&](auto kernel) {
    const kl::Grid grid(static_cast<int>(rows));
    report.stats = kernel.launch(grid, in, out, cols, cols, cols);
    if (options.bench)
      report.seconds = median_seconds(options.device, [&] { kernel.launch(grid, in, out, cols, cols, cols); });
  });
  report.bytes = 2.0 * static_cast<double>(rows * cols) * sizeof(C);
  // Each output: exp (a few f32 roundings), an f32 sum of `cols` terms
  // (at most cols roundings), a division, and the rounding to the output dtype.
  report.tolerance = unit_roundoff(dtype_v<C>) + static_cast<double>(cols + 4) * unit_roundoff(ir::DType::f32);
  if (options.check) report.error = relative_error(out.to_host(), softmax_reference(in_host, rows, cols));
  return report;
}
}  // namespace

RunReport run_softmax(const RunOptions& options) {
  return with_float_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options); });
}

}  // namespace kiln::kernels
