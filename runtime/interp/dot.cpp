// dot: acc + a @ b, optionally batched ([B,M,K] x [B,K,N]). Float inputs
// accumulate in f32 (f64 for f64), integers in wrapping 64-bit arithmetic
// truncated to the accumulator's type; each element sums in k order.
// `tf32` rounds f32 inputs to 10 mantissa bits first; `tf32x3` splits each
// into a tf32 head and tail and sums the three significant products.

#include <bit>
#include <cstring>

#include "convert.hpp"
#include "fault.hpp"
#include "kiln/ir/attribute_enums.hpp"
#include "program.hpp"

namespace kiln::runtime::interp {

namespace {

using ir::Precision;

constexpr std::size_t kAlign = 64;

std::size_t aligned(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

/// Round to nearest even at 10 mantissa bits; infinities and NaN unchanged.
float round_tf32(float x) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;
  b += 0xfffu + ((b >> 13) & 1u);
  return std::bit_cast<float>(b & ~0x1fffu);
}

/// Accumulation type for an input element type.
template <class E>
using Accumulator =
    std::conditional_t<E::is_float, std::conditional_t<std::is_same_v<typename E::S, double>, double, float>,
                       std::uint64_t>;

template <class E, class W>
W widen(typename E::S x) {
  if constexpr (E::is_float) return static_cast<W>(E::load(x));
  else return static_cast<W>(x);  // sign- or zero-extends; products then wrap like the narrow type
}

/// c_r += x_r * b for four rows r; the rows and b never overlap.
template <class W>
void multiply_add_rows(const W (&x)[4], const W* __restrict b, W* __restrict c0, W* __restrict c1, W* __restrict c2,
                       W* __restrict c3, std::int64_t n_size) {
  for (std::int64_t n = 0; n < n_size; ++n) {
    const W y = b[n];
    c0[n] += x[0] * y;
    c1[n] += x[1] * y;
    c2[n] += x[2] * y;
    c3[n] += x[3] * y;
  }
}

/// c += a @ b, each element summed in k order. Four rows of c at a time
/// share every load of a row of b.
template <class W>
void gemm(const W* a, const W* b, W* c, std::int64_t m_size, std::int64_t n_size, std::int64_t k_size) {
  std::int64_t m = 0;
  for (; m + 4 <= m_size; m += 4) {
    W* row = c + m * n_size;
    const W* a0 = a + m * k_size;
    for (std::int64_t k = 0; k < k_size; ++k) {
      const W x[4] = {a0[k], a0[k_size + k], a0[2 * k_size + k], a0[3 * k_size + k]};
      multiply_add_rows(x, b + k * n_size, row, row + n_size, row + 2 * n_size, row + 3 * n_size, n_size);
    }
  }
  for (; m < m_size; ++m) {
    W* row = c + m * n_size;
    for (std::int64_t k = 0; k < k_size; ++k) {
      const W av = a[m * k_size + k];
      const W* brow = b + k * n_size;
      for (std::int64_t n = 0; n < n_size; ++n) row[n] += av * brow[n];
    }
  }
}

/// param: [batch, M, N, K]; dims[0]: precision.
template <class In, class Acc>
KILN_ROUTINE void run_dot(const Instr& ins, Exec& ex) {
  using W = Accumulator<In>;
  using SI = typename In::S;
  using SA = typename Acc::S;
  const std::int64_t batch = ins.param[0], m_size = ins.param[1], n_size = ins.param[2], k_size = ins.param[3];
  const auto precision = static_cast<Precision>(ins.dims[0]);
  const std::int64_t a_count = m_size * k_size, b_count = k_size * n_size, c_count = m_size * n_size;
  std::byte* scratch = ex.frame + ins.scratch.offset;
  W* a_head = reinterpret_cast<W*>(scratch);
  W* a_tail = reinterpret_cast<W*>(scratch + aligned(a_count * sizeof(W)));
  W* b_head = reinterpret_cast<W*>(scratch + 2 * aligned(a_count * sizeof(W)));
  W* b_tail = reinterpret_cast<W*>(scratch + 2 * aligned(a_count * sizeof(W)) + aligned(b_count * sizeof(W)));
  W* acc_w = reinterpret_cast<W*>(scratch + 2 * aligned(a_count * sizeof(W)) + 2 * aligned(b_count * sizeof(W)));
  constexpr bool direct = std::is_same_v<SA, W>;  // the result slot can accumulate in place

  for (std::int64_t g = 0; g < batch; ++g) {
    const SI* a = ex.at<SI>(ins.in[0]) + g * a_count;
    const SI* b = ex.at<SI>(ins.in[1]) + g * b_count;
    const SA* acc = ex.at<SA>(ins.in[2]) + g * c_count;
    SA* out = ex.at<SA>(ins.out[0]) + g * c_count;
    W* c = direct ? reinterpret_cast<W*>(out) : acc_w;
    for (std::int64_t i = 0; i < c_count; ++i) c[i] = widen<Acc, W>(acc[i]);
    for (std::int64_t i = 0; i < a_count; ++i) a_head[i] = widen<In, W>(a[i]);
    for (std::int64_t i = 0; i < b_count; ++i) b_head[i] = widen<In, W>(b[i]);
    if constexpr (std::is_same_v<W, float>) {
      if (precision != Precision::ieee) {
        for (std::int64_t i = 0; i < a_count; ++i) {
          const float head = round_tf32(a_head[i]);
          a_tail[i] = round_tf32(a_head[i] - head);
          a_head[i] = head;
        }
        for (std::int64_t i = 0; i < b_count; ++i) {
          const float head = round_tf32(b_head[i]);
          b_tail[i] = round_tf32(b_head[i] - head);
          b_head[i] = head;
        }
      }
      if (precision == Precision::tf32x3) {
        gemm(a_tail, b_head, c, m_size, n_size, k_size);
        gemm(a_head, b_tail, c, m_size, n_size, k_size);
      }
    }
    gemm(a_head, b_head, c, m_size, n_size, k_size);
    if constexpr (!direct) {
      using WE = std::conditional_t<
          std::is_same_v<W, double>, Element<ir::DType::f64>,
          std::conditional_t<std::is_same_v<W, float>, Element<ir::DType::f32>, Element<ir::DType::u64>>>;
      for (std::int64_t i = 0; i < c_count; ++i) out[i] = convert<WE, Acc>(c[i]);
    }
  }
}

Precision parse_precision(const ir::Operation& op) {
  if (const std::optional<Precision> precision = ir::attribute_enum<Precision>(op)) return *precision;
  unsupported(op, "unknown precision '" + op.symbol_attribute("precision") + "'");
}

/// [batch, M, N, K] of a dot, checked.
std::array<std::int64_t, 4> dot_sizes(const ir::Operation& op) {
  if (op.operands.size() != 3 || op.results.size() != 1) unsupported(op, "takes a, b and an accumulator");
  const ir::Type& a = op.operands[0]->type;
  const ir::Type& b = op.operands[1]->type;
  const ir::Type& c = op.operands[2]->type;
  const std::size_t rank = a.shape.size();
  const auto describe = [&] {
    return ", a is " + ir::to_string(a) + ", b is " + ir::to_string(b) + ", acc is " + ir::to_string(c);
  };
  if ((rank != 2 && rank != 3) || b.shape.size() != rank || c.shape.size() != rank)
    unsupported(op, "operands must be 2-D or 3-D" + describe());
  if (a.is_pointer || b.is_pointer || c.is_pointer || a.dtype != b.dtype)
    unsupported(op, "a and b must share a numeric dtype" + describe());
  if (op.results[0]->type != c) unsupported(op, "result type differs from acc" + describe());
  const std::int64_t batch = rank == 3 ? a.shape[0] : 1;
  const std::size_t o = rank - 2;
  const std::int64_t m = a.shape[o], k = a.shape[o + 1], n = b.shape[o + 1];
  if (b.shape[o] != k) unsupported(op, "K mismatch" + describe());
  if (c.shape[o] != m || c.shape[o + 1] != n || (rank == 3 && (b.shape[0] != batch || c.shape[0] != batch)))
    unsupported(op, "shape mismatch" + describe());
  return {batch, m, n, k};
}

std::size_t accumulator_bytes(ir::DType in) {
  if (!ir::is_float(in)) return 8;
  return in == ir::DType::f64 ? 8 : 4;
}

}  // namespace

std::size_t dot_scratch_bytes(const ir::Operation& op) {
  const auto [batch, m, n, k] = dot_sizes(op);
  const std::size_t w = accumulator_bytes(op.operands[0]->type.dtype);
  return 2 * aligned(m * k * w) + 2 * aligned(k * n * w) + aligned(m * n * w);
}

void bind_dot(const ir::Operation& op, Instr& ins) {
  const auto sizes = dot_sizes(op);
  for (int i = 0; i < 4; ++i) ins.param[i] = sizes[i];
  ins.dims = {static_cast<std::int64_t>(parse_precision(op))};
  ins.run = with_dtype(op.operands[0]->type.dtype, [&](auto in) -> Routine {
    return with_dtype(op.operands[2]->type.dtype, [&](auto acc) -> Routine {
      using In = decltype(in);
      using Acc = decltype(acc);
      if constexpr (In::is_float != Acc::is_float)
        unsupported(op, "float inputs need a float accumulator and integer inputs an integer one, a is " +
                            ir::to_string(op.operands[0]->type) + ", acc is " + ir::to_string(op.operands[2]->type));
      else return &run_dot<In, Acc>;
    });
  });
}

}  // namespace kiln::runtime::interp
