// Registry entry for the standalone low-memory dropout kernel.
#include "kiln/kernels/dropout.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "dtype_dispatch.hpp"
#include "entries.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {
constexpr int kBlock = 1024;
// The offset of element 0: the masks are those of matmul's C with the same seed.
constexpr std::int32_t kOffset = 0;

template <class C>
auto dropout_kernel() {
  return kl::compile<dropout<kl::Scalar<C>, kBlock>>();
}

template <class C>
RunReport run(const RunOptions& options) {
  const auto n = options.dims.at("n");
  // The last program's offsets, up to cdiv(n, BLOCK) * BLOCK - 1, must fit an i32.
  if (n > INT32_MAX - kBlock)
    throw std::invalid_argument("dropout: --n " + std::to_string(n) + " exceeds the kernel's i32 offsets (at most " +
                                std::to_string(INT32_MAX - kBlock) + ")");
  const auto p = static_cast<float>(choice_number(options, "p"));
  const auto seed = static_cast<std::int64_t>(options.seed);
  const auto x_host = random_inputs<C>(static_cast<std::size_t>(n), options.seed);
  auto x = Buffer<C>::from(x_host, options.device);
  Buffer<C> out(static_cast<std::size_t>(n), options.device);
  const auto kernel = dropout_kernel<C>();
  const kl::Grid grid(static_cast<int>(kl::cdiv(n, std::int64_t{kBlock})));
  auto launch = [&] { return kernel.launch(grid, x, out, n, p, seed, kOffset); };
  RunReport report;
  report.stats = launch();
  if (options.bench) report.seconds = median_seconds(options.device, launch);
  report.bytes = 2.0 * static_cast<double>(n) * sizeof(C);
  report.flops = static_cast<double>(n);
  if (options.check) {
    const ReferenceWithBounds ref = dropout_reference(x_host, p, options.seed, static_cast<std::uint32_t>(kOffset));
    report.error = relative_error(out.to_host(), ref.values);
    // Elementwise bounds (see dropout_reference) give the normwise tolerance.
    report.tolerance = normwise_tolerance(ref);
  }
  return report;
}
}  // namespace

RunReport run_dropout(const RunOptions& options) {
  return with_dot_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options); });
}

}  // namespace kiln::kernels
