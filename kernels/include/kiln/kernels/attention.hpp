// Attention forward in the FlashAttention style: O = softmax(Q K^T * scale
// [+ causal mask] [+ key padding mask]) V and the log-sum-exp of each query
// row's scaled scores, for Q, K, V, O of shape [batch, heads, seq, head_dim],
// optionally with each batch's number of valid keys. One program per
// block of query rows of one (batch, head) loops over the keys block by
// block with an online softmax, so the seq x seq score matrix never exists.
// Also the double reference with a per-element error bound.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <vector>

#include "kiln/kernels/accuracy.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

namespace attention_detail {

inline constexpr double negative_infinity = -std::numeric_limits<double>::infinity();

/// The running state of one block of query rows: the maximum score seen so far
/// (in log2 units), the sum of exp2(score - maximum), and the accumulator of
/// exp2(score - maximum) V.
template <int BLOCK_M, int HEAD_DIM>
struct OnlineSoftmax {
  kl::Var<kl::Tile<kl::f32, BLOCK_M>> row_max = kl::full<kl::f32, BLOCK_M>(negative_infinity);
  kl::Var<kl::Tile<kl::f32, BLOCK_M>> row_sum = kl::zeros<kl::f32, BLOCK_M>();
  kl::Var<kl::Tile<kl::f32, BLOCK_M, HEAD_DIM>> acc = kl::zeros<kl::f32, BLOCK_M, HEAD_DIM>();
};

/// Folds the keys [start_n, start_n + BLOCK_N) into `state`. MASKED: some of
/// these keys lie at or past `keys_end` (the visible keys) or (CAUSAL) after some
/// of the rows; their scores become -inf and their K and V rows are not read
/// (V reads 0, so that 0 * V adds exactly nothing). Unmasked blocks skip the
/// compares, which is what most blocks are.
template <bool MASKED, bool CAUSAL, int BLOCK_N, class T, int BLOCK_M, int HEAD_DIM, class Rows, class Dims,
          class QTile, class Scale>
void attend_block(OnlineSoftmax<BLOCK_M, HEAD_DIM>& state, kl::Ptr<T> k_head, kl::Ptr<T> v_head, const QTile& q_tile,
                  const Rows& rows, const Dims& dims, kl::i32 start_n, kl::i32 keys_end, kl::i32 stride_seq,
                  const Scale& qk_scale) {
  auto keys = start_n + kl::arange<BLOCK_N>();
  auto keys_across = kl::expand_dims<0>(keys);                                 // [1, BLOCK_N]
  auto keys_down = kl::expand_dims<1>(keys);                                   // [BLOCK_N, 1]
  auto k_ptrs = k_head + keys_across * stride_seq + kl::expand_dims<1>(dims);  // K^T: [HEAD_DIM, BLOCK_N]
  auto v_ptrs = v_head + keys_down * stride_seq + kl::expand_dims<0>(dims);    // V: [BLOCK_N, HEAD_DIM]
  // The scores of unmasked blocks stay unscaled: the scale joins the
  // exponent's fma, one instruction per score instead of a multiply and a
  // subtraction. As qk_scale >= 0, the scaled row maximum is the maximum of
  // the scaled scores, bit for bit (rounding is monotone). Masked blocks
  // scale first, since -inf * 0 would be NaN.
  auto scores = [&] {
    if constexpr (MASKED) {
      auto in_seq = keys_across < keys_end;
      auto s = kl::dot(q_tile, kl::load(k_ptrs, in_seq)) * qk_scale;
      if constexpr (CAUSAL) return kl::where(in_seq & (keys_across <= kl::expand_dims<1>(rows)), s, negative_infinity);
      else return kl::where(in_seq, s, negative_infinity);
    } else {
      return kl::dot(q_tile, kl::load(k_ptrs));
    }
  }();
  auto v_tile = [&] {
    if constexpr (MASKED) return kl::load(v_ptrs, keys_down < keys_end);
    else return kl::load(v_ptrs);
  }();
  // [book:update]
  auto block_max = [&] {
    if constexpr (MASKED) return kl::max(scores, kl::axis<1>);
    else return kl::max(scores, kl::axis<1>) * qk_scale;
  }();
  auto new_max = kl::maximum(state.row_max, block_max);
  // A row with no visible key so far keeps a -inf maximum, and exp2(-inf -
  // -inf) is NaN: take its exponents relative to 0 instead, so its weights stay
  // 0. With the masks here every row that sees a key at all sees key 0 in its
  // first block; the guard keeps a row whose keys are all masked free of NaN
  // all the same.
  auto base = kl::where(new_max == negative_infinity, 0.0, new_max);
  // The weights through fast_exp2: one below 2^-126 (of a row sum of at
  // least 1) is 0, as in Triton's exp2, which spares the GPU the rescaling of
  // subnormal results in the per-element work. The rescale factors, one per
  // row, keep exp2 (with both flushing, ptxas spills at sm_90a's cap of 128
  // registers with key lengths at head_dim 64).
  auto rescale = kl::exp2(state.row_max - base);
  auto p = [&] {
    if constexpr (MASKED) return kl::fast_exp2(scores - kl::expand_dims<1>(base));
    else return kl::fast_exp2(kl::fma(scores, qk_scale, -kl::expand_dims<1>(base)));
  }();
  state.row_sum = state.row_sum * rescale + kl::sum(p, kl::axis<1>);
  state.acc = kl::dot(kl::cast<T>(p), v_tile, state.acc * kl::expand_dims<1>(rescale));
  state.row_max = new_max;
  // [/book:update]
}

}  // namespace attention_detail

