// Registry entry for attention forward (FlashAttention style).
#include "kiln/kernels/attention.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dtype_dispatch.hpp"
#include "entries.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {
/// The sample configuration's query rows per program for head_dim.
int block_m_of(int head_dim) { return head_dim == 64 ? attention_block_m<64> : attention_block_m<128>; }

/// fn(the compiled kernel for dtype C and the run's head_dim and causal
/// choices), in the sample configuration's tiles and warps.
template <class C, class F>
decltype(auto) with_kernel(const RunOptions& options, F&& fn) {
  using T = kl::Scalar<C>;
  const bool causal = options.choices.at("causal") == "on";
  if (options.choices.at("head_dim") == "64") {
    constexpr int block_m = attention_block_m<64>;
    const CompileOptions compile_options = attention_compile_options<64>();
    if (causal) return fn(kl::compile<attention<T, 64, block_m, attention_block_n, true>>(compile_options));
    return fn(kl::compile<attention<T, 64, block_m, attention_block_n, false>>(compile_options));
  }
  constexpr int block_m = attention_block_m<128>;
  const CompileOptions compile_options = attention_compile_options<128>();
  if (causal) return fn(kl::compile<attention<T, 128, block_m, attention_block_n, true>>(compile_options));
  return fn(kl::compile<attention<T, 128, block_m, attention_block_n, false>>(compile_options));
}

template <class C>
RunReport run(const RunOptions& options) {
  AttentionShape shape;
  shape.batch = static_cast<int>(options.dims.at("batch"));
  shape.heads = static_cast<int>(options.dims.at("heads"));
  shape.seq = static_cast<int>(options.dims.at("seq"));
  shape.head_dim = std::stoi(options.choices.at("head_dim"));
  shape.causal = options.choices.at("causal") == "on";
  shape.sm_scale = 1.0 / std::sqrt(static_cast<double>(shape.head_dim));
  const std::size_t n = shape.elements();
  const std::size_t rows = static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq;
  const auto q_host = random_inputs<C>(n, options.seed);
  const auto k_host = random_inputs<C>(n, options.seed + 1);
  const auto v_host = random_inputs<C>(n, options.seed + 2);
  auto q = Buffer<C>::from(q_host, options.device);
  auto k = Buffer<C>::from(k_host, options.device);
  auto v = Buffer<C>::from(v_host, options.device);
  Buffer<C> o(n, options.device);
  Buffer<float> lse(rows, options.device);
  const int d = shape.head_dim, seq = shape.seq;
  RunReport report;
  with_kernel<C>(options, [&](auto kernel) {
    const kl::Grid grid(static_cast<int>(kl::cdiv(seq, block_m_of(d))), shape.batch * shape.heads);
    auto launch = [&] {
      return kernel.launch(grid, q, k, v, o, lse, seq, shape.heads, static_cast<float>(shape.sm_scale),
                           shape.heads * seq * d, seq * d, d);
    };
    report.stats = launch();
    if (options.bench) report.seconds = median_seconds(options.device, launch);
  });
  // Q, K, V read and O written once, plus the f32 LSE.
  report.bytes = 4.0 * static_cast<double>(n) * sizeof(C) + 4.0 * static_cast<double>(rows);
  // Q K^T and P V: 2 seq^2 head_dim multiply-adds per head, half of them when causal.
  report.flops = 4.0 * shape.batch * shape.heads * static_cast<double>(seq) * seq * d * (shape.causal ? 0.5 : 1.0);
  if (options.check) {
    // The reference bounds every element's error (the derivation is at
    // attention_reference); |error_i| <= bound_i makes ||error|| <= ||bound||,
    // so ||bound|| / ||reference|| bounds the normwise relative error. The
    // report holds the larger of the errors of O and LSE against the larger
    // of their two tolerances.
    const AttentionReference want = attention_reference(q_host, k_host, v_host, shape);
    report.error = std::max(relative_error(o.to_host(), want.o), relative_error(lse.to_host(), want.lse));
    report.tolerance = std::max(normwise_tolerance(want.o, want.o_bound), normwise_tolerance(want.lse, want.lse_bound));
  }
  return report;
}
}  // namespace

RunReport run_attention(const RunOptions& options) {
  return with_dot_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options); });
}

}  // namespace kiln::kernels
