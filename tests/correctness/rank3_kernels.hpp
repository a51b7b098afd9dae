// The 3-D tile kernels shared by the correctness tests (join_split, permute,
// reshape, reduce_3d) and the code generator's rank-3 tests: each program
// handles one A x B x C tile of a D0 x D1 x D2 array over a 3-D grid, with
// masked tails in all three dimensions.
#pragma once

#include <limits>

#include "kiln/kiln.hpp"
#include "tile_index.hpp"

namespace kiln::test::rank3 {

namespace kl = kiln;

constexpr int kD0 = 9, kD1 = 13, kD2 = 7;  // the array, not multiples of the tile
constexpr int kA = 4, kB = 8, kC = 4;      // the tile
constexpr int kSize = kD0 * kD1 * kD2;
constexpr int kT0 = (kD0 + kA - 1) / kA, kT1 = (kD1 + kB - 1) / kB, kT2 = (kD2 + kC - 1) / kC;  // tiles per axis
using Tile = Tile3<kD0, kD1, kD2, kA, kB, kC>;

// joined interleaves x and y (element e of x at 2e, of y at 2e + 1); first and
// second are the even and odd elements of pairs.
template <class E>
void join_split_kernel(kl::Ptr<kl::Scalar<E>> x_ptr, kl::Ptr<kl::Scalar<E>> y_ptr, kl::Ptr<kl::Scalar<E>> pairs_ptr,
                       kl::Ptr<kl::Scalar<E>> joined, kl::Ptr<kl::Scalar<E>> first, kl::Ptr<kl::Scalar<E>> second) {
  const auto t = Tile::here();
  auto pair_offs = kl::expand_dims<3>(t.offs * 2) + kl::reshape<1, 1, 1, 2>(kl::arange<2>());  // [A, B, C, 2]
  auto pair_mask = kl::expand_dims<3>(t.mask);
  kl::store(joined + pair_offs, kl::join(kl::load(x_ptr + t.offs, t.mask), kl::load(y_ptr + t.offs, t.mask)),
            pair_mask);
  auto [lo, hi] = kl::split(kl::load(pairs_ptr + pair_offs, pair_mask));
  kl::store(first + t.offs, lo, t.mask);
  kl::store(second + t.offs, hi, t.mask);
}

// cab is x permuted to D2 x D0 x D1, bca to D1 x D2 x D0.
template <class E>
void permute_kernel(kl::Ptr<kl::Scalar<E>> x_ptr, kl::Ptr<kl::Scalar<E>> cab, kl::Ptr<kl::Scalar<E>> bca) {
  const auto t = Tile::here();
  auto x = kl::load(x_ptr + t.offs, t.mask);
  // Each index on the axis it has after the permutation.
  auto on0 = [](const auto& v) { return kl::expand_dims<1>(kl::expand_dims<1>(v)); };  // [N, 1, 1]
  auto on1 = [](const auto& v) { return kl::expand_dims<0>(kl::expand_dims<1>(v)); };  // [1, N, 1]
  auto on2 = [](const auto& v) { return kl::expand_dims<0>(kl::expand_dims<0>(v)); };  // [1, 1, N]
  // permute<2, 0, 1>: result (c, a, b) is x[a][b][c].
  kl::store(cab + (on0(t.k) * (kD0 * kD1) + on1(t.i) * kD1 + on2(t.j)), kl::permute<2, 0, 1>(x),
            (on0(t.k) < kD2) & (on1(t.i) < kD0) & (on2(t.j) < kD1));
  // permute<1, 2, 0>: result (b, c, a) is x[a][b][c].
  kl::store(bca + (on0(t.j) * (kD2 * kD0) + on1(t.k) * kD0 + on2(t.i)), kl::permute<1, 2, 0>(x),
            (on0(t.j) < kD1) & (on1(t.k) < kD2) & (on2(t.i) < kD0));
}

// reshaped and transposed must be copies of x; broadcast holds, at (a, b, c),
// x at (a, the first b of b's tile, c).
template <class E>
void reshape_kernel(kl::Ptr<kl::Scalar<E>> x_ptr, kl::Ptr<kl::Scalar<E>> reshaped, kl::Ptr<kl::Scalar<E>> transposed,
                    kl::Ptr<kl::Scalar<E>> broadcast) {
  const auto t = Tile::here();
  auto x = kl::load(x_ptr + t.offs, t.mask);
  // reshape [A, B, C] -> [A, B*C]: element (a, m) is x[a][m / C][m % C].
  auto m = kl::arange<kB * kC>();
  auto jm = kl::program_id(1) * kB + m / kC;
  auto km = kl::program_id(2) * kC + m % kC;
  auto inner = jm * kD2 + km;  // [B*C]
  auto inner_ok = (jm < kD1) & (km < kD2);
  auto i_col = kl::expand_dims<1>(t.i);  // [A, 1]
  auto flat = kl::reshape<kA, kB * kC>(x);
  kl::store(reshaped + (i_col * (kD1 * kD2) + kl::expand_dims<0>(inner)), flat,
            (i_col < kD0) & kl::expand_dims<0>(inner_ok));
  // trans [A, B*C] -> [B*C, A].
  auto i_row = kl::expand_dims<0>(t.i);  // [1, A]
  kl::store(transposed + (kl::expand_dims<1>(inner) + i_row * (kD1 * kD2)), kl::trans(flat),
            kl::expand_dims<1>(inner_ok) & (i_row < kD0));
  // expand_dims of values, then broadcast_to: the tile's first b, repeated along axis 1.
  auto k_row = kl::expand_dims<0>(t.k);  // [1, C]
  auto first_b = kl::load(x_ptr + (i_col * (kD1 * kD2) + kl::program_id(1) * kB * kD2 + k_row),
                          (i_col < kD0) & (k_row < kD2));  // [A, C]
  kl::store(broadcast + t.offs, kl::broadcast_to<kA, kB, kC>(kl::expand_dims<1>(first_b)), t.mask);
}

// over_a[t][j][k] is the sum of x[i][j][k] over tile t's i; over_b and over_c
// likewise along axes 1 and 2; max_b is the maximum along axis 1.
template <class E>
void reduce_3d_kernel(kl::Ptr<kl::Scalar<E>> x_ptr, kl::Ptr<kl::Scalar<E>> over_a, kl::Ptr<kl::Scalar<E>> over_b,
                      kl::Ptr<kl::Scalar<E>> over_c, kl::Ptr<kl::Scalar<E>> max_b) {
  const auto t = Tile::here();
  auto x = kl::load(x_ptr + t.offs, t.mask, {.other = 0});
  auto lowest = kl::load(x_ptr + t.offs, t.mask, {.other = static_cast<double>(std::numeric_limits<E>::lowest())});
  auto i = kl::expand_dims<1>(t.i);   // [A, 1]
  auto j0 = kl::expand_dims<0>(t.j);  // [1, B]
  auto j1 = kl::expand_dims<1>(t.j);  // [B, 1]
  auto k = kl::expand_dims<0>(t.k);   // [1, C]
  auto p0 = kl::program_id(0), p1 = kl::program_id(1), p2 = kl::program_id(2);
  kl::store(over_a + (p0 * (kD1 * kD2) + j1 * kD2 + k), kl::sum(x, kl::axis<0>), (j1 < kD1) & (k < kD2));
  kl::store(over_b + (i * (kT1 * kD2) + p1 * kD2 + k), kl::sum(x, kl::axis<1>), (i < kD0) & (k < kD2));
  kl::store(over_c + (i * (kD1 * kT2) + j0 * kT2 + p2), kl::sum(x, kl::axis<2>), (i < kD0) & (j0 < kD1));
  kl::store(max_b + (i * (kT1 * kD2) + p1 * kD2 + k), kl::max(lowest, kl::axis<1>), (i < kD0) & (k < kD2));
}

}  // namespace kiln::test::rank3
