// Correctness of reshape, trans, expand_dims and broadcast_to for every dtype.
// Each program handles one 3-D tile of a 3-D array over a 3-D grid, with
// masked tails in all three dimensions; results are stored at offsets
// computed independently of the op under test, so a wrong op moves values to
// wrong places.
#include <vector>

#include "rank3_kernels.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;
using namespace kiln::test::rank3;

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
