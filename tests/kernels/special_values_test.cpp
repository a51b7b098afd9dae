// NaN, ±inf, huge and tiny inputs through the sample kernels (softmax, layer
// norm, RMS norm, dropout, matmul with its epilogue, attention): every output element is NaN, +inf, -inf or finite
// exactly where the double-precision reference's is, so no kernel turns a
// defined result into NaN (or hides one), and where the reference is defined
// the values agree within the kernels' usual bounds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/attention.hpp"
#include "kiln/kernels/dropout.hpp"
#include "kiln/kernels/layer_norm.hpp"
#include "kiln/kernels/matmul.hpp"
#include "kiln/kernels/rms_norm.hpp"
#include "kiln/kernels/softmax.hpp"

namespace {

namespace kl = kiln;
using kiln::test::random_values;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kU32 = 0x1p-24;  // f32's unit roundoff

/// "NaN", "+inf", "-inf" or "finite".
std::string kind_of(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  return "finite";
}

/// Each element's kind equals the reference's; finite ones are within
/// `relative` of the reference's magnitude (plus `absolute`).
void expect_same_kinds(const std::vector<float>& got, const std::vector<double>& want, double relative, double absolute,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < got.size() && reported < 5; ++i) {
    const std::string g = kind_of(got[i]), w = kind_of(want[i]);
    const bool ok = g == w && (w != "finite" || std::abs(got[i] - want[i]) <= relative * std::abs(want[i]) + absolute);
    if (!ok) {
      ++reported;
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << " (" << g << "), the reference " << want[i]
                    << " (" << w << ")";
    }
  }
}

