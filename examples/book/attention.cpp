// Chapter 15, "Attention with the online softmax": O = softmax(Q K^T * scale)
// V and the log-sum-exp of every query row, causal and not, one program per
// block of query rows walking the keys block by block with a running maximum
// and sum, so the seq x seq matrix of scores is never stored. Checked
// element by element against a double-precision reference with a bound
// derived from the dtypes, head_dim and the sequence length, and by changing
// the later keys, which a causal row must not see.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:setup]
/// q, k, v, o: [heads, seq, HEAD_DIM] f16, contiguous; lse: [heads, seq] f32.
/// Grid: (cdiv(seq, BLOCK_M), heads). CAUSAL: query i sees keys 0..i.
template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, bool CAUSAL>
void attention(kl::Ptr<kl::f16> q, kl::Ptr<kl::f16> k, kl::Ptr<kl::f16> v, kl::Ptr<kl::f16> o, kl::Ptr<kl::f32> lse,
               kl::i32 seq, kl::f32 sm_scale) {
  auto start_m = kl::program_id(0) * BLOCK_M;
  auto head = kl::program_id(1) * seq * HEAD_DIM;  // where this head's rows begin
  auto rows = start_m + kl::arange<BLOCK_M>();     // this program's query rows
  auto dims = kl::arange<HEAD_DIM>();
  auto row_offsets = kl::expand_dims<1>(rows) * HEAD_DIM + kl::expand_dims<0>(dims);  // BLOCK_M x HEAD_DIM
  auto row_mask = kl::expand_dims<1>(rows < seq);
  auto q_tile = kl::load(q + head + row_offsets, row_mask);  // read once, used for every block of keys
  auto qk_scale = sm_scale * std::numbers::log2e;            // scores in log2 units: exp2 instead of exp
  kl::Var row_max = kl::full<kl::f32, BLOCK_M>(-INFINITY);   // the largest score seen so far, per row
  kl::Var row_sum = kl::zeros<kl::f32, BLOCK_M>();           // sum of exp2(score - row_max)
  kl::Var acc = kl::zeros<kl::f32, BLOCK_M, HEAD_DIM>();     // sum of exp2(score - row_max) * v
  // [/book:setup]
  // [book:loop]
  // A causal block of rows needs no key past its last row.
  auto keys_end = [&] {
    if constexpr (CAUSAL) return kl::minimum(start_m + BLOCK_M, seq);
    else return seq;
  }();
  for (auto start_n : kl::range(0, keys_end, BLOCK_N)) {
    auto keys = start_n + kl::arange<BLOCK_N>();
    auto in_seq = kl::expand_dims<0>(keys < seq);  // 1 x BLOCK_N
    auto k_t = kl::load(k + head + kl::expand_dims<0>(keys) * HEAD_DIM + kl::expand_dims<1>(dims), in_seq);
    auto v_tile = kl::load(v + head + kl::expand_dims<1>(keys) * HEAD_DIM + kl::expand_dims<0>(dims),
                           kl::expand_dims<1>(keys < seq));
    auto visible = [&] {
      if constexpr (CAUSAL) return in_seq & (kl::expand_dims<0>(keys) <= kl::expand_dims<1>(rows));
      else return in_seq;
    }();
    auto scores = kl::where(visible, kl::dot(q_tile, k_t) * qk_scale, -INFINITY);  // BLOCK_M x BLOCK_N
    // Every row sees key 0 in the first block, so new_max is finite from then on.
    auto new_max = kl::maximum(row_max, kl::max(scores, kl::axis<1>));
    auto rescale = kl::exp2(row_max - new_max);  // moves what was summed onto the new maximum; 0 at first
    auto weights = kl::exp2(scores - kl::expand_dims<1>(new_max));
    row_sum = row_sum * rescale + kl::sum(weights, kl::axis<1>);
    acc = kl::dot(kl::cast<kl::f16>(weights), v_tile, acc * kl::expand_dims<1>(rescale));
    row_max = new_max;
  }
  // [/book:loop]
  // [book:finish]
  kl::store(o + head + row_offsets, kl::cast<kl::f16>(acc / kl::expand_dims<1>(row_sum)), row_mask);
  // log(sum_j exp(s_j)) = max * ln 2 + log(row_sum), in natural units again
  kl::store(lse + kl::program_id(1) * seq + rows, row_max * std::numbers::ln2 + kl::log(row_sum), rows < seq);
}
// [/book:finish]