/// One configuration of attention: query rows per program (BLOCK_M), keys
/// per block (BLOCK_N), and the warps, software-pipelining stages and
/// register cap (CompileOptions::max_registers; 0: ptxas chooses) it is
/// compiled with.
struct AttentionConfig {
  int block_m, block_n, num_warps, num_stages;
  int max_registers = 0;

  CompileOptions compile_options() const {
    CompileOptions options;
    options.num_warps = num_warps;
    options.num_stages = num_stages;
    options.max_registers = max_registers;
    return options;
  }
};

/// The configuration for f16 and bf16 on sm_80 and every target but
/// sm_90a, on tensor cores (mma.sync): 128 query rows at 8 warps, so that
/// each warp holds 16 whole rows of S and O. Then Q and P reach their A
/// fragments inside each thread (P from S's accumulator, as
/// FlashAttention-2 does) and the row statistics need no other warp; where
/// 32 rows (warps split along the keys) staged Q and P through shared
/// memory in every iteration (61 shared accesses and 9 barriers per 16
/// mma.sync).
/// - Keys per block: 64 at head_dim 64, as Triton's configurations have:
///   the per-block work of the online softmax (the rescale of O, the row
///   statistics) is paid half as often as with 32: the loop holds 5.8 SASS
///   instructions per mma.sync, where 32 keys take 7.5 (Triton's 128 x 64
///   tiles at 4 warps: 5.3). At head_dim 128, 32: 64 keys spill there (8
///   bytes; 112 causal).
/// - 3 stages: K and V arrive by cp.async two iterations ahead, with one
///   barrier per iteration.
/// ptxas -v (sm_80, CUDA 13), on the facts of a launch on contiguous
/// buffers, without spills: head_dim 128 255 registers (key lengths too),
/// head_dim 64 179 (causal 192; with key lengths 185 and 193): one program
/// per SM either way, as 138 registers at 32 keys had.
template <int HEAD_DIM>
inline constexpr AttentionConfig kAttentionSm80{
    .block_m = 128, .block_n = HEAD_DIM <= 64 ? 64 : 32, .num_warps = 8, .num_stages = 3};

