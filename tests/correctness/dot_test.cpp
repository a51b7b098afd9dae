// Correctness of dot on the cpu device: 16x32 @ 32x8 tiles of f32, f16,
// bf16 and i8 with and without an accumulator, the K tail masked by
// zero-filled loads, tf32 and tf32x3 precision, and a tiled matmul kernel
// looping over K with a kl::Var accumulator for sizes that are not multiples
// of its tiles; and a dot chained to another (attention's P V) adding to the
// result of a dot that is not, whose warps split another way.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::dot_accumulator_t;
using kiln::test::expect_equal;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::random_values;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;

// One batch per program: out_acc = acc + a @ b and out_plain = a @ b, where
// only the first k_valid columns of a and rows of b are loaded (the rest of
// the K tile is zero-filled by the masked loads).
template <class C, int M, int N, int K, kl::Precision PRECISION>
void dot_kernel(P<C> a, P<C> b, P<dot_accumulator_t<C>> acc, P<dot_accumulator_t<C>> out_acc,
                P<dot_accumulator_t<C>> out_plain, kl::i32 k_valid) {
  auto batch = kl::program_id(0);
  auto m = kl::expand_dims<1>(kl::arange<M>());
  auto k_across = kl::expand_dims<0>(kl::arange<K>());
  auto k_down = kl::expand_dims<1>(kl::arange<K>());
  auto n = kl::expand_dims<0>(kl::arange<N>());
  auto ta = kl::load(a + batch * (M * K) + m * K + k_across, k_across < k_valid);
  auto tb = kl::load(b + batch * (K * N) + k_down * N + n, k_down < k_valid);
  auto c = batch * (M * N) + m * N + n;
  kl::store(out_acc + c, kl::dot(ta, tb, kl::load(acc + c), {.precision = PRECISION}));
  kl::store(out_plain + c, kl::dot(ta, tb, {.precision = PRECISION}));
}

template <class C, kl::Precision PRECISION>
struct DotCase {
  using type = C;
  static constexpr kl::Precision precision = PRECISION;
};

template <class Case>
class Dot : public ::testing::Test {};
// The dot operand dtypes of ir/OPS.md (f16, bf16, f32, i8), and both tf32 modes.
using DotCases = ::testing::Types<DotCase<float, kl::Precision::ieee>, DotCase<kl::half, kl::Precision::ieee>,
                                  DotCase<kl::bfloat16, kl::Precision::ieee>, DotCase<std::int8_t, kl::Precision::ieee>,
                                  DotCase<float, kl::Precision::tf32>, DotCase<float, kl::Precision::tf32x3>>;
struct DotNames {
  template <class Case>
  static std::string GetName(int) {
    static const char* precisions[] = {"ieee", "tf32", "tf32x3"};
    return std::string(kiln::ir::dtype_name(kl::dtype_v<typename Case::type>)) + "_" +
           precisions[static_cast<int>(Case::precision)];
  }
};
TYPED_TEST_SUITE(Dot, DotCases, DotNames);

/// f32 rounded to tf32 (10 explicit mantissa bits), to nearest even.
float round_to_tf32(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  return std::bit_cast<float>((bits + 0xFFFu + ((bits >> 13) & 1u)) & ~0x1FFFu);
}

/// Random f32 values none of which lies halfway between two tf32 values, so
/// that the reference does not depend on how the implementation breaks ties.
std::vector<float> tf32_safe_values(std::size_t n, std::uint64_t seed) {
  auto v = random_values<float>(n, seed);
  for (float& f : v) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
    if ((bits & 0x1FFFu) == 0x1000u) f = std::bit_cast<float>(bits ^ 1u);
  }
  return v;
}

