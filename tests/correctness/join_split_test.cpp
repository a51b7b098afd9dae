// Correctness of join and split for every dtype, on 3-D tiles (so join makes
// a 4-D tile) over a 3-D grid with masked tails in all three dimensions.
#include <vector>

#include "test_support.hpp"
#include "tile_index.hpp"

namespace {

namespace kl = kiln;

constexpr int kD0 = 9, kD1 = 13, kD2 = 7;  // the array, not multiples of the tile
constexpr int kA = 4, kB = 8, kC = 4;      // the tile
constexpr int kSize = kD0 * kD1 * kD2;

// joined interleaves x and y (element e of x at 2e, of y at 2e + 1); first and
// second are the even and odd elements of pairs.
template <class E>
void join_split_kernel(kl::Ptr<kl::Scalar<E>> x_ptr, kl::Ptr<kl::Scalar<E>> y_ptr, kl::Ptr<kl::Scalar<E>> pairs_ptr,
                       kl::Ptr<kl::Scalar<E>> joined, kl::Ptr<kl::Scalar<E>> first, kl::Ptr<kl::Scalar<E>> second) {
  const auto t = kiln::test::Tile3<kD0, kD1, kD2, kA, kB, kC>::here();
  auto pair_offs = kl::expand_dims<3>(t.offs * 2) + kl::reshape<1, 1, 1, 2>(kl::arange<2>());  // [A, B, C, 2]
  auto pair_mask = kl::expand_dims<3>(t.mask);
  kl::store(joined + pair_offs, kl::join(kl::load(x_ptr + t.offs, t.mask), kl::load(y_ptr + t.offs, t.mask)),
            pair_mask);
  auto [lo, hi] = kl::split(kl::load(pairs_ptr + pair_offs, pair_mask));
  kl::store(first + t.offs, lo, t.mask);
  kl::store(second + t.offs, hi, t.mask);
}

template <class T>
class JoinSplit : public ::testing::Test {};
TYPED_TEST_SUITE(JoinSplit, kiln::test::AllTypes, kiln::test::DTypeNames);

TYPED_TEST(JoinSplit, JoinInterleavesAndSplitUndoesIt) {
  using T = TypeParam;
  const double range = kiln::test::is_float_v<T> ? 4 : 1e9;  // ints: nearly distinct values
  const auto x = kiln::test::random_values<T>(kSize, 721, -range, range);
  const auto y = kiln::test::random_values<T>(kSize, 722, -range, range);
  const auto pairs = kiln::test::random_values<T>(2 * kSize, 723, -range, range);
  kl::Buffer<T> joined(2 * kSize), first(kSize), second(kSize);
  using kiln::test::to_buffer;
  kl::compile<join_split_kernel<T>>().launch(kl::Grid(kl::cdiv(kD0, kA), kl::cdiv(kD1, kB), kl::cdiv(kD2, kC)),
                                             to_buffer(x), to_buffer(y), to_buffer(pairs), joined, first, second);
  std::vector<T> w_joined(2 * kSize), w_first(kSize), w_second(kSize);
  for (int e = 0; e < kSize; ++e) {
    w_joined[2 * e] = x[e];
    w_joined[2 * e + 1] = y[e];
    w_first[e] = pairs[2 * e];
    w_second[e] = pairs[2 * e + 1];
  }
  kiln::test::expect_equal(joined.to_host(), w_joined, "join");
  kiln::test::expect_equal(first.to_host(), w_first, "split, first half");
  kiln::test::expect_equal(second.to_host(), w_second, "split, second half");
}

}  // namespace