// [book:reference]
/// O and LSE in double from the plain formula, and for every element how far
/// a correct kernel may be from them (u: f32's unit roundoff, u_f16: f16's).
struct Reference {
  std::vector<double> o, o_bound, lse, lse_bound;
};
Reference reference(const std::vector<kl::half>& q, const std::vector<kl::half>& k, const std::vector<kl::half>& v,
                    int heads, int seq, int d, double sm_scale, bool causal) {
  const double u = std::numeric_limits<float>::epsilon() / 2, u_f16 = 0x1p-11, f16_underflow = 0x1p-25;
  auto gamma = [u](double roundings) { return roundings * u / (1 - roundings * u); };
  auto at = [](const std::vector<kl::half>& x, int i) { return double{float(x[i])}; };
  Reference r{std::vector<double>(q.size()), std::vector<double>(q.size()), std::vector<double>(heads * seq),
              std::vector<double>(heads * seq)};
  std::vector<double> score(seq), weight(seq);
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < seq; ++i) {
      const int base = h * seq * d, visible = causal ? i + 1 : seq;
      double max_score = -INFINITY, largest_magnitude = 0, sum = 0;  // largest_magnitude: A below
      for (int j = 0; j < visible; ++j) {
        double s = 0, magnitude = 0;
        for (int c = 0; c < d; ++c) {
          s += at(q, base + i * d + c) * at(k, base + j * d + c);
          magnitude += std::abs(at(q, base + i * d + c) * at(k, base + j * d + c));
        }
        score[j] = s * sm_scale;
        max_score = std::max(max_score, score[j]);
        largest_magnitude = std::max(largest_magnitude, magnitude * sm_scale);
      }
      for (int j = 0; j < visible; ++j) sum += weight[j] = std::exp(score[j] - max_score);
      // The relative error of every weight, in the sum and in the accumulator alike.
      const double rho = (gamma(2 * d + 3) + 4 * u) * largest_magnitude + gamma(7.0 * seq + 4);
      for (int c = 0; c < d; ++c) {
        double out = 0, magnitude = 0, v_max = 0;
        for (int j = 0; j < visible; ++j) {
          out += weight[j] / sum * at(v, base + j * d + c);
          magnitude += weight[j] / sum * std::abs(at(v, base + j * d + c));
          v_max = std::max(v_max, std::abs(at(v, base + j * d + c)));
        }
        r.o[base + i * d + c] = out;
        r.o_bound[base + i * d + c] = 1.01 * ((rho + u_f16) * magnitude + (rho + u + u_f16) * std::abs(out) +
                                              visible * f16_underflow * v_max + f16_underflow);
      }
      r.lse[h * seq + i] = max_score + std::log(sum);
      r.lse_bound[h * seq + i] = 1.01 * (rho + 4 * u * (largest_magnitude + std::log(static_cast<double>(seq)) + 1));
    }
  return r;
}
// [/book:reference]

/// The elements of `got` farther from `want` than their bounds.
template <class T>
int outside(const std::vector<T>& got, const std::vector<double>& want, const std::vector<double>& bound) {
  int count = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(double{float(got[i])} - want[i]) <= bound[i])) ++count;  // false for NaN too
  return count;
}

// [book:run]
constexpr int kHeads = 2, kSeq = 300, kHeadDim = 64, kBlockM = 64, kBlockN = 32;

/// O and LSE of one launch of the kernel on these inputs.
struct Result {
  std::vector<kl::half> o;
  std::vector<float> lse;
};
template <bool CAUSAL>
Result run(const std::vector<kl::half>& q, const std::vector<kl::half>& k, const std::vector<kl::half>& v,
           float sm_scale) {
  auto q_buffer = kl::Buffer<kl::half>::from(q), k_buffer = kl::Buffer<kl::half>::from(k);
  auto v_buffer = kl::Buffer<kl::half>::from(v);
  kl::Buffer<kl::half> o(q.size());
  kl::Buffer<float> lse(kHeads * kSeq);
  kl::compile<attention<kHeadDim, kBlockM, kBlockN, CAUSAL>>().launch(
      kl::Grid(kl::cdiv(kSeq, kBlockM), kHeads), q_buffer, k_buffer, v_buffer, o, lse, kSeq, sm_scale);
  return {o.to_host(), lse.to_host()};
}
// [/book:run]