TYPED_TEST(Dot, MaskedKTailWithAndWithoutAccumulator) {
  using C = typename TypeParam::type;
  using A = dot_accumulator_t<C>;
  constexpr kl::Precision precision = TypeParam::precision;
  constexpr int M = 16, N = 8, K = 32, batches = 3, k_valid = 27;
  std::vector<C> a, b;
  if constexpr (std::is_same_v<C, float>) {
    a = tf32_safe_values(batches * M * K, 51);
    b = tf32_safe_values(batches * K * N, 52);
  } else {
    a = random_values<C>(batches * M * K, 51, -4, 4);
    b = random_values<C>(batches * K * N, 52, -4, 4);
  }
  const auto acc = random_values<A>(batches * M * N, 53, -100, 100);
  auto ba = kl::Buffer<C>::from(a), bb = kl::Buffer<C>::from(b);
  auto bacc = kl::Buffer<A>::from(acc);
  kl::Buffer<A> out_acc(batches * M * N), out_plain(batches * M * N);
  kl::compile<dot_kernel<C, M, N, K, precision>>().launch(kl::Grid(batches), ba, bb, bacc, out_acc, out_plain, k_valid);

  // Products of f16/bf16 values (at most 11 significant bits each) and of
  // tf32-rounded values are exact in f32, and so is every i8 product in i32.
  // An f32 inner product of K terms plus an accumulator is then within
  // gamma_{K+1} * (|acc| + sum |a_k b_k|) of the exact value (f32 products add
  // one more rounding each, also covered by gamma_{K+1}); the double reference
  // adds at most gamma_{K+1} 2^-53 of the same. tf32x3 splits each f32 into
  // hi = tf32(x) and lo = tf32(x - hi) and drops lo*lo and the residuals below
  // lo: |x - hi - lo| <= 2^-22 |x|, |lo| <= 2^-11 |x|, so each product is off by
  // at most (2 * 2^-22 + 2^-22 + 2^-33) |ab| < 2^-20 |ab|, and its three
  // partial products make 3K roundings.
  auto input = [&](C v) {
    if constexpr (std::is_same_v<C, float>) return precision == kl::Precision::tf32 ? round_to_tf32(v) : v;
    else return v;
  };
  const double terms = precision == kl::Precision::tf32x3 ? 3.0 * K + 1 : K + 1.0;
  const double per_product = precision == kl::Precision::tf32x3 ? 0x1p-20 : 0.0;
  std::vector<double> want_acc, want_plain, bound_acc, bound_plain, ieee_plain;
  std::vector<A> exact_acc, exact_plain;
  for (int t = 0; t < batches; ++t)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double sum = 0, magnitude = 0, ieee = 0;
        for (int k = 0; k < k_valid; ++k) {
          const C av = a[(t * M + i) * K + k], bv = b[(t * K + k) * N + j];
          const double p = as_double(input(av)) * as_double(input(bv));
          sum += p;
          magnitude += std::abs(p);
          ieee += as_double(av) * as_double(bv);
        }
        const A c = acc[(t * M + i) * N + j];
        if constexpr (std::is_integral_v<C>) {
          exact_acc.push_back(static_cast<A>(c + static_cast<A>(sum)));
          exact_plain.push_back(static_cast<A>(sum));
        } else {
          const double g = gamma_bound(terms, 0x1p-24) + gamma_bound(terms, 0x1p-53);
          want_acc.push_back(c + sum);
          want_plain.push_back(sum);
          bound_acc.push_back(g * (std::abs(c) + magnitude) + per_product * magnitude);
          bound_plain.push_back(g * magnitude + per_product * magnitude);
          ieee_plain.push_back(ieee);
        }
      }
  if constexpr (std::is_integral_v<C>) {
    expect_equal(out_acc.to_host(), exact_acc, "dot with acc");
    expect_equal(out_plain.to_host(), exact_plain, "dot without acc");
  } else {
    expect_within(out_acc.to_host(), want_acc, bound_acc, "dot with acc");
    expect_within(out_plain.to_host(), want_plain, bound_plain, "dot without acc");
    if (precision == kl::Precision::tf32) {
      // The test must tell tf32 from ieee: most results differ from the
      // unrounded product by more than the accumulation bound.
      const auto got = out_plain.to_host();
      int distinguishable = 0;
      for (std::size_t e = 0; e < got.size(); ++e) distinguishable += std::abs(got[e] - ieee_plain[e]) > bound_plain[e];
      EXPECT_GT(distinguishable, static_cast<int>(got.size()) / 2)
          << "tf32 results are indistinguishable from ieee ones";
    }
  }
}

// C = A @ B for A M x K (row-major), B given as its transpose (N x K,
// row-major) and C M x N, one BM x BN tile per program of a 2-D grid, looping
// over K in steps of BK with masked tails in all three dimensions.
template <class C, int BM, int BN, int BK>
void matmul(P<C> a, P<C> b, P<float> c, kl::i32 m, kl::i32 n, kl::i32 k, kl::i32 stride_am, kl::i32 stride_ak,
            kl::i32 stride_bk, kl::i32 stride_bn, kl::i32 stride_cm) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BN + kl::arange<BN>());
  kl::Var acc = kl::zeros<kl::f32, BM, BN>();
  for (auto k0 : kl::range(0, k, BK)) {
    auto ka = kl::expand_dims<0>(k0 + kl::arange<BK>());
    auto kb = kl::expand_dims<1>(k0 + kl::arange<BK>());
    auto ta = kl::load(a + rows * stride_am + ka * stride_ak, (rows < m) & (ka < k));
    auto tb = kl::load(b + kb * stride_bk + cols * stride_bn, (kb < k) & (cols < n));
    acc = kl::dot(ta, tb, acc);
  }
  kl::store(c + rows * stride_cm + cols, acc, (rows < m) & (cols < n));
}

template <class C>
class TiledMatmul : public ::testing::Test {};
using MatmulTypes = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(TiledMatmul, MatmulTypes, kiln::test::DTypeNames);

