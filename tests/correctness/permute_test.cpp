// Correctness of permute on 3-D tiles for every dtype. Each program handles
// one 3-D tile of a 3-D array over a 3-D grid, with masked tails in all three
// dimensions, and stores the permuted tile at offsets computed independently
// of permute into the permuted array.
#include <vector>

#include "test_support.hpp"
#include "tile_index.hpp"

namespace {

namespace kl = kiln;

constexpr int kD0 = 9, kD1 = 13, kD2 = 7;  // the array, not multiples of the tile
constexpr int kA = 4, kB = 8, kC = 4;      // the tile
constexpr int kSize = kD0 * kD1 * kD2;

// cab is x permuted to D2 x D0 x D1, bca to D1 x D2 x D0.
template <class E>
void permute_kernel(kl::Ptr<kl::Scalar<E>> x_ptr, kl::Ptr<kl::Scalar<E>> cab, kl::Ptr<kl::Scalar<E>> bca) {
  const auto t = kiln::test::Tile3<kD0, kD1, kD2, kA, kB, kC>::here();
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

template <class T>
class Permute : public ::testing::Test {};
TYPED_TEST_SUITE(Permute, kiln::test::AllTypes, kiln::test::DTypeNames);

TYPED_TEST(Permute, PermutedTilesLandInThePermutedArray) {
  using T = TypeParam;
  const double range = kiln::test::is_float_v<T> ? 4 : 1e9;  // ints: nearly distinct values
  const auto x = kiln::test::random_values<T>(kSize, 711, -range, range);
  kl::Buffer<T> cab(kSize), bca(kSize);
  kl::compile<permute_kernel<T>>().launch(kl::Grid(kl::cdiv(kD0, kA), kl::cdiv(kD1, kB), kl::cdiv(kD2, kC)),
                                          kiln::test::to_buffer(x), cab, bca);
  std::vector<T> w_cab(kSize), w_bca(kSize);
  for (int a = 0; a < kD0; ++a)
    for (int b = 0; b < kD1; ++b)
      for (int c = 0; c < kD2; ++c) {
        const T v = x[(a * kD1 + b) * kD2 + c];
        w_cab[(c * kD0 + a) * kD1 + b] = v;
        w_bca[(b * kD2 + c) * kD0 + a] = v;
      }
  kiln::test::expect_equal(cab.to_host(), w_cab, "permute<2, 0, 1>");
  kiln::test::expect_equal(bca.to_host(), w_bca, "permute<1, 2, 0>");
}

}  // namespace
