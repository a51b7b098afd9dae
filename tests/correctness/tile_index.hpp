// Index tiles for the shape tests: the row-major offsets and in-bounds mask of
// the calling program's 2-D or 3-D tile of an array, and its indices per axis.
#pragma once

#include "kiln/kiln.hpp"

namespace kiln::test {

/// Program (pid 0, pid 1)'s BM x BN tile of a Rows x Cols array.
template <int Rows, int Cols, int BM, int BN>
struct Tile2 {
  Tile<i32, BM> rows;      // global row indices
  Tile<i32, BN> cols;      // global column indices
  Tile<i32, BM, BN> offs;  // row-major offsets
  Tile<i1, BM, BN> mask;   // in bounds

  static Tile2 here() {
    auto rows = program_id(0) * BM + arange<BM>();
    auto cols = program_id(1) * BN + arange<BN>();
    auto r = expand_dims<1>(rows);  // [BM, 1]
    auto c = expand_dims<0>(cols);  // [1, BN]
    return {rows, cols, r * Cols + c, (r < Rows) & (c < Cols)};
  }
};

/// Program (pid 0, pid 1, pid 2)'s A x B x C tile of a D0 x D1 x D2 array.
template <int D0, int D1, int D2, int A, int B, int C>
struct Tile3 {
  Tile<i32, A> i;  // global indices along each axis
  Tile<i32, B> j;
  Tile<i32, C> k;
  Tile<i32, A, B, C> offs;  // row-major offsets
  Tile<i1, A, B, C> mask;   // in bounds

  static Tile3 here() {
    auto i = program_id(0) * A + arange<A>();
    auto j = program_id(1) * B + arange<B>();
    auto k = program_id(2) * C + arange<C>();
    auto i3 = expand_dims<1>(expand_dims<1>(i));  // [A, 1, 1]
    auto j3 = expand_dims<0>(expand_dims<1>(j));  // [1, B, 1]
    auto k3 = expand_dims<0>(expand_dims<0>(k));  // [1, 1, C]
    return {i, j, k, i3 * (D1 * D2) + j3 * D2 + k3, (i3 < D0) & (j3 < D1) & (k3 < D2)};
  }
};

}  // namespace kiln::test
