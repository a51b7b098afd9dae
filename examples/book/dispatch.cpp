// Chapter 14, "Compile-time parameters and dtype dispatch": one kernel
// template over element types, block sizes, an activation and a bias flag;
// entry points that pick an instantiation from a runtime dtype and row length;
// what each instantiation costs; and the variants argument values select.
// Every result is checked against a double reference with a tolerance from the
// dtype's unit roundoff and the row length.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kiln/ir/printer.hpp"
#include "kiln/kiln.hpp"

namespace kl = kiln;

int traces = 0;  // how often a kernel body has been traced

// [book:kernel]
enum class Activation { none, relu, silu };

template <class T, int BLOCK, Activation ACT, bool HAS_BIAS>
void bias_act(kl::Ptr<T> x, kl::Ptr<T> bias, kl::Ptr<T> y, kl::Ptr<kl::f32> row_sum, kl::i32 n_cols) {
  ++traces;
  auto row = kl::program_id(0);
  auto cols = kl::arange<BLOCK>();
  auto mask = cols < n_cols;
  auto v = kl::cast<kl::f32>(kl::load(x + row * n_cols + cols, mask));  // compute in f32, whatever T is
  if constexpr (HAS_BIAS) v = v + kl::cast<kl::f32>(kl::load(bias + cols, mask));
  auto a = [&] {
    if constexpr (ACT == Activation::relu) return kl::relu(v);
    else if constexpr (ACT == Activation::silu) return kl::silu(v);
    else return v;
  }();
  kl::store(y + row * n_cols + cols, kl::cast<T>(a), mask);                  // back to T: one rounding
  kl::store(row_sum + row, kl::sum(kl::where(mask, a, 0.0f), kl::axis<0>));  // in f32; the padding adds 0
}
// [/book:kernel]

// [book:by_block]
constexpr int kMaxBlock = 4096;

constexpr int block_for(int n_cols) {  // the smallest power of two that holds the row, at least 64
  return static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(n_cols, 64))));
}

inline kl::CompileOptions options_for(int block) {  // one warp per 256 columns, 1 to 8 warps
  kl::CompileOptions options;
  options.num_warps = std::clamp(block / 256, 1, 8);
  return options;
}

/// fn(kernel) with the instantiation of bias_act for rows of n_cols elements of C.
template <class C, Activation ACT, bool HAS_BIAS, class F>
decltype(auto) with_block(int n_cols, F&& fn) {
  using T = kl::Scalar<C>;  // the element type of the storage type: float -> kl::f32, kl::half -> kl::f16
  if (n_cols < 1 || n_cols > kMaxBlock)
    throw std::invalid_argument("bias_act: rows of " + std::to_string(n_cols) + " columns; this kernel holds 1 to " +
                                std::to_string(kMaxBlock));
  switch (block_for(n_cols)) {
    case 64: return fn(kl::compile<bias_act<T, 64, ACT, HAS_BIAS>>(options_for(64)));
    case 128: return fn(kl::compile<bias_act<T, 128, ACT, HAS_BIAS>>(options_for(128)));
    case 256: return fn(kl::compile<bias_act<T, 256, ACT, HAS_BIAS>>(options_for(256)));
    case 512: return fn(kl::compile<bias_act<T, 512, ACT, HAS_BIAS>>(options_for(512)));
    case 1024: return fn(kl::compile<bias_act<T, 1024, ACT, HAS_BIAS>>(options_for(1024)));
    case 2048: return fn(kl::compile<bias_act<T, 2048, ACT, HAS_BIAS>>(options_for(2048)));
    default: return fn(kl::compile<bias_act<T, kMaxBlock, ACT, HAS_BIAS>>(options_for(kMaxBlock)));
  }
}
// [/book:by_block]

// [book:by_value]
/// fn(std::integral_constant<Activation, A>{}) for the runtime activation a.
template <class F>
decltype(auto) with_activation(Activation a, F&& fn) {
  switch (a) {
    case Activation::relu: return fn(std::integral_constant<Activation, Activation::relu>{});
    case Activation::silu: return fn(std::integral_constant<Activation, Activation::silu>{});
    default: return fn(std::integral_constant<Activation, Activation::none>{});
  }
}

/// fn(std::true_type{}) or fn(std::false_type{}).
template <class F>
decltype(auto) with_bool(bool b, F&& fn) {
  return b ? fn(std::true_type{}) : fn(std::false_type{});
}