std::vector<double> as_doubles(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// ---------------------------------------------------------------------------
// softmax: rows of 300 in blocks of 128, so that a row spans three blocks.

constexpr int kSoftmaxBlock = 128, kCols = 300;

/// Runs the library softmax over `rows` and checks it against the reference,
/// whose error bound is (cols + 16) u relative, as in the kernel's own tests.
void check_softmax(const std::vector<std::vector<float>>& rows, const std::string& what) {
  std::vector<float> x;
  for (const auto& row : rows) x.insert(x.end(), row.begin(), row.end());
  auto in = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(x.size());
  const int n = static_cast<int>(rows.size());
  kl::compile<kl::kernels::softmax<kl::f32, kSoftmaxBlock>>().launch(kl::Grid(n), in, out, kCols, kCols, kCols);
  const std::vector<double> exact = kl::kernels::softmax_reference(as_doubles(x), n, kCols);
  expect_same_kinds(out.to_host(), exact, (kCols + 16) * kU32, 0, what);
}

std::vector<float> random_row(std::uint64_t seed) { return random_values<float>(kCols, seed); }

TEST(SpecialValues, SoftmaxOfAMaskedOutPrefixIsDefined) {
  // Logits masked with -inf over the first two blocks (a causal or padding
  // mask), finite after them: the finite part's softmax, zeros before it.
  std::vector<float> row = random_row(1);
  for (int c = 0; c < 2 * kSoftmaxBlock + 5; ++c) row[c] = -kInf;
  std::vector<float> scattered = random_row(2);
  for (int c = 0; c < kCols; c += 3) scattered[c] = -kInf;
  check_softmax({row, scattered}, "softmax with -inf logits");
}

TEST(SpecialValues, SoftmaxOfRowsWithoutADefinedResultIsNaN) {
  std::vector<float> all_masked(kCols, -kInf), with_nan = random_row(3), with_inf = random_row(4);
  with_nan[200] = kNaN;
  with_inf[17] = kInf;  // inf - inf in the reference too: the whole row is NaN, as in PyTorch
  check_softmax({all_masked, with_nan, with_inf}, "softmax of undefined rows");
}

TEST(SpecialValues, SoftmaxOfHugeAndTinyLogits) {
  std::vector<float> huge = random_row(5), tiny = random_row(6);
  for (float& v : huge) v *= 3e38f;  // differences overflow to -inf: exp gives 0
  for (float& v : tiny) v *= std::numeric_limits<float>::denorm_min() * 1000;  // subnormal logits: about 1/300 each
  check_softmax({huge, tiny}, "softmax of huge and tiny logits");
}

// ---------------------------------------------------------------------------
// Layer norm and RMS norm of rows of 1000 (one tile) and 5000 (the tiled kernel).

struct NormCase {
  std::vector<float> row;
  std::string what;
};

/// Rows without a spread: a constant row normalises to the bias (its centred
/// values are exactly 0), a row of zeros to zeros; a row with one inf or NaN
/// has no mean and gives NaN where the reference does. Huge rows, whose f32
/// sums (of 1000 values of 1e36) or squares (of 1e20) overflow, have finite
/// statistics all the same: the kernels scale each row by a power of two.
std::vector<NormCase> norm_cases(std::int64_t n) {
  std::vector<float> constant(n, 7.25f), zeros(n, 0.0f), subnormal(n, std::numeric_limits<float>::denorm_min() * 3);
  // Random values in [-1, 1], scaled below.
  std::vector<float> huge_constant(n, 1e36f), huge = random_values<float>(n, 13, -1, 1);
  std::vector<float> near_max = random_values<float>(n, 14, -1, 1),
                     squares_overflow = random_values<float>(n, 15, -1, 1);
  std::vector<float> tiny = random_values<float>(n, 16, -1, 1);
  for (float& v : huge) v *= 1e36f;
  for (float& v : near_max) v *= 3e38f;  // x - mean may pass the largest float
  for (float& v : squares_overflow) v *= 1e20f;
  for (float& v : tiny) v *= std::numeric_limits<float>::denorm_min() * 1000;  // subnormal, squares underflow
  std::vector<float> with_inf = random_values<float>(n, 7), with_nan = random_values<float>(n, 8);
  std::vector<float> with_negative_inf = random_values<float>(n, 17);
  with_inf[n / 3] = kInf;
  with_nan[n - 1] = kNaN;
  with_negative_inf[n / 2] = -kInf;
  return {{constant, "a constant row"},
          {zeros, "a row of zeros"},
          {subnormal, "a subnormal constant row"},
          {tiny, "a row of subnormals"},
          {huge_constant, "a constant row of 1e36"},
          {huge, "a row of +-1e36"},
          {near_max, "a row of +-3e38"},
          {squares_overflow, "a row of +-1e20"},
          {with_inf, "a row with +inf"},
          {with_negative_inf, "a row with -inf"},
          {with_nan, "a row with NaN"}};
}

TEST(SpecialValues, LayerNormOfRowsWithoutSpreadOrWithInfAndNaN) {
  const double eps = 1e-5;
  for (const std::int64_t n : {1000, 5000}) {
    const std::vector<float> weight = random_values<float>(n, 9), bias = random_values<float>(n, 10);
    for (const NormCase& c : norm_cases(n)) {
      auto x = kl::Buffer<float>::from(c.row), w = kl::Buffer<float>::from(weight), b = kl::Buffer<float>::from(bias);
      kl::Buffer<float> y(n), mean(1), rstd(1);
      kl::kernels::layer_norm_forward_launch<float>(x, w, b, y, mean, rstd, 1, n, static_cast<float>(eps));
      const kl::kernels::LayerNormReference ref = kl::kernels::layer_norm_reference(c.row, weight, bias, 1, n, eps);
      // |centred| rstd is at most sqrt(n); a few roundings of that times |w|, then + b.
      expect_same_kinds(y.to_host(), ref.y, 8 * kU32, 8 * kU32 * std::sqrt(static_cast<double>(n)),
                        "layer norm of " + c.what + ", n = " + std::to_string(n));
    }
  }
}

TEST(SpecialValues, RmsNormOfRowsWithoutSpreadOrWithInfAndNaN) {
  const double eps = 1e-6;
  for (const std::int64_t n : {1000, 5000}) {
    const std::vector<float> weight = random_values<float>(n, 11);
    for (const NormCase& c : norm_cases(n)) {
      auto x = kl::Buffer<float>::from(c.row), w = kl::Buffer<float>::from(weight);
      kl::Buffer<float> y(n), rstd(1);
      kl::kernels::rms_norm_forward_launch<float>(x, w, y, rstd, 1, n, static_cast<float>(eps));
      const kl::kernels::RmsNormReference ref = kl::kernels::rms_norm_reference(c.row, weight, 1, n, eps);
      // The sum of n squares in f32: (n + 4) u relative on each output, and
      // subnormal outputs round to a multiple of the smallest subnormal, twice.
      expect_same_kinds(y.to_host(), ref.y, (n + 4) * kU32, 2 * std::numeric_limits<float>::denorm_min(),
                        "RMS norm of " + c.what + ", n = " + std::to_string(n));
    }
  }
}

// ---------------------------------------------------------------------------
// Dropout: p = 0 keeps every value, inf and NaN included; p near 1 scales the
// few kept values by about 1000 and drops inf and NaN to exactly 0.

void check_dropout(float p, const std::string& what) {
  constexpr int kBlock = 1024, n = 5000;
  std::vector<float> x = random_values<float>(n, 12);
  x[10] = kInf, x[11] = -kInf, x[12] = kNaN, x[13] = 3e38f, x[14] = std::numeric_limits<float>::denorm_min();
  auto in = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(n);
  const std::uint64_t seed = 1234;
  kl::compile<kl::kernels::dropout<kl::f32, kBlock>>().launch(kl::Grid(kl::cdiv(n, kBlock)), in, out, n, p,
                                                              static_cast<std::int64_t>(seed), 0);
  std::vector<double> want(n);
  const double scale = 1.0 / (1.0 - static_cast<double>(p));
  // The reference rounded to f32 once: 3e38 scaled by 1000 overflows to inf.
  for (int i = 0; i < n; ++i)
    want[i] = kl::kernels::dropout_keep_host(seed, static_cast<std::uint32_t>(i), p)
                  ? static_cast<double>(static_cast<float>(x[i] * scale))
                  : 0.0;
  // The kernel's scale and product round in f32, and the result once more (dropout.hpp's bound).
  expect_same_kinds(out.to_host(), want, 4 * kU32, 0, what);
}

TEST(SpecialValues, DropoutWithPZeroKeepsEveryValue) { check_dropout(0.0f, "dropout, p = 0"); }

TEST(SpecialValues, DropoutWithPNearOneScalesTheFewKept) { check_dropout(0.999f, "dropout, p = 0.999"); }

// ---------------------------------------------------------------------------
// Matmul with inf and NaN operands: +inf in a row of A, -inf in another, NaN
// in B, and a zero of B where the +inf meets it (inf * 0 is NaN); f16 inputs
// take the tensor-core path on the GPU devices.

template <class C, kl::kernels::Epilogue EPILOGUE>
void check_matmul_with_inf(const std::string& what) {
  constexpr int kBlock = 16, m = 40, n = 24, k = 48;
  std::vector<C> a = random_values<C>(m * k, 21), b = random_values<C>(k * n, 22);
  const std::vector<C> bias = random_values<C>(n, 23);
  a[3 * k + 5] = C(kInf);
  a[17 * k + 30] = C(-kInf);
  b[11 * n + 2] = C(kNaN);
  b[5 * n + 20] = C(0.0f);
  auto ba = kl::Buffer<C>::from(a), bb = kl::Buffer<C>::from(b), bbias = kl::Buffer<C>::from(bias);
  kl::Buffer<float> bc(m * n);
  const std::int64_t seed = 99;
  const int grid = kl::cdiv(m, kBlock) * kl::cdiv(n, kBlock);
  kl::compile<kl::kernels::matmul<kl::Scalar<C>, kl::f32, kBlock, kBlock, kBlock, 2, EPILOGUE>>().launch(
      kl::Grid(grid), ba, bb, bc, bbias, m, n, k, k, 1, n, 1, n, 1, 0.25f, seed, 0);
  const kl::kernels::MatmulProblem problem{.m = m,
                                           .n = n,
                                           .k = k,
                                           .epilogue = EPILOGUE,
                                           .p = 0.25f,
                                           .seed = static_cast<std::uint64_t>(seed),
                                           .offset = 0,
                                           .out_dtype = kl::ir::DType::f32};
  const auto ref = kl::kernels::matmul_reference(a, b, bias, problem);
  const std::vector<float> got = bc.to_host();
  const auto count = [&](const char* kind) {
    return std::count_if(ref.values.begin(), ref.values.end(), [&](double v) { return kind_of(v) == kind; });
  };
  ASSERT_GT(count("NaN"), 0) << what << ": the inputs must give NaN";
  ASSERT_GT(count("+inf") + count("-inf"), 0) << what << ": the inputs must give inf";
  expect_same_kinds(got, ref.values, 0, std::numeric_limits<double>::infinity(), what + ": kinds");
  // Where the reference is finite, its own bound applies.
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(ref.values[i])) continue;
    ASSERT_LE(std::abs(got[i] - ref.values[i]), ref.bounds[i]) << what << ": element " << i;
  }
}

