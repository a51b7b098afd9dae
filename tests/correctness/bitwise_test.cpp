// Correctness of the integer bit operations for every integer dtype: & | ^ ~,
// shifts (arithmetic >> for signed, logical for unsigned, amounts >= the width
// giving 0 or the sign fill), compound forms, and umulhi.
#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;

constexpr int kBlock = 64;
constexpr int kOps = 11;

// Result k of element i is out[k * n + i].
template <class C>
void bitwise_kernel(kl::Ptr<kl::Scalar<C>> a_ptr, kl::Ptr<kl::Scalar<C>> b_ptr, kl::Ptr<kl::Scalar<C>> shift_ptr,
                    kl::Scalar<C> s, kl::Ptr<kl::Scalar<C>> out, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto a = kl::load(a_ptr + offs, mask);
  auto b = kl::load(b_ptr + offs, mask);
  auto shift = kl::load(shift_ptr + offs, mask);
  auto c = a;
  c ^= b;
  c |= 1;
  int k = 0;
  auto put = [&](const auto& v) { kl::store(out + (offs + (k++) * n), v, mask); };
  put(a & b);
  put(a | b);
  put(a ^ b);
  put(~a);
  put(a << shift);
  put(a >> shift);
  put(kl::umulhi(a, b));
  put(a & 0x5A);
  put(a << 1);
  put(a >> s);
  put(c);
}

template <class T>
std::array<T, kOps> bitwise_reference(T a, T b, T shift, T s) {
  using U = std::make_unsigned_t<T>;
  constexpr int bits = 8 * sizeof(T);
  auto shl = [](T x, T amount) {
    return amount >= bits ? T{0} : static_cast<T>(static_cast<std::uint64_t>(x) << amount);
  };
  auto shr = [](T x, T amount) {
    if (amount >= bits) return std::is_signed_v<T> && x < 0 ? static_cast<T>(-1) : T{0};
    return static_cast<T>(x >> amount);  // arithmetic for signed (C++20), logical for unsigned
  };
  const unsigned __int128 product = static_cast<unsigned __int128>(static_cast<U>(a)) * static_cast<U>(b);
  return {static_cast<T>(a & b),
          static_cast<T>(a | b),
          static_cast<T>(a ^ b),
          static_cast<T>(~a),
          shl(a, shift),
          shr(a, shift),
          static_cast<T>(static_cast<U>(product >> bits)),
          static_cast<T>(a & 0x5A),
          shl(a, 1),
          shr(a, s),
          static_cast<T>((a ^ b) | 1)};
}

template <class T>
class Bitwise : public ::testing::Test {};
TYPED_TEST_SUITE(Bitwise, kiln::test::IntTypes, kiln::test::DTypeNames);

TYPED_TEST(Bitwise, BitOperationsShiftsAndUmulhiMatchTheReference) {
  using T = TypeParam;
  const int n = 555;
  constexpr int bits = 8 * sizeof(T);
  auto a = kiln::test::random_values<T>(n, 301, -1e30, 1e30);
  const auto b = kiln::test::random_values<T>(n, 302, -1e30, 1e30);
  // Shift amounts 0 … width + 2: those >= the width are defined too.
  const auto shift = kiln::test::random_values<T>(n, 303, 0, bits + 2);
  a[0] = std::numeric_limits<T>::min();
  a[1] = std::numeric_limits<T>::max();
  const T s = static_cast<T>(bits / 2 + 1);
  kl::Buffer<T> out(static_cast<std::size_t>(kOps) * n);
  kl::compile<bitwise_kernel<T>>().launch(kl::Grid(kl::cdiv(n, kBlock)), kiln::test::to_buffer(a),
                                          kiln::test::to_buffer(b), kiln::test::to_buffer(shift), s, out, n);
  static const char* const names[kOps] = {"a & b",      "a | b",       "a ^ b",         "~a",
                                          "a << shift", "a >> shift",  "umulhi(a, b)",  "a & 0x5A",
                                          "a << 1",     "a >> scalar", "a ^= b; a |= 1"};
  std::vector<std::vector<T>> want(kOps, std::vector<T>(n));
  for (int i = 0; i < n; ++i) {
    const auto r = bitwise_reference(a[i], b[i], shift[i], s);
    for (int k = 0; k < kOps; ++k) want[k][i] = r[k];
  }
  const auto got = out.to_host();
  for (int k = 0; k < kOps; ++k)
    kiln::test::expect_equal(std::vector<T>(got.begin() + k * n, got.begin() + (k + 1) * n), want[k], names[k]);
}

}  // namespace
