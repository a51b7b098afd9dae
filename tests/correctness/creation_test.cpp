// Correctness of value creation: full and zeros of every dtype, at rank 0,
// 1 and 2, over masked tails; full of the extreme 64-bit integers.
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;
using kiln::test::random_values;

// Values every dtype holds exactly or rounds deterministically (0.1 for floats
// checks that the double constant is rounded once to the element type). The
// 64-bit value is exact in double and beyond 32 bits.
template <class T>
double fill_value() {
  if constexpr (std::is_same_v<T, bool>) return 1;
  else if constexpr (kiln::test::is_float_v<T>) return 0.1;
  else if constexpr (sizeof(T) == 8) return (std::is_signed_v<T> ? -1.0 : 1.0) * (0x1p62 + 0x1p40);
  else if constexpr (std::is_signed_v<T>) return -static_cast<double>(std::numeric_limits<T>::max() / 3);
  else return static_cast<double>(std::numeric_limits<T>::max() / 5 * 4);
}
template <class T>
double fill_value_2d() {
  if constexpr (std::is_same_v<T, bool>) return 1;
  else if constexpr (kiln::test::is_float_v<T>) return -2.75;
  else return 7;
}

// full and zeros, 1-D, 2-D ([2, BLOCK]: rows at 0 and n) and rank 0.
template <class C, int BLOCK>
void creation_kernel(kl::Ptr<kl::Scalar<C>> full_out, kl::Ptr<kl::Scalar<C>> zeros_out,
                     kl::Ptr<kl::Scalar<C>> full2d_out, kl::Ptr<kl::Scalar<C>> scalar_out, kl::i32 n) {
  using E = kl::Scalar<C>;
  auto pid = kl::program_id(0);
  auto offs = pid * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  kl::store(full_out + offs, kl::full<E, BLOCK>(fill_value<C>()), mask);
  kl::store(zeros_out + offs, kl::zeros<E, BLOCK>(), mask);
  auto offs2d = kl::expand_dims<1>(kl::arange<2>()) * n + kl::expand_dims<0>(offs);
  kl::store(full2d_out + offs2d, kl::full<E, 2, BLOCK>(fill_value_2d<C>()), kl::expand_dims<0>(mask));
  kl::store(scalar_out + pid, kl::full<E>(fill_value_2d<C>()));
}

constexpr int kBlock = 64;

template <class T>
class Fill : public ::testing::Test {};
TYPED_TEST_SUITE(Fill, kiln::test::AllTypes, kiln::test::DTypeNames);

TYPED_TEST(Fill, FullAndZerosWriteEveryElement) {
  using T = TypeParam;
  const int n = 999;
  const int grid = kl::cdiv(n, kBlock);
  // Random nonzero contents, so that every output must be overwritten.
  auto full_out = kiln::test::to_buffer(random_values<T>(n, 41, 1, 100));
  auto zeros_out = kiln::test::to_buffer(random_values<T>(n, 42, 1, 100));
  auto full2d_out = kiln::test::to_buffer(random_values<T>(2 * n, 43, 1, 100));
  auto scalar_out = kiln::test::to_buffer(random_values<T>(grid, 44, 1, 100));
  kl::compile<creation_kernel<T, kBlock>>().launch(kl::Grid(grid), full_out, zeros_out, full2d_out, scalar_out, n);
  const T v = kiln::test::from_double<T>(fill_value<T>());
  const T v2 = kiln::test::from_double<T>(fill_value_2d<T>());
  expect_equal(full_out.to_host(), std::vector<T>(n, v), "full");
  expect_equal(zeros_out.to_host(), std::vector<T>(n, kiln::test::from_double<T>(0)), "zeros");
  expect_equal(full2d_out.to_host(), std::vector<T>(2 * n, v2), "full 2-D");
  expect_equal(scalar_out.to_host(), std::vector<T>(grid, v2), "full rank 0");
}

// An integer fill is exact whatever its width: the extremes of i64 and u64,
// which a double cannot hold (2^53 + 1 neither).
void wide_fill_kernel(kl::Ptr<kl::i64> signed_out, kl::Ptr<kl::u64> unsigned_out) {
  auto offs = kl::arange<4>();
  kl::store(signed_out + offs, kl::full<kl::i64, 4>(std::numeric_limits<std::int64_t>::max()));
  kl::store(signed_out + (4 + offs), kl::full<kl::i64, 4>(std::numeric_limits<std::int64_t>::min()));
  kl::store(signed_out + (8 + offs), kl::full<kl::i64, 4>((std::int64_t{1} << 53) + 1));
  kl::store(unsigned_out + offs, kl::full<kl::u64, 4>(std::numeric_limits<std::uint64_t>::max()));
  kl::store(unsigned_out + (4 + offs), kl::full<kl::u64, 4>(0x1p63));
}

TEST(Fill, IntegerFillsOfSixtyFourBitsAreExact) {
  kl::Buffer<std::int64_t> signed_out(12);
  kl::Buffer<std::uint64_t> unsigned_out(8);
  kl::compile<wide_fill_kernel>().launch(kl::Grid(1), signed_out, unsigned_out);
  std::vector<std::int64_t> want_signed(4, std::numeric_limits<std::int64_t>::max());
  want_signed.resize(8, std::numeric_limits<std::int64_t>::min());
  want_signed.resize(12, (std::int64_t{1} << 53) + 1);
  std::vector<std::uint64_t> want_unsigned(4, std::numeric_limits<std::uint64_t>::max());
  want_unsigned.resize(8, std::uint64_t{1} << 63);
  expect_equal(signed_out.to_host(), want_signed, "full<i64>");
  expect_equal(unsigned_out.to_host(), want_unsigned, "full<u64>");
}

}  // namespace
