// Correctness of C-like dtype promotion in mixed expressions: tile with tile
// of another dtype, with a scalar, and with C++ literals (which take the other
// operand's dtype where their kind agrees). The result's C++ type is checked
// with static_assert, its values against a reference that converts each
// operand as `cast` does and computes in the promoted dtype.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::as_double;
using kiln::test::from_double;

constexpr int kBlock = 32;
template <class E>
using T1 = kl::Tile<E, kBlock>;

// Stores v, whose type must be exactly Want (a compile error otherwise).
template <class Want, class Got, class P, class O, class M>
void put(const P& out, const O& offs, const Got& v, const M& mask) {
  static_assert(std::is_same_v<Got, Want>, "promotion: unexpected result type");
  kl::store(out + offs, v, mask);
}

// Output segment k of a dtype is out[k * n + i].
void promotion_kernel(kl::Ptr<kl::i8> pi8, kl::Ptr<kl::u8> pu8, kl::Ptr<kl::i32> pi32, kl::Ptr<kl::u32> pu32,
                      kl::Ptr<kl::i64> pi64, kl::Ptr<kl::u64> pu64, kl::Ptr<kl::f16> pf16, kl::Ptr<kl::bf16> pbf16,
                      kl::Ptr<kl::f32> pf32, kl::Ptr<kl::f64> pf64, kl::i32 si, kl::f32 sf, kl::Ptr<kl::i8> out_i8,
                      kl::Ptr<kl::u8> out_u8, kl::Ptr<kl::i32> out_i32, kl::Ptr<kl::u32> out_u32,
                      kl::Ptr<kl::i64> out_i64, kl::Ptr<kl::f16> out_f16, kl::Ptr<kl::bf16> out_bf16,
                      kl::Ptr<kl::f32> out_f32, kl::Ptr<kl::f64> out_f64, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  auto i8 = kl::load(pi8 + offs, mask);
  auto u8 = kl::load(pu8 + offs, mask);
  auto i32 = kl::load(pi32 + offs, mask);
  auto u32 = kl::load(pu32 + offs, mask);
  auto i64 = kl::load(pi64 + offs, mask);
  auto u64 = kl::load(pu64 + offs, mask);
  auto f16 = kl::load(pf16 + offs, mask);
  auto bf16 = kl::load(pbf16 + offs, mask);
  auto f32 = kl::load(pf32 + offs, mask);
  auto f64 = kl::load(pf64 + offs, mask);
  auto seg = [&](int k) { return offs + k * n; };
  // Tiles of two dtypes: floats win, then the wider, then unsigned at equal width.
  put<T1<kl::i32>>(out_i32, seg(0), i8 + i32, mask);
  put<T1<kl::u8>>(out_u8, seg(0), u8 * i8, mask);
  put<T1<kl::u32>>(out_u32, seg(0), i32 - u32, mask);
  put<T1<kl::i64>>(out_i64, seg(0), u32 + i64, mask);
  put<T1<kl::f32>>(out_f32, seg(0), f16 + bf16, mask);
  put<T1<kl::f32>>(out_f32, seg(1), f16 * f32, mask);
  put<T1<kl::f16>>(out_f16, seg(0), i64 + f16, mask);
  put<T1<kl::bf16>>(out_bf16, seg(0), u8 + bf16, mask);
  put<T1<kl::f64>>(out_f64, seg(0), f64 - i32, mask);
  put<T1<kl::i32>>(out_i32, seg(1), (i32 > 0) + i32, mask);
  // Literals: an int literal takes an int or float operand's dtype; a float
  // literal takes a float operand's dtype and makes ints f32.
  put<T1<kl::f16>>(out_f16, seg(1), f16 + 1.0f, mask);
  put<T1<kl::f32>>(out_f32, seg(2), i32 + 1.5, mask);
  put<T1<kl::u8>>(out_u8, seg(1), u8 + 1, mask);
  put<T1<kl::i8>>(out_i8, seg(0), i8 * 2, mask);
  put<T1<kl::f64>>(out_f64, seg(1), 1.5 * f64, mask);
  put<T1<kl::bf16>>(out_bf16, seg(1), bf16 + 2, mask);
  put<T1<kl::f32>>(out_f32, seg(3), u64 + 1.5, mask);
  // Scalars promote like tiles and broadcast.
  put<T1<kl::f32>>(out_f32, seg(4), i32 + sf, mask);
  put<T1<kl::i32>>(out_i32, seg(2), si + i8, mask);
}