/// The configuration for f32, on the FMA units on every target: 32 keys
/// per block, 8 warps, and the most query rows whose kernel fits in
/// registers without spilling at 8 warps, on the facts of a launch on
/// contiguous buffers, for sm_80 and sm_90a, causal and not
/// (tests/codegen/dot_test.cpp checks it): 128 at head_dim 64, 32 at 128
/// (64 rows spill). num_stages is the default 3 and changes nothing here:
/// the pipeliner leaves dots on the FMA units alone (software_pipeline.cpp),
/// whose thousands of FMAs per iteration hide their loads.
template <int HEAD_DIM>
inline constexpr AttentionConfig kAttentionFmaUnits{
    .block_m = HEAD_DIM <= 64 ? 128 : 32, .block_n = 32, .num_warps = 8, .num_stages = 3};

/// The configuration for f16 and bf16 on sm_90a, where both dots run on
/// wgmma (no GPU has timed it yet; the first run on one must compare it
/// with Triton's fused attention and with the other block of keys):
/// - 128 query rows at 8 warps: each warpgroup's 64 rows take S = Q K^T as
///   wgmma m64nBLOCK_N (Q from registers) and O += P V as m64nHEAD_DIM (P
///   from registers), K and V read by the tensor cores from their rings.
/// - 64 keys per block, as Triton's Hopper configurations have, halving the
///   per-block softmax work and barriers of 32. (At head_dim 64 the key
///   offsets and the head-dimension offsets are then one arange<64>, which
///   the K^T and V copies and the output need in different layouts; code
///   generation computes it again in each (rematerialize.hpp) instead of
///   converting it through shared memory every iteration.)
/// - 3 stages: K and V rings of 96 KiB at head_dim 128 (the pipeliner's
///   budget), 48 KiB at 64.
/// - ptxas (sm_90a, CUDA 13), without spills: head_dim 128 234 registers
///   (causal 252; 238 with key lengths), head_dim 64 128. Above 128 a
///   program of 8 warps has an SM's registers to itself, and uncapped ptxas
///   gives the causal head_dim 64 kernel 159: capped at 128 it fits them
///   without spills, two programs per SM as every other head_dim 64 variant
///   (dot_test.cpp checks it).
template <int HEAD_DIM>
inline constexpr AttentionConfig kAttentionSm90a{
    .block_m = 128, .block_n = 64, .num_warps = 8, .num_stages = 3, .max_registers = HEAD_DIM <= 64 ? 128 : 0};

