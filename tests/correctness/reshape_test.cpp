// Correctness of reshape, trans, expand_dims and broadcast_to for every dtype.
// Each program handles one 3-D tile of a 3-D array over a 3-D grid, with
// masked tails in all three dimensions; results are stored at offsets
// computed independently of the op under test, so a wrong op moves values to
// wrong places.
#include <vector>

#include "test_support.hpp"
#include "tile_index.hpp"

namespace {

namespace kl = kiln;

constexpr int kD0 = 9, kD1 = 13, kD2 = 7;  // the array, not multiples of the tile
constexpr int kA = 4, kB = 8, kC = 4;      // the tile
constexpr int kSize = kD0 * kD1 * kD2;

// reshaped and transposed must be copies of x; broadcast holds, at (a, b, c),
// x at (a, the first b of b's tile, c).
template <class E>
void reshape_kernel(kl::Ptr<kl::Scalar<E>> x_ptr, kl::Ptr<kl::Scalar<E>> reshaped, kl::Ptr<kl::Scalar<E>> transposed,
                    kl::Ptr<kl::Scalar<E>> broadcast) {
  const auto t = kiln::test::Tile3<kD0, kD1, kD2, kA, kB, kC>::here();
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

template <class T>
class Reshape : public ::testing::Test {};
TYPED_TEST_SUITE(Reshape, kiln::test::AllTypes, kiln::test::DTypeNames);

TYPED_TEST(Reshape, ReshapeTransExpandDimsAndBroadcastToMoveValuesRight) {
  using T = TypeParam;
  const double range = kiln::test::is_float_v<T> ? 4 : 1e9;  // ints: nearly distinct values
  const auto x = kiln::test::random_values<T>(kSize, 701, -range, range);
  kl::Buffer<T> reshaped(kSize), transposed(kSize), broadcast(kSize);
  kl::compile<reshape_kernel<T>>().launch(kl::Grid(kl::cdiv(kD0, kA), kl::cdiv(kD1, kB), kl::cdiv(kD2, kC)),
                                          kiln::test::to_buffer(x), reshaped, transposed, broadcast);
  std::vector<T> w_broadcast(kSize);
  for (int a = 0; a < kD0; ++a)
    for (int b = 0; b < kD1; ++b)
      for (int c = 0; c < kD2; ++c) w_broadcast[(a * kD1 + b) * kD2 + c] = x[(a * kD1 + b / kB * kB) * kD2 + c];
  kiln::test::expect_equal(reshaped.to_host(), x, "reshape [A, B, C] -> [A, B*C]");
  kiln::test::expect_equal(transposed.to_host(), x, "trans [A, B*C] -> [B*C, A]");
  kiln::test::expect_equal(broadcast.to_host(), w_broadcast, "broadcast_to(expand_dims<1>([A, C]))");
}

}  // namespace
