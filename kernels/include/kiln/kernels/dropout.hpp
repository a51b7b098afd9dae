// Low-memory dropout: the keep mask of each element is regenerated from the
// seed and the element's offset with Philox (stdlib/random.hpp), never stored.
// `dropout_keep` is the one definition of the mask; the standalone `dropout`
// kernel and matmul's fused epilogue both call it, so one seed and one offset
// give bit-identical masks in either. Also the host reference: an independent
// Philox4x32-10 and the dropout result in double with its error bound.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <source_location>
#include <vector>

#include "kiln/kernels/accuracy.hpp"
#include "kiln/kiln.hpp"

namespace kiln::kernels {

namespace kl = kiln;

// [book:keep]
/// Whether dropout with probability `p` keeps the element at each of
/// `offsets`: a uniform draw u in [0, 1) from (seed, offset) is kept when
/// u >= p, which has probability 1 - p and keeps everything for p = 0.
template <Numeric Seed, Numeric Offsets, Numeric P>
auto dropout_keep(const Seed& seed, const Offsets& offsets, const P& p,
                  std::source_location loc = std::source_location::current()) {
  return kl::rand(seed, offsets, loc) >= p;
}
// [/book:keep]

/// Dropout of f32 values `x`: kept elements scaled by 1 / (1 - p) (so that
/// the expected value is unchanged), the others set to +0.
template <Numeric X, Numeric Seed, Numeric Offsets, Numeric P>
auto dropout_apply(const X& x, const Seed& seed, const Offsets& offsets, const P& p,
                   std::source_location loc = std::source_location::current()) {
  static_assert(dtype_of<X> == ir::DType::f32, "dropout_apply takes f32 values (cast them first)");
  auto scale = 1.0f / (1.0f - p);
  return kl::where(dropout_keep(seed, offsets, p, loc), x * scale, 0.0f, loc);
}

/// out[i] = dropout(x[i]) for i < n, element i drawing with offset `offset + i`;
/// one BLOCK of elements per program. T is the element type of x and out.
template <class T, int BLOCK>
void dropout(kl::Ptr<T> x, kl::Ptr<T> out, kl::i32 n, kl::f32 p, kl::i64 seed, kl::i32 offset) {
  static_assert(std::has_single_bit(unsigned{BLOCK}), "dropout: BLOCK must be a power of two");
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  auto values = kl::cast<kl::f32>(kl::load(x + offs, mask));
  kl::store(out + offs, kl::cast<T>(dropout_apply(values, seed, offset + offs, p)), mask);
}

// ---------------------------------------------------------------------------
// Host reference.

/// Philox4x32 with 10 rounds (Salmon et al., SC'11) on counter c with key
/// (k0, k1), written independently of the DSL's philox.
inline std::array<std::uint32_t, 4> philox_host(std::uint32_t k0, std::uint32_t k1, std::array<std::uint32_t, 4> c) {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c[0];
    const std::uint64_t p2 = std::uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<std::uint32_t>(p2 >> 32) ^ c[1] ^ k0, static_cast<std::uint32_t>(p2),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<std::uint32_t>(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

/// The host twin of dropout_keep: Philox on counter (offset, 0, 0, 0) with
/// the seed's two halves as the key, the first output mapped to [0, 1) as
/// Triton does (the bits as an i32, negatives folded onto ~x, times ~2^-31 in
/// f32), compared with p in f32.
inline bool dropout_keep_host(std::uint64_t seed, std::uint32_t offset, float p) {
  const std::uint32_t bits =
      philox_host(static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), {offset, 0, 0, 0})[0];
  const auto s = std::bit_cast<std::int32_t>(bits);
  const float uniform = static_cast<float>(s < 0 ? ~s : s) * 4.6566127342e-10f;
  return uniform >= p;
}

/// An absolute allowance for rounding a value to `dtype` near zero, where the
/// relative bound u |x| fails: half the spacing of the subnormals, which is
/// u times the smallest normal.
inline double underflow_allowance(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::f16: return 0x1p-25;
    case ir::DType::bf16: return 0x1p-134;
    default: return 0x1p-150;
  }
}

/// Expected values and, per element, how far a correct kernel may be from them.
struct ReferenceWithBounds {
  std::vector<double> values;
  std::vector<double> bounds;
};

/// The reference of `dropout` in double: x[i] / (1 - p) where kept, 0 elsewhere.
/// Bound of a kept element: the kernel's scale 1 / (1 - p) rounds twice in
/// f32 (1 - p, then the quotient), the product once, and the result once to
/// T: |got - want| <= gamma_3(u_f32) |want| + u_T |want| + the underflow
/// allowance of T. Dropped elements must be exactly 0.
template <class C>
ReferenceWithBounds dropout_reference(const std::vector<C>& x, float p, std::uint64_t seed, std::uint32_t offset) {
  const double u32 = unit_roundoff(ir::DType::f32), u_out = unit_roundoff(kl::dtype_v<C>);
  const double gamma3 = 3 * u32 / (1 - 3 * u32);
  const double scale = 1.0 / (1.0 - static_cast<double>(p));
  ReferenceWithBounds ref;
  ref.values.resize(x.size());
  ref.bounds.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!dropout_keep_host(seed, offset + static_cast<std::uint32_t>(i), p)) continue;
    const double want = static_cast<double>(x[i]) * scale;
    ref.values[i] = want;
    ref.bounds[i] = (gamma3 + u_out) * std::abs(want) + underflow_allowance(kl::dtype_v<C>);
  }
  return ref;
}

/// The normwise relative error the reference's per-element bounds allow.
inline double normwise_tolerance(const ReferenceWithBounds& ref) { return normwise_tolerance(ref.values, ref.bounds); }

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::dropout, "x", "out", "n", "p", "seed", "offset");
