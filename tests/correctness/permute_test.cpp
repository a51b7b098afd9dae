// Correctness of permute on 3-D tiles for every dtype. Each program handles
// one 3-D tile of a 3-D array over a 3-D grid, with masked tails in all three
// dimensions, and stores the permuted tile at offsets computed independently
// of permute into the permuted array.
#include <vector>

#include "rank3_kernels.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;
using namespace kiln::test::rank3;

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
