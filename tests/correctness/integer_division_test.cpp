// Integer division and remainder at their edges, for every integer dtype, on
// the device under test (cpu here; emu and ptx in the reruns, in this same
// process, where a host trap would kill it): MIN / -1 wraps to MIN with
// remainder 0 (OPS.md), and a zero divisor, anywhere in the
// tile or as a scalar, is the fault OPS.md defines, naming the op, its source
// line and the element (on emu and a GPU the kernel writes that same message
// into its fault record and traps).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;

constexpr int kBlock = 32;

template <class T>
void divide_kernel(kl::Ptr<kl::Scalar<T>> a_ptr, kl::Ptr<kl::Scalar<T>> b_ptr, kl::Ptr<kl::Scalar<T>> quotient,
                   kl::Ptr<kl::Scalar<T>> remainder, kl::i32 n) {
  auto offs = kl::arange<kBlock>();
  auto mask = offs < n;
  auto a = kl::load(a_ptr + offs, mask);
  auto b = kl::load(b_ptr + offs, mask, {.other = 1});
  kl::store(quotient + offs, a / b, mask);
  kl::store(remainder + offs, a % b, mask);
}

template <class T>
void remainder_kernel(kl::Ptr<kl::Scalar<T>> a_ptr, kl::Ptr<kl::Scalar<T>> b_ptr, kl::Ptr<kl::Scalar<T>> out) {
  auto offs = kl::arange<kBlock>();
  kl::store(out + offs, kl::load(a_ptr + offs) % kl::load(b_ptr + offs));
}

template <class T>
void divide_by_scalar_kernel(kl::Ptr<kl::Scalar<T>> a_ptr, kl::Scalar<T> s, kl::Ptr<kl::Scalar<T>> out) {
  auto offs = kl::arange<kBlock>();
  kl::store(out + offs, kl::load(a_ptr + offs) / s);
}

template <class T>
class IntegerDivision : public ::testing::Test {};
TYPED_TEST_SUITE(IntegerDivision, kiln::test::IntTypes, kiln::test::DTypeNames);

/// The operands: MIN / -1 and its neighbours (for unsigned types -1 is MAX),
/// each sign combination, divisors of magnitude 1 and the extremes.
template <class T>
void edge_operands(std::vector<T>& a, std::vector<T>& b) {
  using L = std::numeric_limits<T>;
  const T minus_one = static_cast<T>(-1);
  const T lowest_nonzero = std::is_signed_v<T> ? L::min() : static_cast<T>(1);
  a = {L::min(),           L::min(),          static_cast<T>(L::min() + 1),
       L::max(),           L::max(),          static_cast<T>(7),
       static_cast<T>(-7), static_cast<T>(0), L::min(),
       L::max(),           static_cast<T>(5), static_cast<T>(100)};
  b = {minus_one, static_cast<T>(1), minus_one, minus_one,      L::max(),           minus_one,
       minus_one, minus_one,         L::max(),  lowest_nonzero, static_cast<T>(-3), static_cast<T>(7)};
}

TYPED_TEST(IntegerDivision, MinByMinusOneWrapsWithRemainderZero) {
  using T = TypeParam;
  std::vector<T> a, b;
  edge_operands(a, b);
  const int n = static_cast<int>(a.size());
  kl::Buffer<T> quotient(n), remainder(n);
  kl::compile<divide_kernel<T>>().launch(kl::Grid(1), kiln::test::to_buffer(a), kiln::test::to_buffer(b), quotient,
                                         remainder, n);
  // Two's complement: the quotient of MIN / -1 is -MIN, which wraps to MIN.
  std::vector<T> want_quotient, want_remainder;
  for (int i = 0; i < n; ++i) {
    if (std::is_signed_v<T> && b[i] == static_cast<T>(-1)) {
      want_quotient.push_back(static_cast<T>(0 - static_cast<std::uint64_t>(a[i])));
      want_remainder.push_back(0);
    } else {
      want_quotient.push_back(static_cast<T>(a[i] / b[i]));
      want_remainder.push_back(static_cast<T>(a[i] % b[i]));
    }
  }
  if constexpr (std::is_signed_v<T>) {
    EXPECT_EQ(want_quotient[0], std::numeric_limits<T>::min()) << "MIN / -1 is MIN";
    EXPECT_EQ(want_remainder[0], 0) << "MIN % -1 is 0";
  }
  kiln::test::expect_equal(quotient.to_host(), want_quotient, "a / b");
  kiln::test::expect_equal(remainder.to_host(), want_remainder, "a % b");
}

TYPED_TEST(IntegerDivision, ZeroDivisorIsAFaultNamingTheOpLineAndElement) {
  using T = TypeParam;
  std::vector<T> a = kiln::test::random_values<T>(kBlock, 11), b = kiln::test::random_values<T>(kBlock, 12, 1, 100);
  b[13] = 0;
  kl::Buffer<T> quotient(kBlock), remainder(kBlock);
  const auto kernel = kl::compile<divide_kernel<T>>();
  const auto fault = kiln::test::kernel_error([&] {
    kernel.launch(kl::Grid(1), kiln::test::to_buffer(a), kiln::test::to_buffer(b), quotient, remainder, kBlock);
  });
  EXPECT_EQ(fault, "kernel " + kernel.ir().name +
                       ": integer division by zero in div at integer_division_test.cpp:31: element 13 of the divisor "
                       "is 0 (program (0, 0, 0))");
}

TYPED_TEST(IntegerDivision, ZeroDivisorOfRemainderIsAFaultToo) {
  using T = TypeParam;
  std::vector<T> a = kiln::test::random_values<T>(kBlock, 13), b(kBlock, static_cast<T>(3));
  b[0] = 0;
  b[31] = 0;
  kl::Buffer<T> out(kBlock);
  const auto kernel = kl::compile<remainder_kernel<T>>();
  const auto fault = kiln::test::kernel_error(
      [&] { kernel.launch(kl::Grid(1), kiln::test::to_buffer(a), kiln::test::to_buffer(b), out); });
  // The interpreter names the first element; on a GPU the first thread to
  // claim the fault record names its own (the emu runs thread 0 first).
  const auto want = [&](int element) {
    return "kernel " + kernel.ir().name +
           ": integer division by zero in rem at integer_division_test.cpp:38: element " + std::to_string(element) +
           " of the divisor is 0 (program (0, 0, 0))";
  };
  if (kiln::Device::default_device().kind() == kiln::Device::Kind::cuda)
    EXPECT_TRUE(fault == want(0) || fault == want(31)) << fault;
  else EXPECT_EQ(fault, want(0));
}

TYPED_TEST(IntegerDivision, ZeroScalarDivisorIsAFault) {
  using T = TypeParam;
  const std::vector<T> a = kiln::test::random_values<T>(kBlock, 14);
  kl::Buffer<T> out(kBlock);
  const auto kernel = kl::compile<divide_by_scalar_kernel<T>>();
  const auto fault = kiln::test::kernel_error([&] { kernel.launch(kl::Grid(1), kiln::test::to_buffer(a), T{0}, out); });
  EXPECT_EQ(fault, "kernel " + kernel.ir().name +
                       ": integer division by zero in div at integer_division_test.cpp:44: element 0 of the divisor "
                       "is 0 (program (0, 0, 0))");
}

}  // namespace