/// Matmul of operands of huge and subnormal magnitude: row 2 of A is `huge`
/// times random values (f32: 1e30, whose products with B sum to finite
/// results; f16: 6e4), row 5 subnormal (f32: 1e-44 times random values, whose
/// products are subnormal too, so each rounding of the sum may be off by half
/// the smallest subnormal, absolutely; f16: 6e-8 times random values, products
/// exact in f32), and in f32 one element of row 9 of 1e38, whose products with
/// B (in [-4, 4]) overflow the f32 output in some columns: +-inf there, as the
/// reference rounded to f32 is. With the fused epilogue, GELU takes -inf to -0.
template <class C, kl::kernels::Epilogue EPILOGUE>
void check_matmul_with_huge_and_tiny(const std::string& what) {
  constexpr int kBlock = 16, m = 24, n = 40, k = 32;
  constexpr bool f32 = std::is_same_v<C, float>;
  const float huge = f32 ? 1e30f : 6e4f, tiny = f32 ? 1e-44f : 6e-8f;
  std::vector<C> a = random_values<C>(m * k, 31), b = random_values<C>(k * n, 32);
  const std::vector<C> bias = random_values<C>(n, 33);
  for (int t = 0; t < k; ++t) {
    a[2 * k + t] = C(static_cast<float>(a[2 * k + t]) * huge);
    a[5 * k + t] = C(static_cast<float>(a[5 * k + t]) * tiny);
  }
  if constexpr (f32) a[9 * k] = 1e38f;
  auto ba = kl::Buffer<C>::from(a), bb = kl::Buffer<C>::from(b), bbias = kl::Buffer<C>::from(bias);
  kl::Buffer<float> bc(m * n);
  const std::int64_t seed = 7;
  const float p = 0.25f;
  const int grid = kl::cdiv(m, kBlock) * kl::cdiv(n, kBlock);
  kl::compile<kl::kernels::matmul<kl::Scalar<C>, kl::f32, kBlock, kBlock, kBlock, 2, EPILOGUE>>().launch(
      kl::Grid(grid), ba, bb, bc, bbias, m, n, k, k, 1, n, 1, n, 1, p, seed, 0);
  // Before the epilogue but for the bias, to find the sums that overflow f32.
  kl::kernels::MatmulProblem problem{.m = m,
                                     .n = n,
                                     .k = k,
                                     .epilogue = {.bias = EPILOGUE.bias},
                                     .p = p,
                                     .seed = static_cast<std::uint64_t>(seed),
                                     .out_dtype = kl::ir::DType::f32};
  const auto sums = kl::kernels::matmul_reference(a, b, bias, problem);
  problem.epilogue = EPILOGUE;
  auto ref = kl::kernels::matmul_reference(a, b, bias, problem);
  int overflowing = 0;
  for (std::size_t i = 0; i < ref.values.size(); ++i) {
    if (i / n == 5) ref.bounds[i] += (k + 2) * static_cast<double>(std::numeric_limits<float>::denorm_min());
    // Dropout's scaling may overflow a finite f32 result too.
    if (std::isinf(static_cast<float>(ref.values[i]))) ref.values[i] = static_cast<float>(ref.values[i]);
    const double rounded = static_cast<float>(sums.values[i]);
    if (!std::isinf(rounded)) continue;
    ++overflowing;
    double y = rounded;
    if (EPILOGUE.gelu != kl::kernels::Gelu::none) y = kl::kernels::gelu_reference(y, EPILOGUE.gelu);
    const bool dropped = EPILOGUE.dropout && !kl::kernels::dropout_keep_host(seed, static_cast<std::uint32_t>(i), p);
    ref.values[i] = dropped ? 0.0 : EPILOGUE.dropout ? y / (1 - static_cast<double>(p)) : y;
  }
  if (f32) {
    ASSERT_GT(overflowing, 0) << what << ": row 9 must overflow somewhere";
  }
  const std::vector<float> got = bc.to_host();
  expect_same_kinds(got, ref.values, 0, std::numeric_limits<double>::infinity(), what + ": kinds");
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(ref.values[i]) || std::isinf(static_cast<float>(sums.values[i]))) continue;
    ASSERT_LE(std::abs(got[i] - ref.values[i]), ref.bounds[i]) << what << ": element " << i;
  }
}

