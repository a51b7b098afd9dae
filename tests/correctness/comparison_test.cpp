// Correctness of the comparison operators (< <= > >= == !=) between tiles,
// scalars and C++ literals for every numeric dtype: signedness from the dtype,
// float comparisons ordered except != (true with NaN).
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::from_double;
using kiln::test::is_float_v;

constexpr int kBlock = 64;
constexpr int kOps = 9;

// Result k of element i is out[k * n + i].
template <class C>
void comparison_kernel(kl::Ptr<kl::Scalar<C>> a_ptr, kl::Ptr<kl::Scalar<C>> b_ptr, kl::Scalar<C> s, kl::Ptr<kl::i1> out,
                       kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto a = kl::load(a_ptr + offs, mask);
  auto b = kl::load(b_ptr + offs, mask);
  int k = 0;
  auto put = [&](const auto& v) {
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(v)>, kl::Tile<kl::i1, kBlock>>);
    kl::store(out + (offs + (k++) * n), v, mask);
  };
  put(a < b);
  put(a <= b);
  put(a > b);
  put(a >= b);
  put(a == b);
  put(a != b);
  put(a < s);
  put(2 >= a);
  put(a != 2);
}

// Compares in T for integers (their own signedness) and in double for floats
// (exact, and C++'s float comparisons are ordered except !=, as OPS.md says).
template <class T>
std::vector<bool> comparison_reference(T a, T b, T s) {
  if constexpr (is_float_v<T>) {
    const double x = as_double(a), y = as_double(b), z = as_double(s);
    return {x<y, x <= y, x> y, x >= y, x == y, x != y, x < z, 2 >= x, x != 2};
  } else {
    return {a<b, a <= b, a> b, a >= b, a == b, a != b, a < s, T{2} >= a, a != T{2}};
  }
}

template <class T>
class Comparison : public ::testing::Test {};
TYPED_TEST_SUITE(Comparison, kiln::test::NumericTypes, kiln::test::DTypeNames);

TYPED_TEST(Comparison, AllPredicatesMatchTheReference) {
  using T = TypeParam;
  const int n = 613;
  const bool fl = is_float_v<T>;
  // Ints over the whole range (signedness matters), some small ones near the literal 2.
  auto a = kiln::test::random_values<T>(n, 201, fl ? -4 : -1e30, fl ? 4 : 1e30);
  auto b = kiln::test::random_values<T>(n, 202, fl ? -4 : -1e30, fl ? 4 : 1e30);
  const auto small = kiln::test::random_values<T>(n, 203, -3, 3);
  for (int i = 0; i < n; i += 4) a[i] = small[i];
  for (int i = 1; i < n; i += 3) b[i] = a[i];  // ties
  if constexpr (is_float_v<T>) {
    a[2] = from_double<T>(2.0);
    a[5] = from_double<T>(NAN);
    b[6] = from_double<T>(NAN);
    a[9] = from_double<T>(-0.0);
    b[9] = from_double<T>(0.0);
    a[10] = from_double<T>(INFINITY);
    b[11] = from_double<T>(-INFINITY);
  }
  const T s = from_double<T>(fl ? 0.5 : 1);
  kl::Buffer<bool> out(static_cast<std::size_t>(kOps) * n);
  const auto grid = kl::Grid(kl::cdiv(n, kBlock));
  if constexpr (fl)
    kl::compile<comparison_kernel<T>>().launch(grid, kiln::test::to_buffer(a), kiln::test::to_buffer(b), as_double(s),
                                               out, n);
  else kl::compile<comparison_kernel<T>>().launch(grid, kiln::test::to_buffer(a), kiln::test::to_buffer(b), s, out, n);
  static const char* const names[kOps] = {"a < b",  "a <= b",     "a > b",  "a >= b", "a == b",
                                          "a != b", "a < scalar", "2 >= a", "a != 2"};
  std::vector<std::vector<bool>> want(kOps, std::vector<bool>(n));
  for (int i = 0; i < n; ++i) {
    const auto r = comparison_reference(a[i], b[i], s);
    for (int k = 0; k < kOps; ++k) want[k][i] = r[k];
  }
  const auto got = out.to_host();
  for (int k = 0; k < kOps; ++k)
    kiln::test::expect_equal(std::vector<bool>(got.begin() + k * n, got.begin() + (k + 1) * n), want[k], names[k]);
}

}  // namespace