/// fn(std::type_identity<C>{}) for the storage type C of the runtime dtype d.
template <class F>
decltype(auto) with_dtype(kl::ir::DType d, F&& fn) {
  switch (d) {
    case kl::ir::DType::f32: return fn(std::type_identity<float>{});
    case kl::ir::DType::f16: return fn(std::type_identity<kl::half>{});
    case kl::ir::DType::bf16: return fn(std::type_identity<kl::bfloat16>{});
    default: throw std::invalid_argument("bias_act: no kernel for dtype " + std::string(kl::ir::dtype_name(d)));
  }
}
// [/book:by_value]

// [book:entry]
/// y = act(x + bias) over `rows` rows of n_cols elements, and each row's sum in
/// f32. Returns the variant the launch ran.
template <class C>
std::shared_ptr<const kl::runtime::Program> bias_act_launch(const kl::Buffer<C>& x, const kl::Buffer<C>& bias,
                                                            const kl::Buffer<C>& y, const kl::Buffer<float>& sums,
                                                            int rows, int n_cols, Activation act, bool has_bias) {
  return with_activation(act, [&](auto a) {
    return with_bool(has_bias, [&](auto b) {
      return with_block<C, decltype(a)::value, decltype(b)::value>(n_cols, [&](auto kernel) {
        kernel.launch(kl::Grid(rows), x, bias, y, sums, n_cols);
        return kernel.program_for(x, bias, y, sums, n_cols);
      });
    });
  });
}
// [/book:entry]

// [book:tolerance]
struct Precision {
  double u;     // unit roundoff: a rounding to nearest changes a value by at most u relative
  double tiny;  // and, below the smallest normal number, by at most this much absolute
};

Precision precision(kl::ir::DType d) {
  switch (d) {
    case kl::ir::DType::f16: return {std::ldexp(1.0, -11), std::ldexp(1.0, -25)};
    case kl::ir::DType::bf16: return {std::ldexp(1.0, -8), std::ldexp(1.0, -134)};
    default: return {std::ldexp(1.0, -24), std::ldexp(1.0, -150)};
  }
}

struct Tolerance {
  double y;    // |y - want| <= y * |want| + tiny of T
  double sum;  // |sum - want| <= sum * (|want_0| + ... + |want_n-1|)
};

// The inputs lie in [-4, 4], so |v| = |x + bias| <= 8.
Tolerance tolerance(kl::ir::DType t, int n_cols) {
  const double u = precision(kl::ir::DType::f32).u;  // the arithmetic is f32's
  // silu: exp(-v) is off by |v| u from v's rounding and by 2 ulp (4u) of its own; x + bias, 1 + e,
  // 1 / (1 + e) and v * sigmoid round once each. relu and none are within this too.
  const double activation = 8 * u + 4 * u + 4 * u;
  const double sum = (n_cols - 1) * u / (1 - (n_cols - 1) * u);  // n - 1 additions in any order
  return {activation + precision(t).u, activation + sum};        // y is rounded to T once more
}
// [/book:tolerance]

int count_ops(const kl::ir::Function& fn, std::string_view name) {
  int count = 0;
  kl::ir::walk(fn.body, [&](kl::ir::Operation& op) { count += op.name() == name; });
  return count;
}

const char* activation_name(Activation a) {
  return a == Activation::relu ? "relu" : a == Activation::silu ? "silu" : "none";
}

std::string n_cols_facts(const kl::ir::Function& fn) {  // what the variant assumes of n_cols
  const kl::ir::ArgumentFacts& f = fn.argument_facts.at(4);
  if (f.equal_to_1) return "n_cols = 1";
  if (f.divisibility > 1) return "n_cols % " + std::to_string(f.divisibility) + " = 0";
  return "nothing";
}

struct Case {
  kl::ir::DType dtype;
  Activation act;
  bool bias;
  int n_cols;
};

