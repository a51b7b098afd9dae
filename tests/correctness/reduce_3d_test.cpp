// Correctness of reductions of 3-D tiles along each axis, for f32 and i32.
// Each program reduces one 4 x 8 x 4 tile of a 9 x 13 x 7 array over a 3-D
// grid, masked tails in all three dimensions, and stores its partial results
// at (tile, j, k), (i, tile, k) and (i, j, tile): the masked-off elements
// must not count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "rank3_kernels.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;
using namespace kiln::test::rank3;

template <class T>
class Reduce3d : public ::testing::Test {};
using Reduce3dTypes = ::testing::Types<float, std::int32_t>;
TYPED_TEST_SUITE(Reduce3d, Reduce3dTypes, kiln::test::DTypeNames);

TYPED_TEST(Reduce3d, EachAxisOfAMaskedTile) {
  using T = TypeParam;
  const auto x = kiln::test::random_values<T>(kD0 * kD1 * kD2, 731, -1000, 1000);
  auto at = [&](int a, int b, int c) { return x[(a * kD1 + b) * kD2 + c]; };
  std::vector<double> w_a(kT0 * kD1 * kD2), w_b(kD0 * kT1 * kD2), w_c(kD0 * kD1 * kT2);
  std::vector<double> bound_a(w_a.size()), bound_b(w_b.size()), bound_c(w_c.size());
  std::vector<T> w_max(w_b.size(), std::numeric_limits<T>::lowest());
  for (int a = 0; a < kD0; ++a)
    for (int b = 0; b < kD1; ++b)
      for (int c = 0; c < kD2; ++c) {
        const double v = at(a, b, c);
        const int ia = (a / kA * kD1 + b) * kD2 + c, ib = (a * kT1 + b / kB) * kD2 + c,
                  ic = (a * kD1 + b) * kT2 + c / kC;
        w_a[ia] += v, w_b[ib] += v, w_c[ic] += v;
        bound_a[ia] += std::abs(v), bound_b[ib] += std::abs(v), bound_c[ic] += std::abs(v);
        w_max[ib] = std::max(w_max[ib], at(a, b, c));
      }
  // A sum of n terms in T is within (n - 1) u sum |x| of the exact one (0 for ints).
  auto tolerance = [](std::vector<double> bound, int n) {
    const double u = kiln::test::is_float_v<T> ? std::ldexp(1.0, -std::numeric_limits<T>::digits) : 0;
    for (double& b : bound) b *= (n - 1) * u * 1.01;
    return bound;
  };
  kl::Buffer<T> over_a(w_a.size()), over_b(w_b.size()), over_c(w_c.size()), max_b(w_b.size());
  kl::compile<reduce_3d_kernel<T>>().launch(kl::Grid(kT0, kT1, kT2), kiln::test::to_buffer(x), over_a, over_b, over_c,
                                            max_b);
  kiln::test::expect_close(over_a.to_host(), w_a, 0, tolerance(bound_a, kA), "sum along axis 0");
  kiln::test::expect_close(over_b.to_host(), w_b, 0, tolerance(bound_b, kB), "sum along axis 1");
  kiln::test::expect_close(over_c.to_host(), w_c, 0, tolerance(bound_c, kC), "sum along axis 2");
  kiln::test::expect_equal(max_b.to_host(), w_max, "max along axis 1");
}

}  // namespace