namespace attention_detail {

/// One program of either kernel below; the keys [0, keys) of the head are
/// visible (keys = seq without key lengths). KEY_LENGTHS: keys may be less
/// than seq, so the causal kernel's keys before its rows may also need a mask.
template <class T, int HEAD_DIM, int BLOCK_M, int BLOCK_N, bool CAUSAL, bool KEY_LENGTHS>
void attention_program(kl::Ptr<T> q, kl::Ptr<T> k, kl::Ptr<T> v, kl::Ptr<T> o, kl::Ptr<kl::f32> lse, kl::i32 seq,
                       kl::i32 keys, kl::i32 heads, kl::f32 sm_scale, kl::i32 stride_batch, kl::i32 stride_head,
                       kl::i32 stride_seq) {
  static_assert(BLOCK_M % BLOCK_N == 0, "attention: BLOCK_M must be a multiple of BLOCK_N");
  auto start_m = kl::program_id(0) * BLOCK_M;
  auto batch_head = kl::program_id(1);
  auto head_offset = (batch_head / heads) * stride_batch + (batch_head % heads) * stride_head;
  auto rows = start_m + kl::arange<BLOCK_M>();
  auto dims = kl::arange<HEAD_DIM>();
  auto row_ptrs = kl::expand_dims<1>(rows) * stride_seq + kl::expand_dims<0>(dims);  // [BLOCK_M, HEAD_DIM]
  auto row_mask = kl::expand_dims<1>(rows < seq);
  // Rows past seq read zeros: their scores are finite and never stored.
  auto q_loaded = kl::load(q + head_offset + row_ptrs, row_mask);
  auto k_head = k + head_offset;
  auto v_head = v + head_offset;
  // exp2 instead of exp: log2(e) is folded into the scale once. A negative
  // scale moves its sign into Q (negation is exact), so that qk_scale >= 0.
  auto scale = sm_scale * std::numbers::log2e;
  auto q_tile = kl::where(scale < 0.0, -q_loaded, q_loaded);
  auto qk_scale = kl::abs(scale);
  OnlineSoftmax<BLOCK_M, HEAD_DIM> state;
  // [book:loops]
  if constexpr (CAUSAL) {
    // Keys before start_m are visible to every row of the block; without key
    // lengths they all lie inside seq. The diagonal blocks need both masks,
    // and so does the block of a key length that ends before the diagonal.
    auto unmasked_end = [&] {
      if constexpr (KEY_LENGTHS) return kl::minimum(start_m, keys / BLOCK_N * BLOCK_N);
      else return start_m;
    }();
    for (auto start_n : kl::range(0, unmasked_end, BLOCK_N))
      attend_block<false, true, BLOCK_N>(state, k_head, v_head, q_tile, rows, dims, start_n, keys, stride_seq,
                                         qk_scale);
    for (auto start_n : kl::range(unmasked_end, kl::minimum(start_m + BLOCK_M, keys), BLOCK_N))
      attend_block<true, true, BLOCK_N>(state, k_head, v_head, q_tile, rows, dims, start_n, keys, stride_seq, qk_scale);
  } else {
    auto full_blocks_end = keys / BLOCK_N * BLOCK_N;
    for (auto start_n : kl::range(0, full_blocks_end, BLOCK_N))
      attend_block<false, false, BLOCK_N>(state, k_head, v_head, q_tile, rows, dims, start_n, keys, stride_seq,
                                          qk_scale);
    for (auto start_n : kl::range(full_blocks_end, keys, BLOCK_N))
      attend_block<true, false, BLOCK_N>(state, k_head, v_head, q_tile, rows, dims, start_n, keys, stride_seq,
                                         qk_scale);
  }
  // [/book:loops]
  // [book:finish]
  // A row that saw no visible key has sum 0: divide by 1 so that its output
  // is 0 (and its LSE -inf) rather than NaN.
  auto row_sum = kl::where(state.row_sum == 0.0, 1.0, state.row_sum);
  kl::store(o + head_offset + row_ptrs, state.acc / kl::expand_dims<1>(row_sum), row_mask);
  auto row_lse = state.row_max * std::numbers::ln2 + kl::log(row_sum);
  kl::store(lse + batch_head * seq + rows, row_lse, rows < seq);
  // [/book:finish]
}

}  // namespace attention_detail

/// Attention forward. q, k, v, o: [batch, heads, seq, HEAD_DIM] with the given
/// strides of the batch, head and seq axes (one layout for all four; head_dim
/// contiguous). lse: [batch, heads, seq] f32, contiguous: the natural log of
/// sum_j exp(sm_scale q_i . k_j) over the keys each row sees. Grid:
/// (cdiv(seq, BLOCK_M), batch * heads). CAUSAL: row i sees keys 0..i; key
/// blocks above the diagonal are never visited. BLOCK_M must be a multiple of
/// BLOCK_N so that the causal diagonal starts on a key block boundary. In a
/// block on the diagonal, a key's V row meets the rows before it with weight
/// 0, in one dot: a NaN or inf in it makes those rows NaN (as in FlashAttention
/// and in PyTorch's P V), though they do not see the key.
template <class T, int HEAD_DIM, int BLOCK_M, int BLOCK_N, bool CAUSAL>
void attention(kl::Ptr<T> q, kl::Ptr<T> k, kl::Ptr<T> v, kl::Ptr<T> o, kl::Ptr<kl::f32> lse, kl::i32 seq, kl::i32 heads,
               kl::f32 sm_scale, kl::i32 stride_batch, kl::i32 stride_head, kl::i32 stride_seq) {
  attention_detail::attention_program<T, HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, false>(
      q, k, v, o, lse, seq, seq, heads, sm_scale, stride_batch, stride_head, stride_seq);
}

