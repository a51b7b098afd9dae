// Correctness of the rearranging primitives of the standard library (flip,
// cat, interleave, zeros_like, full_like) for every dtype, on 2-D tiles of
// several shapes (1-element axes included), against host references, bit for
// bit (NaN payloads and signed zeros among the float inputs).
#include <cstdint>
#include <vector>

#include "prims_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;
using kiln::test::prims::values_with_specials;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;

constexpr int kPrograms = 3;

template <class C>
double fill_value() {
  if constexpr (std::is_same_v<C, bool>) return 1;
  else if constexpr (kiln::test::is_float_v<C>) return -2.5;
  else if constexpr (std::is_signed_v<C>) return -7;
  else return 7;
}

// Each program rearranges its own R x K tiles of a and b.
template <class C, int R, int K>
void rearrange_kernel(P<C> a_in, P<C> b_in, P<C> flip0, P<C> flip1, P<C> flip_flat, P<C> cat0, P<C> cat1,
                      P<C> interleaved, P<C> zeros, P<C> full) {
  constexpr int size = R * K;
  auto pid = kl::program_id(0);
  auto rows = kl::expand_dims<1>(kl::arange<R>());
  auto cols = kl::expand_dims<0>(kl::arange<K>());
  auto offsets = pid * size + rows * K + cols;
  auto a = kl::load(a_in + offsets);
  auto b = kl::load(b_in + offsets);
  kl::store(flip0 + offsets, kl::flip(a, kl::axis<0>));
  kl::store(flip1 + offsets, kl::flip(a));
  kl::store(flip_flat + pid * size + kl::arange<size>(), kl::flip(kl::reshape<size>(a)));
  auto rows2 = kl::expand_dims<1>(kl::arange<2 * R>());
  auto cols2 = kl::expand_dims<0>(kl::arange<2 * K>());
  kl::store(cat0 + pid * 2 * size + rows2 * K + cols, kl::cat(a, b));
  kl::store(cat1 + pid * 2 * size + rows * (2 * K) + cols2, kl::cat(a, b, kl::axis<1>));
  kl::store(interleaved + pid * 2 * size + rows * (2 * K) + cols2, kl::interleave(a, b));
  kl::store(zeros + offsets, kl::zeros_like(a));
  kl::store(full + offsets, kl::full_like(a, fill_value<C>()));
}

template <class T, int R, int K>
void check_rearrange(std::uint64_t seed) {
  constexpr int size = R * K, total = kPrograms * size;
  const double range = kiln::test::is_float_v<T> ? 100 : 1e9;
  const auto a = values_with_specials<T>(total, seed, -range, range);
  const auto b = values_with_specials<T>(total, seed + 1, -range, range);
  kl::Buffer<T> flip0(total), flip1(total), flip_flat(total), cat0(2 * total), cat1(2 * total), interleaved(2 * total),
      zeros(total), full(total);
  using kiln::test::to_buffer;
  kl::compile<rearrange_kernel<T, R, K>>().launch(kl::Grid(kPrograms), to_buffer(a), to_buffer(b), flip0, flip1,
                                                  flip_flat, cat0, cat1, interleaved, zeros, full);
  std::vector<T> w_flip0(total), w_flip1(total), w_flip_flat(total), w_cat0(2 * total), w_cat1(2 * total),
      w_interleaved(2 * total), w_zeros(total, kiln::test::from_double<T>(0)),
      w_full(total, kiln::test::from_double<T>(fill_value<T>()));
  for (int p = 0; p < kPrograms; ++p) {
    const int base = p * size;
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < K; ++j) {
        const int at = base + i * K + j;
        w_flip0[at] = a[base + (R - 1 - i) * K + j];
        w_flip1[at] = a[base + i * K + (K - 1 - j)];
        w_flip_flat[at] = a[base + size - 1 - (i * K + j)];
        w_cat0[2 * base + i * K + j] = a[at];
        w_cat0[2 * base + (R + i) * K + j] = b[at];
        w_cat1[2 * base + i * 2 * K + j] = a[at];
        w_cat1[2 * base + i * 2 * K + K + j] = b[at];
        w_interleaved[2 * base + i * 2 * K + 2 * j] = a[at];
        w_interleaved[2 * base + i * 2 * K + 2 * j + 1] = b[at];
      }
  }
  expect_equal(flip0.to_host(), w_flip0, "flip along axis 0");
  expect_equal(flip1.to_host(), w_flip1, "flip (last axis)");
  expect_equal(flip_flat.to_host(), w_flip_flat, "flip of the tile as one row");
  expect_equal(cat0.to_host(), w_cat0, "cat along axis 0");
  expect_equal(cat1.to_host(), w_cat1, "cat along axis 1");
  expect_equal(interleaved.to_host(), w_interleaved, "interleave");
  expect_equal(zeros.to_host(), w_zeros, "zeros_like");
  expect_equal(full.to_host(), w_full, "full_like");
}

template <class T>
class Rearrange : public ::testing::Test {};
TYPED_TEST_SUITE(Rearrange, kiln::test::AllTypes, kiln::test::DTypeNames);

TYPED_TEST(Rearrange, FourByEight) { check_rearrange<TypeParam, 4, 8>(901); }
TYPED_TEST(Rearrange, OneRow) { check_rearrange<TypeParam, 1, 16>(902); }
TYPED_TEST(Rearrange, OneColumn) { check_rearrange<TypeParam, 8, 1>(903); }
TYPED_TEST(Rearrange, ThirtyTwoSquare) { check_rearrange<TypeParam, 32, 32>(904); }

}  // namespace
