// Registry entries for matmul with a fused epilogue and for its unfused
// sequence (plain matmul into f32, bias_gelu, dropout). Both take the same
// dims and choices, draw the same inputs from the seed, and check against
// the same double reference.
#include "kiln/kernels/matmul.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dtype_dispatch.hpp"
#include "entries.hpp"
#include "kiln/kernels/matmul_unfused.hpp"
#include "run_support.hpp"

namespace kiln::kernels {

namespace {

constexpr int kDropoutBlock = 1024;
// The first dropout offset of C's element (0, 0).
constexpr std::uint32_t kDropoutOffset = 0;

/// The configuration's line in the run's report.
std::string plan_of(const MatmulConfig& config) {
  return "tiles " + std::to_string(config.block_m) + "x" + std::to_string(config.block_n) + "x" +
         std::to_string(config.block_k) + ", GROUP_M " + std::to_string(config.group_m) + ", " +
         std::to_string(config.num_warps) + " warps, " + std::to_string(config.num_stages) + " stages";
}

template <Epilogue E>
struct epilogue_tag {
  static constexpr Epilogue value = E;
};

/// fn(epilogue_tag<e>{}) for the epilogue e, a compile-time value.
template <bool BIAS, Gelu GELU, class F>
decltype(auto) with_dropout(bool dropout, F&& fn) {
  if (dropout) return fn(epilogue_tag<Epilogue{.bias = BIAS, .gelu = GELU, .dropout = true}>{});
  return fn(epilogue_tag<Epilogue{.bias = BIAS, .gelu = GELU, .dropout = false}>{});
}
template <bool BIAS, class F>
decltype(auto) with_gelu(const Epilogue& e, F&& fn) {
  if (e.gelu == Gelu::erf) return with_dropout<BIAS, Gelu::erf>(e.dropout, fn);
  if (e.gelu == Gelu::tanh) return with_dropout<BIAS, Gelu::tanh>(e.dropout, fn);
  return with_dropout<BIAS, Gelu::none>(e.dropout, fn);
}
template <class F>
decltype(auto) with_epilogue(const Epilogue& e, F&& fn) {
  if (e.bias) return with_gelu<true>(e, fn);
  return with_gelu<false>(e, fn);
}

/// fn(std::type_identity<In>{}, std::type_identity<Out>{}) for the input dtype and the --out choice.
template <class F>
decltype(auto) with_dtypes(const RunOptions& options, F&& fn) {
  return with_dot_dtype(options.dtype, [&](auto in) {
    const std::string& out = options.choices.at("out");
    return with_dot_dtype(out == "same" ? options.dtype : out, [&](auto out_tag) { return fn(in, out_tag); });
  });
}

std::string out_dtype_name(const RunOptions& options) {
  const std::string& out = options.choices.at("out");
  return out == "same" ? options.dtype : out;
}

/// The problem the options describe: sizes, epilogue (dropout when p > 0),
/// seed and output dtype.
MatmulProblem problem_of(const RunOptions& options) {
  MatmulProblem problem;
  problem.m = static_cast<int>(options.dims.at("m"));
  problem.n = static_cast<int>(options.dims.at("n"));
  problem.k = static_cast<int>(options.dims.at("k"));
  // Element offsets (and dropout offsets) are i32 in the kernels.
  for (const auto& [name, size] : {std::pair{"m * k", std::int64_t{problem.m} * problem.k},
                                   std::pair{"k * n", std::int64_t{problem.k} * problem.n},
                                   std::pair{"m * n", std::int64_t{problem.m} * problem.n}})
    if (size > INT32_MAX)
      throw std::invalid_argument(std::string("matmul: ") + name + " = " + std::to_string(size) +
                                  " elements exceeds the i32 offsets of the kernel (2^31-1)");
  problem.p = static_cast<float>(choice_number(options, "dropout"));
  const std::string& gelu = options.choices.at("gelu");
  problem.epilogue = {.bias = options.choices.at("bias") == "on",
                      .gelu = gelu == "erf"    ? Gelu::erf
                              : gelu == "tanh" ? Gelu::tanh
                                               : Gelu::none,
                      .dropout = problem.p > 0};
  problem.seed = options.seed;
  problem.offset = kDropoutOffset;
  const std::string out = out_dtype_name(options);
  problem.out_dtype = out == "f16" ? ir::DType::f16 : out == "bf16" ? ir::DType::bf16 : ir::DType::f32;
  return problem;
}

/// The inputs both entries draw from the seed: A [m, k], B [k, n], bias [n].
template <class C>
struct Inputs {
  std::vector<C> a, b, bias;
  Inputs(const MatmulProblem& problem, std::uint64_t seed)
      : a(random_inputs<C>(static_cast<std::size_t>(problem.m) * problem.k, seed)),
        b(random_inputs<C>(static_cast<std::size_t>(problem.k) * problem.n, seed + 1)),
        bias(random_inputs<C>(static_cast<std::size_t>(problem.n), seed + 2)) {}
};

/// The fields of a report both entries fill alike: the check against the
/// reference, whose per-element bounds give the tolerance, and the flops.
template <class C, class Out>
void check(RunReport& report, const RunOptions& options, const MatmulProblem& problem, const Inputs<C>& inputs,
           const Buffer<Out>& out) {
  report.flops = 2.0 * problem.m * problem.n * problem.k;
  if (!options.check) return;
  const ReferenceWithBounds ref = matmul_reference(inputs.a, inputs.b, inputs.bias, problem);
  report.error = relative_error(out.to_host(), ref.values);
  report.tolerance = normwise_tolerance(ref);
}

template <class C, class Out, Epilogue E, MatmulConfig G>
auto fused_kernel() {
  return kl::compile<matmul<kl::Scalar<C>, kl::Scalar<Out>, G.block_m, G.block_n, G.block_k, G.group_m, E>>(
      G.compile_options());
}

template <class C, class Out, Epilogue E, MatmulConfig G>
RunReport run_fused(const RunOptions& options) {
  const MatmulProblem problem = problem_of(options);
  const Inputs<C> inputs(problem, options.seed);
  const auto [m, n, k] = std::array{problem.m, problem.n, problem.k};
  auto a = Buffer<C>::from(inputs.a, options.device), b = Buffer<C>::from(inputs.b, options.device);
  auto bias = Buffer<C>::from(inputs.bias, options.device);
  Buffer<Out> c(static_cast<std::size_t>(m) * n, options.device);
  const auto kernel = fused_kernel<C, Out, E, G>();
  const kl::Grid grid(kl::cdiv(m, G.block_m) * kl::cdiv(n, G.block_n));
  const auto seed = static_cast<std::int64_t>(options.seed);
  auto launch = [&] {
    return kernel.launch(grid, a, b, c, bias, m, n, k, k, 1, n, 1, n, 1, problem.p, seed, problem.offset);
  };
  RunReport report;
  report.plan = plan_of(G);
  report.stats = launch();
  if (options.bench) report.seconds = median_seconds(options.device, launch);
  // A and B read once, the bias once, C written once.
  report.bytes = (static_cast<double>(m) * k + static_cast<double>(k) * n + (E.bias ? n : 0)) * sizeof(C) +
                 static_cast<double>(m) * n * sizeof(Out);
  check(report, options, problem, inputs, c);
  return report;
}

/// The kernels of the unfused sequence: the plain matmul, bias_gelu (with
/// the epilogue's bias and GELU only) and dropout.
template <class C, class Out, Epilogue E, MatmulConfig G>
auto unfused_kernels() {
  constexpr Epilogue bias_and_gelu{.bias = E.bias, .gelu = E.gelu};
  return std::tuple(
      kl::compile<plain_matmul<kl::Scalar<C>, G.block_m, G.block_n, G.block_k, G.group_m>>(G.compile_options()),
      kl::compile<bias_gelu<kl::Scalar<C>, kl::Scalar<Out>, G.block_m, G.block_n, bias_and_gelu>>(),
      kl::compile<dropout<kl::Scalar<Out>, kDropoutBlock>>());
}

template <class C, class Out, Epilogue E, MatmulConfig G>
RunReport run_unfused(const RunOptions& options) {
  const MatmulProblem problem = problem_of(options);
  const Inputs<C> inputs(problem, options.seed);
  const auto [m, n, k] = std::array{problem.m, problem.n, problem.k};
  auto a = Buffer<C>::from(inputs.a, options.device), b = Buffer<C>::from(inputs.b, options.device);
  auto bias = Buffer<C>::from(inputs.bias, options.device);
  Buffer<float> product(static_cast<std::size_t>(m) * n, options.device);
  Buffer<Out> activated(static_cast<std::size_t>(m) * n, options.device),
      c(static_cast<std::size_t>(m) * n, options.device);
  const auto [plain, activation, drop] = unfused_kernels<C, Out, E, G>();
  const auto seed = static_cast<std::int64_t>(options.seed);
  const int elements = m * n;
  // The sequence ends in `c`: without dropout (p = 0) bias_gelu writes it.
  Buffer<Out>& activation_out = E.dropout ? activated : c;
  auto launch = [&] {
    runtime::LaunchStats stats = plain.launch(kl::Grid(kl::cdiv(m, G.block_m) * kl::cdiv(n, G.block_n)), a, b, product,
                                              bias, m, n, k, k, 1, n, 1, n, 1, problem.p, seed, problem.offset);
    stats += activation.launch(kl::Grid(kl::cdiv(m, G.block_m), kl::cdiv(n, G.block_n)), product, bias, activation_out,
                               m, n, n, n);
    if (E.dropout)
      stats += drop.launch(kl::Grid(kl::cdiv(elements, kDropoutBlock)), activated, c, elements, problem.p, seed,
                           problem.offset);
    return stats;
  };
  RunReport report;
  report.plan = plan_of(G);
  report.stats = launch();
  if (options.bench) report.seconds = median_seconds(options.device, launch);
  // The matmul reads A and B and writes the f32 product; bias_gelu reads it
  // and the bias and writes C; dropout reads and writes C again.
  const double mn = static_cast<double>(m) * n;
  report.bytes = (static_cast<double>(m) * k + static_cast<double>(k) * n + (E.bias ? n : 0)) * sizeof(C) +
                 2 * mn * sizeof(float) + mn * sizeof(Out) + (E.dropout ? 2 * mn * sizeof(Out) : 0);
  MatmulProblem checked = problem;
  checked.output_roundings = E.dropout ? 2 : 1;
  check(report, options, checked, inputs, c);
  return report;
}

/// fn.template operator()<C, Out, E, G>() for the options' dtypes, epilogue
/// and target architecture's configuration.
template <class F>
decltype(auto) dispatch(const RunOptions& options, F&& fn) {
  const MatmulProblem problem = problem_of(options);
  return with_dtypes(options, [&](auto in, auto out) {
    return with_epilogue(problem.epilogue, [&](auto epilogue) {
      return with_matmul_config(target_arch(options), [&](auto config) {
        return fn.template operator()<typename decltype(in)::type, typename decltype(out)::type,
                                      decltype(epilogue)::value, decltype(config)::value>();
      });
    });
  });
}
}  // namespace

RunReport run_matmul(const RunOptions& options) {
  return dispatch(options, []<class C, class Out, Epilogue E, MatmulConfig G>() {
    return std::function(run_fused<C, Out, E, G>);
  })(options);
}

RunReport run_matmul_unfused(const RunOptions& options) {
  return dispatch(options, []<class C, class Out, Epilogue E, MatmulConfig G>() {
    return std::function(run_unfused<C, Out, E, G>);
  })(options);
}

}  // namespace kiln::kernels