TYPED_TEST(TiledMatmul, SizesNotMultiplesOfTheTiles) {
  using C = TypeParam;
  constexpr int BM = 16, BN = 16, BK = 16;
  for (const auto [m, n, k] : {std::array<int, 3>{37, 29, 45}, std::array<int, 3>{5, 40, 17}}) {
    const auto a = random_values<C>(static_cast<std::size_t>(m) * k, 61 + m);
    const auto bt = random_values<C>(static_cast<std::size_t>(n) * k, 62 + n);
    auto ba = kl::Buffer<C>::from(a), bb = kl::Buffer<C>::from(bt);
    auto out = kl::Buffer<float>::from(random_values<float>(static_cast<std::size_t>(m) * n, 63));
    kl::compile<matmul<C, BM, BN, BK>>().launch(kl::Grid(kl::cdiv(m, BM), kl::cdiv(n, BN)), ba, bb, out, m, n, k, k, 1,
                                                1, k, n);
    // Inner products of k terms: within gamma_k of the exact value (plus the
    // double reference's own gamma_k 2^-53), relative to sum |a b|.
    const kiln::test::InnerProducts want = kiln::test::inner_products(a, bt, m, n, k, 1, static_cast<std::size_t>(k));
    std::vector<double> bound;
    for (double magnitude : want.magnitudes)
      bound.push_back((gamma_bound(k, 0x1p-24) + gamma_bound(k, 0x1p-53)) * magnitude);
    expect_within(out.to_host(), want.sums, bound,
                  ("matmul " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k)).c_str());
  }
}

// out = A @ B + S @ V with S = Q @ K^T rounded to C, all of one 64 x 64
// (or 64 x 32) tile: the first dot, chained to none, splits its 4 warps
// 2 x 2 on tensor cores; the last, whose a comes from another dot, keeps them
// on whole rows (4 x 1) and adds to the first's result, which it reads and
// leaves in the first's layout.
template <class C>
void chained_onto_unchained(P<C> a, P<C> b, P<C> q, P<C> kt, P<C> v, P<float> out) {
  constexpr int M = 64, N = 64, K = 32, J = 32;
  auto rows = kl::expand_dims<1>(kl::arange<M>());
  auto cols = kl::expand_dims<0>(kl::arange<N>());
  auto k_across = kl::expand_dims<0>(kl::arange<K>());
  auto k_down = kl::expand_dims<1>(kl::arange<K>());
  auto j_across = kl::expand_dims<0>(kl::arange<J>());
  auto j_down = kl::expand_dims<1>(kl::arange<J>());
  auto first = kl::dot(kl::load(a + rows * K + k_across), kl::load(b + k_down * N + cols));
  auto scores = kl::dot(kl::load(q + rows * K + k_across), kl::load(kt + k_down * J + j_across));
  auto both = kl::dot(kl::cast<kl::Scalar<C>>(scores), kl::load(v + j_down * N + cols), first);
  kl::store(out + rows * N + cols, both);
}

TYPED_TEST(TiledMatmul, AChainedDotAddsToTheResultOfOneThatIsNot) {
  using C = TypeParam;
  constexpr int M = 64, N = 64, K = 32, J = 32;
  const auto a = random_values<C>(M * K, 64), b = random_values<C>(K * N, 65), v = random_values<C>(J * N, 66);
  // Small integers in Q and K^T, so that S is exact in C and its rounding adds nothing.
  auto integers = [](std::size_t count, std::uint64_t seed) {
    std::vector<C> values = random_values<C>(count, seed, -2, 2);
    for (C& value : values) value = kiln::test::from_double<C>(std::round(as_double(value)));
    return values;
  };
  const auto q = integers(M * K, 67), kt = integers(K * J, 68);
  auto out = kl::Buffer<float>::from(random_values<float>(M * N, 69));
  kl::compile<chained_onto_unchained<C>>().launch(kl::Grid(1), kl::Buffer<C>::from(a), kl::Buffer<C>::from(b),
                                                  kl::Buffer<C>::from(q), kl::Buffer<C>::from(kt),
                                                  kl::Buffer<C>::from(v), out);
  const kiln::test::InnerProducts ab = kiln::test::inner_products(a, b, M, N, K, N, 1);
  const kiln::test::InnerProducts s = kiln::test::inner_products(q, kt, M, J, K, J, 1);
  std::vector<double> want, bound;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = ab.sums[i * N + j], magnitude = ab.magnitudes[i * N + j];
      for (int t = 0; t < J; ++t) {
        const double p = s.sums[i * J + t] * as_double(v[t * N + j]);
        sum += p;
        magnitude += std::abs(p);
      }
      want.push_back(sum);
      // K + J terms in f32 (the products of C values are exact in f32; f32
      // inputs round each), plus the double reference's own rounding.
      bound.push_back((gamma_bound(K + J + 1, 0x1p-24) + gamma_bound(K + J, 0x1p-53)) * magnitude);
    }
  expect_within(out.to_host(), want, bound, "A @ B + S @ V");
}

}  // namespace