int main() {
  // [book:inputs]
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> wide(-2.0f, 2.0f), unit(-1.0f, 1.0f);
  const int elements = kHeads * kSeq * kHeadDim;
  std::vector<kl::half> q(elements), k(elements), v(elements);
  for (auto& e : q) e = kl::half(wide(random));  // larger queries: sharper softmax weights
  for (auto& e : k) e = kl::half(unit(random));
  for (auto& e : v) e = kl::half(unit(random));
  // [/book:inputs]

  std::printf("attention: %d heads, %d queries and %d keys each, head_dim %d; Q, K, V and O f16\n", kHeads, kSeq, kSeq,
              kHeadDim);
  std::printf("grid %d x %d: one program per %d query rows of a head, keys in blocks of %d\n", kl::cdiv(kSeq, kBlockM),
              kHeads, kBlockM, kBlockN);
  // [book:check]
  const float sm_scale = 1 / std::sqrt(float{kHeadDim});  // 1/8, exact: the reference uses the same number
  const Result causal = run<true>(q, k, v, sm_scale), full = run<false>(q, k, v, sm_scale);
  bool all_within = true;
  for (const bool is_causal : {true, false}) {
    const Result& got = is_causal ? causal : full;
    const Reference want = reference(q, k, v, kHeads, kSeq, kHeadDim, sm_scale, is_causal);
    const int o_outside = outside(got.o, want.o, want.o_bound);
    const int lse_outside = outside(got.lse, want.lse, want.lse_bound);
    all_within = all_within && o_outside == 0 && lse_outside == 0;
    std::printf("%-11s elements of O outside their bound: %d of %d; of LSE: %d of %d\n",
                is_causal ? "causal:" : "not causal:", o_outside, elements, lse_outside, kHeads * kSeq);
  }
  // [/book:check]

  // [book:later_keys]
  // Keys and values from position kFirstChanged on are drawn again: a causal row before it must not change at all.
  constexpr int kFirstChanged = 200;
  std::vector<kl::half> k2 = k, v2 = v;
  for (int h = 0; h < kHeads; ++h)
    for (int j = kFirstChanged; j < kSeq; ++j)
      for (int c = 0; c < kHeadDim; ++c) {
        k2[(h * kSeq + j) * kHeadDim + c] = kl::half(unit(random));
        v2[(h * kSeq + j) * kHeadDim + c] = kl::half(unit(random));
      }
  // The rows before `end` of either head whose O or LSE differ in any bit.
  auto rows_changed = [](const Result& before, const Result& after, int end) {
    int changed = 0;
    for (int h = 0; h < kHeads; ++h)
      for (int i = 0; i < end; ++i) {
        bool row_changed = before.lse[h * kSeq + i] != after.lse[h * kSeq + i];
        for (int c = 0; c < kHeadDim; ++c)
          row_changed = row_changed ||
                        before.o[(h * kSeq + i) * kHeadDim + c].bits != after.o[(h * kSeq + i) * kHeadDim + c].bits;
        changed += row_changed ? 1 : 0;
      }
    return changed;
  };
  const int causal_early = rows_changed(causal, run<true>(q, k2, v2, sm_scale), kFirstChanged);
  const int full_early = rows_changed(full, run<false>(q, k2, v2, sm_scale), kFirstChanged);
  std::printf("keys and values %d..%d drawn again: rows 0..%d changed in %d of %d (both heads) causal, %d not causal\n",
              kFirstChanged, kSeq - 1, kFirstChanged - 1, causal_early, kHeads * kFirstChanged, full_early);
  // [/book:later_keys]

  // [book:memory]
  const double score_bytes = double{kSeq} * kSeq * sizeof(float);
  const double tile_bytes = double{kBlockM} * kBlockN * sizeof(float);
  std::printf("one head's %d x %d scores in f32: %.0f bytes, never stored; one program's block of them: %.0f bytes\n",
              kSeq, kSeq, score_bytes, tile_bytes);
  // [/book:memory]
  return all_within && causal_early == 0 && full_early == kHeads * kFirstChanged ? 0 : 1;
}