template <class T>
std::vector<T> segment(const kl::Buffer<T>& b, int k, int n) {
  const std::vector<T> all = b.to_host();
  return std::vector<T>(all.begin() + static_cast<std::ptrdiff_t>(k) * n,
                        all.begin() + static_cast<std::ptrdiff_t>(k + 1) * n);
}

TEST(Promotion, MixedDtypesScalarsAndLiteralsMatchTheReference) {
  const int n = 333;
  const auto i8 = kiln::test::random_values<std::int8_t>(n, 401, -128, 127);
  const auto u8 = kiln::test::random_values<std::uint8_t>(n, 402, 0, 255);
  const auto i32 = kiln::test::random_values<std::int32_t>(n, 403, -3e9, 3e9);
  const auto u32 = kiln::test::random_values<std::uint32_t>(n, 404, 0, 5e9);
  const auto i64 = kiln::test::random_values<std::int64_t>(n, 405, -3000, 3000);  // stays finite in f16
  const auto u64 = kiln::test::random_values<std::uint64_t>(n, 406, 0, 1e19);
  const auto f16 = kiln::test::random_values<kl::half>(n, 407);
  const auto bf16 = kiln::test::random_values<kl::bfloat16>(n, 408);
  const auto f32 = kiln::test::random_values<float>(n, 409);
  const auto f64 = kiln::test::random_values<double>(n, 410);
  const std::int32_t si = 100000;
  const float sf = 0.375f;
  kl::Buffer<std::int8_t> out_i8(n);
  kl::Buffer<std::uint8_t> out_u8(2 * n);
  kl::Buffer<std::int32_t> out_i32(3 * n);
  kl::Buffer<std::uint32_t> out_u32(n);
  kl::Buffer<std::int64_t> out_i64(n);
  kl::Buffer<kl::half> out_f16(2 * n);
  kl::Buffer<kl::bfloat16> out_bf16(2 * n);
  kl::Buffer<float> out_f32(5 * n);
  kl::Buffer<double> out_f64(2 * n);
  using kiln::test::to_buffer;
  kl::compile<promotion_kernel>().launch(kl::Grid(kl::cdiv(n, kBlock)), to_buffer(i8), to_buffer(u8), to_buffer(i32),
                                         to_buffer(u32), to_buffer(i64), to_buffer(u64), to_buffer(f16),
                                         to_buffer(bf16), to_buffer(f32), to_buffer(f64), si, sf, out_i8, out_u8,
                                         out_i32, out_u32, out_i64, out_f16, out_bf16, out_f32, out_f64, n);

  // References. Integer results wrap (C++20 conversions keep the low bits);
  // operands converted to floats round to nearest even; each float result is
  // the exact value (computed exactly in double, or with C++ float arithmetic
  // for f32) rounded once, so the comparison is exact (0 ulps).
  std::vector<std::int8_t> w_i8(n);
  std::vector<std::uint8_t> w_u8[2] = {std::vector<std::uint8_t>(n), std::vector<std::uint8_t>(n)};
  std::vector<std::int32_t> w_i32[3] = {std::vector<std::int32_t>(n), std::vector<std::int32_t>(n),
                                        std::vector<std::int32_t>(n)};
  std::vector<std::uint32_t> w_u32(n);
  std::vector<std::int64_t> w_i64(n);
  std::vector<kl::half> w_f16[2] = {std::vector<kl::half>(n), std::vector<kl::half>(n)};
  std::vector<kl::bfloat16> w_bf16[2] = {std::vector<kl::bfloat16>(n), std::vector<kl::bfloat16>(n)};
  std::vector<float> w_f32[5] = {std::vector<float>(n), std::vector<float>(n), std::vector<float>(n),
                                 std::vector<float>(n), std::vector<float>(n)};
  std::vector<double> w_f64[2] = {std::vector<double>(n), std::vector<double>(n)};
  for (int i = 0; i < n; ++i) {
    const double h = as_double(f16[i]), b = as_double(bf16[i]);
    w_i32[0][i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(i8[i]) + static_cast<std::uint32_t>(i32[i]));
    w_u8[0][i] = static_cast<std::uint8_t>(u8[i] * static_cast<std::uint8_t>(i8[i]));
    w_u32[i] = static_cast<std::uint32_t>(i32[i]) - u32[i];
    w_i64[i] = static_cast<std::int64_t>(u32[i]) + i64[i];
    w_f32[0][i] = static_cast<float>(h + b);
    w_f32[1][i] = static_cast<float>(h * static_cast<double>(f32[i]));
    w_f16[0][i] = from_double<kl::half>(as_double(from_double<kl::half>(static_cast<double>(i64[i]))) + h);
    w_bf16[0][i] = from_double<kl::bfloat16>(static_cast<double>(u8[i]) + b);
    w_f64[0][i] = f64[i] - static_cast<double>(i32[i]);
    w_i32[1][i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(i32[i]) + (i32[i] > 0 ? 1u : 0u));
    w_f16[1][i] = from_double<kl::half>(h + 1.0);
    w_f32[2][i] = static_cast<float>(i32[i]) + 1.5f;
    w_u8[1][i] = static_cast<std::uint8_t>(u8[i] + 1);
    w_i8[i] = static_cast<std::int8_t>(i8[i] * 2);
    w_f64[1][i] = 1.5 * f64[i];
    w_bf16[1][i] = from_double<kl::bfloat16>(b + 2.0);
    w_f32[3][i] = static_cast<float>(u64[i]) + 1.5f;
    w_f32[4][i] = static_cast<float>(i32[i]) + sf;
    w_i32[2][i] = si + i8[i];
  }
  using kiln::test::expect_equal;
  expect_equal(segment(out_i32, 0, n), w_i32[0], "i8 + i32 -> i32");
  expect_equal(segment(out_u8, 0, n), w_u8[0], "u8 * i8 -> u8");
  expect_equal(segment(out_u32, 0, n), w_u32, "i32 - u32 -> u32");
  expect_equal(segment(out_i64, 0, n), w_i64, "u32 + i64 -> i64");
  expect_equal(segment(out_f32, 0, n), w_f32[0], "f16 + bf16 -> f32");
  expect_equal(segment(out_f32, 1, n), w_f32[1], "f16 * f32 -> f32");
  expect_equal(segment(out_f16, 0, n), w_f16[0], "i64 + f16 -> f16");
  expect_equal(segment(out_bf16, 0, n), w_bf16[0], "u8 + bf16 -> bf16");
  expect_equal(segment(out_f64, 0, n), w_f64[0], "f64 - i32 -> f64");
  expect_equal(segment(out_i32, 1, n), w_i32[1], "(i32 > 0) + i32 -> i32");
  expect_equal(segment(out_f16, 1, n), w_f16[1], "f16 + 1.0f -> f16");
  expect_equal(segment(out_f32, 2, n), w_f32[2], "i32 + 1.5 -> f32");
  expect_equal(segment(out_u8, 1, n), w_u8[1], "u8 + 1 -> u8");
  expect_equal(segment(out_i8, 0, n), w_i8, "i8 * 2 -> i8");
  expect_equal(segment(out_f64, 1, n), w_f64[1], "1.5 * f64 -> f64");
  expect_equal(segment(out_bf16, 1, n), w_bf16[1], "bf16 + 2 -> bf16");
  expect_equal(segment(out_f32, 3, n), w_f32[3], "u64 + 1.5 -> f32");
  expect_equal(segment(out_f32, 4, n), w_f32[4], "i32 + f32 scalar -> f32");
  expect_equal(segment(out_i32, 2, n), w_i32[2], "i32 scalar + i8 -> i32");
}

}  // namespace
