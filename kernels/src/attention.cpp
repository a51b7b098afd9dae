// Registry entry for attention forward (FlashAttention style).
#include "kiln/kernels/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtype_dispatch.hpp"
#include "entries.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {
/// fn(the compiled kernel in configuration G, with key lengths or without,
/// and whether it takes them as a std::bool_constant).
template <class C, int HEAD_DIM, bool CAUSAL, AttentionConfig G, class F>
decltype(auto) with_masks(bool key_lengths, F&& fn) {
  using T = kl::Scalar<C>;
  if (key_lengths)
    return fn(kl::compile<attention_with_key_lengths<T, HEAD_DIM, G.block_m, G.block_n, CAUSAL>>(G.compile_options()),
              std::true_type{});
  return fn(kl::compile<attention<T, HEAD_DIM, G.block_m, G.block_n, CAUSAL>>(G.compile_options()), std::false_type{});
}

/// fn(kernel, takes key lengths, its configuration) for HEAD_DIM and
/// the run's causal and key_lengths choices, in the configuration of the
/// run's target architecture and dtype: kAttentionFmaUnits for f32,
/// kAttentionSm90a for f16 and bf16 on sm_90a, kAttentionSm80 for them
/// elsewhere.
template <class C, int HEAD_DIM, class F>
decltype(auto) with_config(const RunOptions& options, F&& fn) {
  const bool causal = options.choices.at("causal") == "on";
  const bool key_lengths = options.choices.at("key_lengths") != "none";
  auto in = [&]<AttentionConfig G>() {
    auto pass_config = [&](auto kernel, auto takes_key_lengths) { return fn(kernel, takes_key_lengths, G); };
    if (causal) return with_masks<C, HEAD_DIM, true, G>(key_lengths, pass_config);
    return with_masks<C, HEAD_DIM, false, G>(key_lengths, pass_config);
  };
  if constexpr (std::is_same_v<C, float>) return in.template operator()<kAttentionFmaUnits<HEAD_DIM>>();
  if (target_arch(options) == "sm_90a") return in.template operator()<kAttentionSm90a<HEAD_DIM>>();
  return in.template operator()<kAttentionSm80<HEAD_DIM>>();
}

/// fn(kernel, takes key lengths, its configuration) for dtype C and the
/// run's head_dim, causal and key_lengths choices.
template <class C, class F>
decltype(auto) with_kernel(const RunOptions& options, F&& fn) {
  if (options.choices.at("head_dim") == "64") return with_config<C, 64>(options, fn);
  return with_config<C, 128>(options, fn);
}

/// Each batch's number of valid keys for the key_lengths choice: uniform in
/// [0, seq] from `seed` ("random"), so that some rows may see no key.
std::vector<int> key_lengths_of(const RunOptions& options, int batch, int seq, std::uint64_t seed) {
  if (options.choices.at("key_lengths") == "none") return {};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> length(0, seq);
  std::vector<int> lengths(static_cast<std::size_t>(batch));
  for (int& l : lengths) l = length(rng);
  return lengths;
}

/// The normwise check of the LSE over the rows that see a key. A row that
/// sees none has LSE -inf in the reference, and must have it in the kernel:
/// anything else makes the error infinite. Returns the error and its tolerance.
std::pair<double, double> lse_check(const std::vector<float>& got, const AttentionReference& want) {
  std::vector<float> got_finite;
  std::vector<double> want_finite, bound_finite;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want.lse[i])) {
      if (got[i] != want.lse[i]) return {std::numeric_limits<double>::infinity(), 0};
      continue;
    }
    got_finite.push_back(got[i]);
    want_finite.push_back(want.lse[i]);
    bound_finite.push_back(want.lse_bound[i]);
  }
  return {relative_error(got_finite, want_finite), normwise_tolerance(want_finite, bound_finite)};
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
  shape.key_lengths = key_lengths_of(options, shape.batch, shape.seq, options.seed + 3);
  auto q = Buffer<C>::from(q_host, options.device);
  auto k = Buffer<C>::from(k_host, options.device);
  auto v = Buffer<C>::from(v_host, options.device);
  Buffer<C> o(n, options.device);
  Buffer<float> lse(rows, options.device);
  const auto key_lengths = Buffer<std::int32_t>::from(
      shape.key_lengths.empty() ? std::vector<std::int32_t>(shape.batch, shape.seq) : shape.key_lengths,
      options.device);
  const int d = shape.head_dim, seq = shape.seq;
  RunReport report;
  with_kernel<C>(options, [&](auto kernel, auto takes_key_lengths, const AttentionConfig& config) {
    report.plan = std::to_string(config.block_m) + " query rows x " + std::to_string(config.block_n) +
                  " keys per block, " + std::to_string(config.num_warps) + " warps, " +
                  std::to_string(config.num_stages) + (config.num_stages == 1 ? " stage" : " stages") +
                  (config.max_registers > 0 ? ", at most " + std::to_string(config.max_registers) + " registers" : "");
    const kl::Grid grid(static_cast<int>(kl::cdiv(seq, config.block_m)), shape.batch * shape.heads);
    auto launch = [&] {
      const auto sm_scale = static_cast<float>(shape.sm_scale);
      if constexpr (decltype(takes_key_lengths)::value)
        return kernel.launch(grid, q, k, v, o, lse, key_lengths, seq, shape.heads, sm_scale, shape.heads * seq * d,
                             seq * d, d);
      else return kernel.launch(grid, q, k, v, o, lse, seq, shape.heads, sm_scale, shape.heads * seq * d, seq * d, d);
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
    // of their two tolerances (the LSE's over the rows that see a key).
    const AttentionReference want = attention_reference(q_host, k_host, v_host, shape);
    const auto [lse_error, lse_tolerance] = lse_check(lse.to_host(), want);
    report.error = std::max(relative_error(o.to_host(), want.o), lse_error);
    report.tolerance = std::max(normwise_tolerance(want.o, want.o_bound), lse_tolerance);
  }
  return report;
}
}  // namespace

RunReport run_attention(const RunOptions& options) {
  return with_dot_dtype(options.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(options); });
}

}  // namespace kiln::kernels
