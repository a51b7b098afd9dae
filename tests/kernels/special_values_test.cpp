// NaN, ±inf, huge and tiny inputs through the sample kernels (softmax, layer
// norm, RMS norm, dropout, matmul with its epilogue): every output element is NaN, +inf, -inf or finite
// exactly where the double-precision reference's is, so no kernel turns a
// defined result into NaN (or hides one), and where the reference is defined
// the values agree within the kernels' usual bounds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "correctness/reference_support.hpp"
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
/// has no mean and gives NaN where the reference does.
std::vector<NormCase> norm_cases(std::int64_t n) {
  std::vector<float> constant(n, 7.25f), zeros(n, 0.0f), subnormal(n, std::numeric_limits<float>::denorm_min() * 3);
  std::vector<float> with_inf = random_values<float>(n, 7), with_nan = random_values<float>(n, 8);
  with_inf[n / 3] = kInf;
  with_nan[n - 1] = kNaN;
  return {{constant, "a constant row"},
          {zeros, "a row of zeros"},
          {subnormal, "a subnormal constant row"},
          {with_inf, "a row with +inf"},
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

TEST(SpecialValues, MatmulWithInfAndNaNOperands) {
  check_matmul_with_inf<float, kl::kernels::Epilogue{}>("matmul f32");
  check_matmul_with_inf<kl::half, kl::kernels::Epilogue{}>("matmul f16");
  constexpr kl::kernels::Epilogue fused{.bias = true, .gelu = kl::kernels::Gelu::erf, .dropout = true};
  check_matmul_with_inf<float, fused>("matmul f32 + bias + GELU + dropout");
  check_matmul_with_inf<kl::half, fused>("matmul f16 + bias + GELU + dropout");
}

}  // namespace