/// Attention forward with key padding: as `attention`, and key_lengths
/// ([batch] i32) gives the number of valid keys of each batch, so that a query
/// row of batch b sees only keys j < key_lengths[b] (and, CAUSAL, j <= its own
/// position: the mask is aligned at the top left, as PyTorch's key padding mask
/// with a causal mask is). Keys at or past the length are neither read nor
/// weighted: whatever K and V hold there, NaN or inf included, changes no
/// output. Lengths are clamped to [0, seq]. A query row that sees no key (its
/// batch's length is 0) gets O = 0 and LSE = -inf, FlashAttention's
/// convention; PyTorch's scaled_dot_product_attention gives NaN for such a row
/// on its math path (the softmax of a row of -inf).
template <class T, int HEAD_DIM, int BLOCK_M, int BLOCK_N, bool CAUSAL>
void attention_with_key_lengths(kl::Ptr<T> q, kl::Ptr<T> k, kl::Ptr<T> v, kl::Ptr<T> o, kl::Ptr<kl::f32> lse,
                                kl::Ptr<kl::i32> key_lengths, kl::i32 seq, kl::i32 heads, kl::f32 sm_scale,
                                kl::i32 stride_batch, kl::i32 stride_head, kl::i32 stride_seq) {
  auto keys = kl::clamp(kl::load(key_lengths + kl::program_id(1) / heads), 0, seq);
  attention_detail::attention_program<T, HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, true>(
      q, k, v, o, lse, seq, keys, heads, sm_scale, stride_batch, stride_head, stride_seq);
}

/// Shape and parameters of one attention call.
struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int seq = 1;
  int head_dim = 64;
  bool causal = true;
  double sm_scale = 0.125;
  std::vector<int> key_lengths{};  // valid keys of each batch (attention_with_key_lengths); empty: all seq
  std::size_t elements() const { return static_cast<std::size_t>(batch) * heads * seq * head_dim; }
};

/// The double reference and how far the kernel may be from it, element by element.
struct AttentionReference {
  std::vector<double> o, lse;
  std::vector<double> o_bound, lse_bound;  // |kernel - reference| may reach these
};

