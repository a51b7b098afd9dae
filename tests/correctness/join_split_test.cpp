// Correctness of join and split for every dtype, on 3-D tiles (so join makes
// a 4-D tile) over a 3-D grid with masked tails in all three dimensions.
#include <vector>

#include "rank3_kernels.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;
using namespace kiln::test::rank3;

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
