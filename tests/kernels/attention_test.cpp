// Correctness of the attention kernel on the cpu device against the double
// reference: f16 and bf16 (and f32 in two of the variants), head_dim 64 and
// 128, causal and not, sequence lengths below, at and past the query block
// and the key block, several batches and heads of distinct data, O
// and LSE element by element within the reference's derived bound; scales
// of either sign and zero; a [batch, seq, heads, head_dim] layout to check
// that the strides, not the shape, place each head; and key lengths (key
// padding) of 0, all and some keys, with NaN and inf in the padded keys,
// which must change nothing.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/attention.hpp"

namespace {

namespace kl = kiln;
using kiln::kernels::attention;
using kiln::kernels::attention_reference;
using kiln::kernels::AttentionShape;
using kiln::test::expect_within;
using kiln::test::random_values;

// The tiles and warps of the tests are the library's configurations:
// kAttentionFmaUnits for f32, sm_80's (kAttentionSm80) for f16 and bf16, and
// sm_90a's (kAttentionSm90a, 128 rows by 64 keys) for f16 and bf16 cases
// marked so. The query and key blocks differ, so that a sequence length can
// leave a tail of each that the other does not have, but for f32's at
// head_dim 128 (both 32).

template <class C, int HEAD_DIM, bool CAUSAL, bool SM90A_CONFIG = false>
struct AttentionCase {
  using type = C;
  static constexpr int head_dim = HEAD_DIM;
  static constexpr bool causal = CAUSAL;
  static constexpr kiln::kernels::AttentionConfig config = SM90A_CONFIG ? kiln::kernels::kAttentionSm90a<HEAD_DIM>
                                                           : std::is_same_v<C, float>
                                                               ? kiln::kernels::kAttentionFmaUnits<HEAD_DIM>
                                                               : kiln::kernels::kAttentionSm80<HEAD_DIM>;
  static constexpr bool sm90a_config = SM90A_CONFIG;
};

template <class Case>
class Attention : public ::testing::Test {};
using AttentionCases = ::testing::Types<
    AttentionCase<kl::half, 64, true>, AttentionCase<kl::half, 64, false>, AttentionCase<kl::half, 128, true>,
    AttentionCase<kl::half, 128, false>, AttentionCase<kl::bfloat16, 64, true>, AttentionCase<kl::bfloat16, 64, false>,
    AttentionCase<kl::bfloat16, 128, true>, AttentionCase<kl::bfloat16, 128, false>, AttentionCase<float, 64, true>,
    AttentionCase<float, 128, false>, AttentionCase<kl::half, 64, true, true>,
    AttentionCase<kl::half, 128, false, true>, AttentionCase<kl::bfloat16, 128, true, true>>;
struct AttentionNames {
  template <class Case>
  static std::string GetName(int) {
    return std::string(kiln::ir::dtype_name(kl::dtype_v<typename Case::type>)) + "_d" + std::to_string(Case::head_dim) +
           (Case::causal ? "_causal" : "_full") + (Case::sm90a_config ? "_sm90a_config" : "");
  }
};
TYPED_TEST_SUITE(Attention, AttentionCases, AttentionNames);

/// Runs the kernel on q, k, v laid out with the given strides (batch, head,
/// seq) and returns O in the contiguous [batch, heads, seq, head_dim] order of
/// the reference, and LSE.
template <class Case>
std::pair<std::vector<typename Case::type>, std::vector<float>> run_attention(const std::vector<typename Case::type>& q,
                                                                              const std::vector<typename Case::type>& k,
                                                                              const std::vector<typename Case::type>& v,
                                                                              const AttentionShape& shape,
                                                                              int stride_batch, int stride_head,
                                                                              int stride_seq) {
  using C = typename Case::type;
  auto bq = kl::Buffer<C>::from(q), bk = kl::Buffer<C>::from(k), bv = kl::Buffer<C>::from(v);
  // Outputs start random, so that a row the kernel fails to store is noticed.
  auto bo = kl::Buffer<C>::from(random_values<C>(q.size(), 90));
  auto blse = kl::Buffer<float>::from(
      random_values<float>(static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq, 91));
  using T = kl::Scalar<C>;
  constexpr kiln::kernels::AttentionConfig config = Case::config;
  auto kernel =
      kl::compile<attention<T, Case::head_dim, config.block_m, config.block_n, Case::causal>>(config.compile_options());
  kernel.launch(kl::Grid(kl::cdiv(shape.seq, config.block_m), shape.batch * shape.heads), bq, bk, bv, bo, blse,
                shape.seq, shape.heads, static_cast<float>(shape.sm_scale), stride_batch, stride_head, stride_seq);
  return {bo.to_host(), blse.to_host()};
}

TYPED_TEST(Attention, MatchesTheReferenceAcrossBlockTails) {
  using C = typename TypeParam::type;
  constexpr int d = TypeParam::head_dim;
  // 1 and 17: one partial block of each kind; 64: whole key blocks (one of
  // 64 keys or two of 32); 100: a tail of 36 or 4 keys (and of 4 rows where
  // the query block is 32, f32 at head_dim 128); 129: tails of one row and one
  // key.
  for (int seq : {1, 17, 64, 100, 129}) {
    SCOPED_TRACE("seq " + std::to_string(seq));
    const AttentionShape shape{.batch = 2,
                               .heads = 3,
                               .seq = seq,
                               .head_dim = d,
                               .causal = TypeParam::causal,
                               .sm_scale = 1.0 / std::sqrt(static_cast<double>(d))};
    const auto q = random_values<C>(shape.elements(), 100 + seq);
    const auto k = random_values<C>(shape.elements(), 200 + seq);
    const auto v = random_values<C>(shape.elements(), 300 + seq);
    const auto [o, lse] = run_attention<TypeParam>(q, k, v, shape, seq * d * shape.heads, seq * d, d);
    const auto want = attention_reference(q, k, v, shape);
    expect_within(o, want.o, want.o_bound, "O");
    expect_within(lse, want.lse, want.lse_bound, "LSE");
  }
}

TYPED_TEST(Attention, StridesPlaceEachHead) {
  using C = typename TypeParam::type;
  constexpr int d = TypeParam::head_dim;
  const AttentionShape shape{.batch = 2,
                             .heads = 3,
                             .seq = 45,
                             .head_dim = d,
                             .causal = TypeParam::causal,
                             .sm_scale = 1.0 / std::sqrt(static_cast<double>(d))};
  const auto q = random_values<C>(shape.elements(), 401);
  const auto k = random_values<C>(shape.elements(), 402);
  const auto v = random_values<C>(shape.elements(), 403);
  // The same tensors stored as [batch, seq, heads, head_dim].
  const std::size_t row = static_cast<std::size_t>(d);
  auto interleaved_index = [&](std::size_t b, std::size_t h, std::size_t s) {
    return ((b * shape.seq + s) * shape.heads + h) * row;
  };
  auto contiguous_index = [&](std::size_t b, std::size_t h, std::size_t s) {
    return ((b * shape.heads + h) * shape.seq + s) * row;
  };
  auto interleave = [&](const std::vector<C>& x) {
    std::vector<C> out(x.size());
    for (std::size_t b = 0; b < static_cast<std::size_t>(shape.batch); ++b)
      for (std::size_t h = 0; h < static_cast<std::size_t>(shape.heads); ++h)
        for (std::size_t s = 0; s < static_cast<std::size_t>(shape.seq); ++s)
          for (std::size_t c = 0; c < row; ++c) out[interleaved_index(b, h, s) + c] = x[contiguous_index(b, h, s) + c];
    return out;
  };
  const auto [o_interleaved, lse] = run_attention<TypeParam>(interleave(q), interleave(k), interleave(v), shape,
                                                             shape.seq * shape.heads * d, d, shape.heads * d);
  std::vector<C> o(o_interleaved.size());
  for (std::size_t b = 0; b < static_cast<std::size_t>(shape.batch); ++b)
    for (std::size_t h = 0; h < static_cast<std::size_t>(shape.heads); ++h)
      for (std::size_t s = 0; s < static_cast<std::size_t>(shape.seq); ++s)
        for (std::size_t c = 0; c < row; ++c)
          o[contiguous_index(b, h, s) + c] = o_interleaved[interleaved_index(b, h, s) + c];
  const auto want = attention_reference(q, k, v, shape);
  expect_within(o, want.o, want.o_bound, "O");
  expect_within(lse, want.lse, want.lse_bound, "LSE");
}

TYPED_TEST(Attention, ScalesOfEitherSignAndZero) {
  using C = typename TypeParam::type;
  constexpr int d = TypeParam::head_dim;
  // A negative scale reaches the kernel's scores through Q's sign, and a zero
  // one weighs every visible key alike (O the mean of their V rows). 300
  // keys give blocks without a mask (before the diagonal, when causal) and
  // a masked tail block, whose -inf scores a zero scale must not turn into
  // NaN.
  for (double sm_scale : {-1.0 / std::sqrt(static_cast<double>(d)), -1.0, 0.0, -0.0}) {
    SCOPED_TRACE("sm_scale " + std::to_string(sm_scale));
    const AttentionShape shape{
        .batch = 1, .heads = 2, .seq = 300, .head_dim = d, .causal = TypeParam::causal, .sm_scale = sm_scale};
    const auto q = random_values<C>(shape.elements(), 801);
    const auto k = random_values<C>(shape.elements(), 802);
    const auto v = random_values<C>(shape.elements(), 803);
    const auto [o, lse] = run_attention<TypeParam>(q, k, v, shape, shape.heads * shape.seq * d, shape.seq * d, d);
    const auto want = attention_reference(q, k, v, shape);
    expect_within(o, want.o, want.o_bound, "O");
    expect_within(lse, want.lse, want.lse_bound, "LSE");
  }
}

/// Each LSE within its bound where the reference's is finite, and exactly
/// -inf where it is -inf (a row that sees no key).
void expect_lse(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& bound) {
  std::vector<float> got_finite;
  std::vector<double> want_finite, bound_finite;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "LSE " << i;
      continue;
    }
    got_finite.push_back(got[i]);
    want_finite.push_back(want[i]);
    bound_finite.push_back(bound[i]);
  }
  expect_within(got_finite, want_finite, bound_finite, "LSE");
}