/// O and LSE in double from the plain softmax(Q K^T * scale [+ causal mask]
/// [+ key padding mask]) V of contiguous [batch, heads, seq, head_dim] inputs
/// stored as C, and a bound on the error of the kernel run on the same inputs
/// (C is its input dtype). Masked keys are never read, whatever they hold; a
/// row without a visible key has O = 0 (bound 0) and LSE = -inf, as the
/// kernels define it.
///
/// The bound (first order; the factor 1.01 covers the second-order terms):
/// inputs are exact (both sides read the same C values). Per query row i let
/// a_ij = |scale| sum_d |q_id k_jd|, A = max_j a_ij over the visible keys (so
/// every score and every difference of two scores is within 2A), w_ij the
/// exact softmax weights, M_i = sum_j w_ij |v_j| and u = 2^-24 (f32).
/// - Scores: an f32 dot of head_dim products (exact for f16/bf16, one rounding
///   each for f32), times the rounded scale*log2(e): within gamma_{d+4} a_ij.
/// - Each unnormalised weight exp2(x_j - m) is reached through one subtraction
///   x_j - m and a chain of rescalings exp2(m_old - m_new) whose arguments add
///   up to at most 2A log2(e): the subtractions' roundings move it by at most
///   2 u A (relative, after the factor ln 2) each way, 4 u A in all; every
///   exp2 (at most seq + 1 of them on a chain) is within 4 u; the products by
///   the rescale factors (at most seq) and the sums of seq terms into the row
///   sum and the accumulator add gamma_{6 seq + 4}. So every weight, in the sum
///   and in the accumulator alike, carries a relative error of at most
///   rho = (gamma_{d+4} + 4 u) A + gamma_{6 seq + 4}.
/// - P is rounded to C before the P V dot: relative u_C, plus an absolute
///   error tiny_C per weight where it underflows (half f16's smallest
///   subnormal, 2^-25; for bf16 and f32, 2^-126, which also covers a weight
///   fast_exp2 flushes to zero), against weights of at most 1 and a row sum
///   of at least 1.
/// - acc / l, then the rounding of O to C: u + u_C relative.
/// Hence |O~ - O| <= 1.01 ((rho + u_C) M + (rho + u + u_C) |O| + seq tiny_C max|v|).
/// LSE = m ln 2 + log(l): log of the row sum shifts by at most rho; the
/// products and sums around it (m ln 2, log, the final add) round values of
/// size at most A + log(seq), 4 u of that: |LSE~ - LSE| <= 1.01 (rho + 4 u (A + log seq)).
template <class C>
AttentionReference attention_reference(const std::vector<C>& q, const std::vector<C>& k, const std::vector<C>& v,
                                       const AttentionShape& shape) {
  const int seq = shape.seq, d = shape.head_dim;
  const double u = unit_roundoff(ir::DType::f32);
  const double u_c = unit_roundoff(dtype_v<C>);
  const double tiny_c = dtype_v<C> == ir::DType::f16 ? 0x1p-25 : 0x1p-126;
  auto gamma = [u](double n) { return n * u / (1 - n * u); };
  auto at = [](const std::vector<C>& x, std::size_t i) { return static_cast<double>(static_cast<float>(x[i])); };
  AttentionReference ref;
  ref.o.resize(shape.elements());
  ref.o_bound.resize(shape.elements());
  ref.lse.resize(static_cast<std::size_t>(shape.batch) * shape.heads * seq);
  ref.lse_bound.resize(ref.lse.size());
  std::vector<double> scores(seq), weights(seq);
  for (std::size_t head = 0; head < static_cast<std::size_t>(shape.batch) * shape.heads; ++head) {
    const std::size_t base = head * seq * d;
    const int keys = shape.key_lengths.empty() ? seq : std::clamp(shape.key_lengths[head / shape.heads], 0, seq);
    double v_max = 0;
    for (std::size_t e = base; e < base + static_cast<std::size_t>(keys) * d; ++e)
      v_max = std::max(v_max, std::abs(at(v, e)));
    for (int i = 0; i < seq; ++i) {
      const int visible = std::min(shape.causal ? i + 1 : seq, keys);
      double max_score = -std::numeric_limits<double>::infinity(), max_magnitude = 0;
      for (int j = 0; j < visible; ++j) {
        double s = 0, a = 0;
        for (int c = 0; c < d; ++c) {
          const double p =
              at(q, base + static_cast<std::size_t>(i) * d + c) * at(k, base + static_cast<std::size_t>(j) * d + c);
          s += p;
          a += std::abs(p);
        }
        scores[j] = s * shape.sm_scale;
        max_score = std::max(max_score, scores[j]);
        max_magnitude = std::max(max_magnitude, a * std::abs(shape.sm_scale));
      }
      double sum = 0;
      for (int j = 0; j < visible; ++j) {
        weights[j] = std::exp(scores[j] - max_score);
        sum += weights[j];
      }
      const double rho = (gamma(d + 4) + 4 * u) * max_magnitude + gamma(6.0 * seq + 4);
      const std::size_t row = base + static_cast<std::size_t>(i) * d;
      for (int c = 0; c < d; ++c) {
        double out = 0, magnitude = 0;
        for (int j = 0; j < visible; ++j) {
          const double vj = at(v, base + static_cast<std::size_t>(j) * d + c);
          out += weights[j] / sum * vj;
          magnitude += weights[j] / sum * std::abs(vj);
        }
        ref.o[row + c] = out;
        ref.o_bound[row + c] =
            1.01 * ((rho + u_c) * magnitude + (rho + u + u_c) * std::abs(out) + seq * tiny_c * v_max);
      }
      const std::size_t lse_index = head * seq + i;
      ref.lse[lse_index] = max_score + std::log(sum);
      ref.lse_bound[lse_index] = 1.01 * (rho + 4 * u * (max_magnitude + std::log(static_cast<double>(seq))));
    }
  }
  return ref;
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::attention, "q", "k", "v", "o", "lse", "seq", "heads", "sm_scale", "stride_batch",
                "stride_head", "stride_seq");
KILN_PARAMETERS(kiln::kernels::attention_with_key_lengths, "q", "k", "v", "o", "lse", "key_lengths", "seq", "heads",
                "sm_scale", "stride_batch", "stride_head", "stride_seq");
