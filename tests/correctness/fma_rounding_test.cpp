// fma of f16 and bf16 rounds once, as PTX's fma.rn.f16 and fma.rn.bf16 do,
// on every device: operands whose exact a*b+c lies just past a midpoint of
// the narrow format that an f32 rounding lands on exactly (so an f32 fma
// followed by a second rounding ties to the other neighbour), found by exact
// rational search, and random operands; the reference rounds the exact
// result (long double holds it exactly here) once.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cast_reference.hpp"

namespace {

namespace kl = kiln;

constexpr int kBlock = 64;

template <class T>
void fma_kernel(kl::Ptr<kl::Scalar<T>> a, kl::Ptr<kl::Scalar<T>> b, kl::Ptr<kl::Scalar<T>> c,
                kl::Ptr<kl::Scalar<T>> out) {
  auto offs = kl::arange<kBlock>();
  kl::store(out + offs, kl::fma(kl::load(a + offs), kl::load(b + offs), kl::load(c + offs)));
}

struct Triple {
  std::uint16_t a, b, c;
};

template <class T>
std::vector<Triple> double_rounding_cases() {
  if constexpr (std::is_same_v<T, kl::half>)
    return {{0x4236, 0x3eff, 0x06c2}, {0x43e0, 0x3ce1, 0x03ff}, {0x3f73, 0x417a, 0x063d}, {0x3e53, 0x434d, 0x011f}};
  else return {{0x4042, 0x4020, 0x3279}, {0x3fc0, 0x3f8b, 0x30c8}, {0x3fbc, 0x4060, 0x33f7}, {0x3fac, 0x3fe0, 0x3185}};
}

template <class T>
class NarrowFma : public ::testing::Test {};
using NarrowTypes = ::testing::Types<kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(NarrowFma, NarrowTypes, kiln::test::DTypeNames);

TYPED_TEST(NarrowFma, RoundsOnceAsFmaRnDoes) {
  using T = TypeParam;
  using namespace kiln::test::cast;
  const DType dtype = kl::dtype_v<T>;
  const Format format = format_of(dtype);
  std::vector<T> a = kiln::test::random_values<T>(kBlock, 21), b = kiln::test::random_values<T>(kBlock, 22),
                 c = kiln::test::random_values<T>(kBlock, 23, -0.01, 0.01);
  const std::vector<Triple> cases = double_rounding_cases<T>();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    a[i] = T::from_bits(cases[i].a);
    b[i] = T::from_bits(cases[i].b);
    c[i] = T::from_bits(cases[i].c);
  }
  kl::Buffer<T> out(kBlock);
  kl::compile<fma_kernel<T>>().launch(kl::Grid(1), kiln::test::to_buffer(a), kiln::test::to_buffer(b),
                                      kiln::test::to_buffer(c), out);
  const std::vector<T> got = out.to_host();
  for (int i = 0; i < kBlock; ++i) {
    const long double exact =
        static_cast<long double>(static_cast<float>(a[i])) * static_cast<float>(b[i]) + static_cast<float>(c[i]);
    const long double want = round_to_format(exact, format);
    EXPECT_EQ(static_cast<long double>(static_cast<float>(got[i])), want)
        << "element " << i << ": fma(" << static_cast<float>(a[i]) << ", " << static_cast<float>(b[i]) << ", "
        << static_cast<float>(c[i]) << ")";
    if (i < static_cast<int>(cases.size())) {
      EXPECT_NE(round_to_format(round_to_format(exact, format_of(DType::f32)), format), want)
          << "element " << i << " is a double-rounding case";
    }
  }
}

}  // namespace