TEST(SpecialValues, MatmulWithHugeAndSubnormalOperands) {
  check_matmul_with_huge_and_tiny<float, kl::kernels::Epilogue{}>("matmul f32");
  check_matmul_with_huge_and_tiny<kl::half, kl::kernels::Epilogue{}>("matmul f16");
  constexpr kl::kernels::Epilogue fused{.bias = true, .gelu = kl::kernels::Gelu::erf, .dropout = true};
  check_matmul_with_huge_and_tiny<float, fused>("matmul f32 + bias + GELU + dropout");
  check_matmul_with_huge_and_tiny<kl::half, fused>("matmul f16 + bias + GELU + dropout");
}

TEST(SpecialValues, MatmulWithInfAndNaNOperands) {
  check_matmul_with_inf<float, kl::kernels::Epilogue{}>("matmul f32");
  check_matmul_with_inf<kl::half, kl::kernels::Epilogue{}>("matmul f16");
  constexpr kl::kernels::Epilogue fused{.bias = true, .gelu = kl::kernels::Gelu::erf, .dropout = true};
  check_matmul_with_inf<float, fused>("matmul f32 + bias + GELU + dropout");
  check_matmul_with_inf<kl::half, fused>("matmul f16 + bias + GELU + dropout");
}

// ---------------------------------------------------------------------------
// Attention (f32, head_dim 64) with NaN, +-inf, huge and subnormal values where
// the rows see them; tests/kernels/attention_test.cpp checks that padded keys
// (key lengths), whatever they hold, change nothing.