TYPED_TEST(Attention, KeyLengthsHideThePaddedKeys) {
  using C = typename TypeParam::type;
  constexpr int d = TypeParam::head_dim;
  constexpr kiln::kernels::AttentionConfig config = TypeParam::config;
  constexpr int block_m = config.block_m;
  auto kernel = kl::compile<
      kiln::kernels::attention_with_key_lengths<kl::Scalar<C>, d, block_m, config.block_n, TypeParam::causal>>(
      config.compile_options());
  std::mt19937 rng(7);
  for (int seq : {17, 100, 129}) {
    SCOPED_TRACE("seq " + std::to_string(seq));
    // No key, every key, and two lengths drawn from [1, seq - 1].
    std::uniform_int_distribution<int> some(1, seq - 1);
    const AttentionShape shape{.batch = 4,
                               .heads = 2,
                               .seq = seq,
                               .head_dim = d,
                               .causal = TypeParam::causal,
                               .sm_scale = 1.0 / std::sqrt(static_cast<double>(d)),
                               .key_lengths = {0, seq, some(rng), some(rng)}};
    const auto q = random_values<C>(shape.elements(), 500 + seq);
    auto k = random_values<C>(shape.elements(), 600 + seq);
    auto v = random_values<C>(shape.elements(), 700 + seq);
    // The padded keys hold NaN and +-inf: read, or weighted by 0, they would
    // turn their rows into NaN.
    const float specials[3] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity()};
    const std::size_t head_size = static_cast<std::size_t>(seq) * d;
    for (std::size_t head = 0; head < static_cast<std::size_t>(shape.batch * shape.heads); ++head)
      for (std::size_t e = static_cast<std::size_t>(shape.key_lengths[head / shape.heads]) * d; e < head_size; ++e) {
        k[head * head_size + e] = C(specials[e % 3]);
        v[head * head_size + e] = C(specials[(e + 1) % 3]);
      }
    auto bq = kl::Buffer<C>::from(q), bk = kl::Buffer<C>::from(k), bv = kl::Buffer<C>::from(v);
    auto bo = kl::Buffer<C>::from(random_values<C>(q.size(), 92));
    auto blse = kl::Buffer<float>::from(random_values<float>(static_cast<std::size_t>(8 * seq), 93));
    auto lengths = kl::Buffer<std::int32_t>::from(shape.key_lengths);
    kernel.launch(kl::Grid(kl::cdiv(seq, block_m), shape.batch * shape.heads), bq, bk, bv, bo, blse, lengths, seq,
                  shape.heads, static_cast<float>(shape.sm_scale), shape.heads * seq * d, seq * d, d);
    const auto want = attention_reference(q, k, v, shape);
    // Rows of the batch without keys: O exactly 0 (their bound is 0).
    expect_within(bo.to_host(), want.o, want.o_bound, "O");
    expect_lse(blse.to_host(), want.lse, want.lse_bound);
  }
}

}  // namespace