/// Runs one case with storage type C on random inputs and checks it; true when it passes.
template <class C>
bool run(const Case& c) {
  constexpr int kRows = 32;
  const int n = c.n_cols;
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  // [book:inputs]
  std::vector<C> x(kRows * n), bias(n);
  for (C& e : x) e = static_cast<C>(uniform(random));  // rounded to T: the reference starts from these values
  for (C& e : bias) e = static_cast<C>(uniform(random));
  // [/book:inputs]
  auto x_buffer = kl::Buffer<C>::from(x), bias_buffer = kl::Buffer<C>::from(bias);
  kl::Buffer<C> y_buffer(kRows * n);
  kl::Buffer<float> sum_buffer(kRows);
  const int traced_before = traces;
  auto variant = bias_act_launch<C>(x_buffer, bias_buffer, y_buffer, sum_buffer, kRows, n, c.act, c.bias);
  const std::vector<C> y = y_buffer.to_host();
  const std::vector<float> sums = sum_buffer.to_host();

  // [book:check]
  constexpr kl::ir::DType dtype = kl::dtype_v<C>;  // f32, f16 or bf16
  const Tolerance tol = tolerance(dtype, n);
  const double tiny = precision(dtype).tiny;
  bool y_ok = true, sums_ok = true;
  for (int r = 0; r < kRows; ++r) {
    double want_sum = 0, magnitude = 0;
    for (int j = 0; j < n; ++j) {
      double v = static_cast<float>(x[r * n + j]) + (c.bias ? static_cast<float>(bias[j]) : 0.0);
      double want = c.act == Activation::relu   ? std::max(v, 0.0)
                    : c.act == Activation::silu ? v / (1 + std::exp(-v))
                                                : v;
      const double got = static_cast<float>(y[r * n + j]);
      if (!(std::abs(got - want) <= tol.y * std::abs(want) + tiny)) y_ok = false;  // false for NaN too
      want_sum += want;
      magnitude += std::abs(want);
    }
    if (!(std::abs(sums[r] - want_sum) <= tol.sum * magnitude)) sums_ok = false;
  }
  // [/book:check]
  const kl::ir::Function& ir = variant->optimized();
  std::printf("%-4s %s %s n_cols %4d: BLOCK %4d, num_warps %d, %d load, %d exp, assumes %s; %s\n",
              std::string(kl::ir::dtype_name(dtype)).c_str(), activation_name(c.act), c.bias ? "+bias" : "     ", n,
              block_for(n), variant->options().num_warps, count_ops(ir, "load"), count_ops(ir, "exp"),
              n_cols_facts(ir).c_str(), traces > traced_before ? "traced" : "cached");
  std::printf("     tolerance y %.2e, sums %.2e: %s\n", tol.y, tol.sum, y_ok && sums_ok ? "ok" : "FAILED");
  return y_ok && sums_ok;
}

int main() {
  using kl::ir::DType;
  std::printf("instantiations in this program: 3 dtypes x 3 activations x 2 bias flags x 7 blocks = %d\n",
              3 * 3 * 2 * 7);
  // [book:cases]
  const Case cases[] = {
      {DType::f32, Activation::silu, true, 1000},  {DType::f16, Activation::silu, true, 1000},
      {DType::bf16, Activation::silu, true, 1000}, {DType::f16, Activation::silu, true, 1024},
      {DType::f16, Activation::relu, false, 300},  {DType::bf16, Activation::none, true, 1},
      {DType::f32, Activation::silu, true, 1000},  {DType::f64, Activation::silu, true, 1000},
      {DType::f32, Activation::relu, true, 5000},
  };
  bool all_ok = true;
  int rejected = 0;
  for (const Case& c : cases) {
    try {
      all_ok = with_dtype(c.dtype, [&](auto tag) { return run<typename decltype(tag)::type>(c); }) && all_ok;
    } catch (const std::invalid_argument& error) {
      std::printf("rejected: %s\n", error.what());
      ++rejected;
    }
  }
  std::printf("%d kernel bodies traced for %zu cases\n", traces, std::size(cases));
  // [/book:cases]

  // [book:facts]
  kl::Buffer<kl::half> x(1024), bias(1024), y(1024);
  kl::Buffer<float> sums(1);
  auto kernel = kl::compile<bias_act<kl::f16, 1024, Activation::silu, true>>(options_for(1024));
  for (int n_cols : {1000, 1024, 1}) {
    const std::string ir = kl::ir::print(kernel.program_for(x, bias, y, sums, n_cols)->optimized());
    const std::size_t begin = ir.find("%4:"), end = ir.find(')');
    std::printf("n_cols = %4d: %s\n", n_cols, ir.substr(begin, end - begin).c_str());
  }
  std::printf("variants of bias_act<f16, 1024, silu, true>: %zu\n", kernel.program().specialization_count());
  // [/book:facts]
  all_ok = all_ok && rejected == 2;
  std::printf("%s\n", all_ok ? "ok: every result within its tolerance" : "FAILED");
  return all_ok ? 0 : 1;
}