using kl::kernels::AttentionShape;

/// Runs the library attention on q, k, v and checks O and LSE against the
/// reference: the same kinds, and finite values within the reference's bounds.
void check_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                     const AttentionShape& shape, const std::string& what) {
  constexpr int d = 64;
  constexpr kl::kernels::AttentionConfig config = kl::kernels::kAttentionFmaUnits<d>;
  auto bq = kl::Buffer<float>::from(q), bk = kl::Buffer<float>::from(k), bv = kl::Buffer<float>::from(v);
  kl::Buffer<float> bo(q.size()), blse(static_cast<std::size_t>(shape.batch * shape.heads * shape.seq));
  const auto launch = [&](auto kernel) {
    kernel.launch(kl::Grid(kl::cdiv(shape.seq, config.block_m), shape.batch * shape.heads), bq, bk, bv, bo, blse,
                  shape.seq, shape.heads, static_cast<float>(shape.sm_scale), shape.heads * shape.seq * d,
                  shape.seq * d, d);
  };
  const auto options = config.compile_options();
  if (shape.causal)
    launch(kl::compile<kl::kernels::attention<kl::f32, d, config.block_m, config.block_n, true>>(options));
  else launch(kl::compile<kl::kernels::attention<kl::f32, d, config.block_m, config.block_n, false>>(options));
  const auto want = kl::kernels::attention_reference(q, k, v, shape);
  const auto check = [&](const std::vector<float>& got, const std::vector<double>& values,
                         const std::vector<double>& bounds, const std::string& output) {
    expect_same_kinds(got, values, 0, std::numeric_limits<double>::infinity(), what + ": " + output + " kinds");
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!std::isfinite(values[i])) continue;
      ASSERT_LE(std::abs(got[i] - values[i]), bounds[i]) << what << ": " << output << " element " << i;
    }
  };
  check(bo.to_host(), want.o, want.o_bound, "O");
  check(blse.to_host(), want.lse, want.lse_bound, "LSE");
}

AttentionShape attention_shape(bool causal) {
  return {.batch = 1, .heads = 2, .seq = 50, .head_dim = 64, .causal = causal, .sm_scale = 0.125};
}

TEST(SpecialValues, AttentionWithNaNInfHugeAndSubnormalValues) {
  for (const bool causal : {false, true}) {
    const AttentionShape shape = attention_shape(causal);
    std::vector<float> q = random_values<float>(shape.elements(), 41), k = random_values<float>(shape.elements(), 42),
                       v = random_values<float>(shape.elements(), 43);
    constexpr int d = 64;
    // Key 0, which every row sees: NaN, +inf and -inf in columns 5, 9 and 11.
    // (Causal, a key's V row also meets the earlier rows of its diagonal block,
    // with weight 0: NaN or inf there would make them NaN; attention.hpp says so.)
    v[5] = kNaN;
    v[9] = kInf;
    v[11] = -kInf;
    for (int c = 0; c < d; ++c) {
      v[12 * d + c] *= std::numeric_limits<float>::denorm_min() * 100;  // key 12: subnormal values
      q[(50 + 20) * d + c] *= 1e30f;  // row 20 of head 1: huge scores, whose softmax is one-hot
    }
    check_attention(q, k, v, shape, causal ? "causal attention" : "attention");
  }
}

TEST(SpecialValues, AttentionWithInfiniteScores) {
  // +inf in key 20 gives +inf scores (NaN rows: inf - inf) where q's column 0
  // is positive and -inf scores (weight 0) where it is negative.
  for (const bool causal : {false, true}) {
    const AttentionShape shape = attention_shape(causal);
    std::vector<float> q = random_values<float>(shape.elements(), 44), k = random_values<float>(shape.elements(), 45),
                       v = random_values<float>(shape.elements(), 46);
    k[20 * 64] = kInf;
    k[(50 + 30) * 64 + 3] = -kInf;
    check_attention(q, k, v, shape, causal ? "causal attention" : "attention");
  }
}

}  // namespace
