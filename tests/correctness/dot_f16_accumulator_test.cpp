// dot with an f16 accumulator (Triton's out_dtype=tl.float16): f16 operands,
// the inner product and the accumulator summed in f32 and rounded to f16
// once per dot, with and without a given accumulator and across a K loop
// that rounds at each step, on every device.
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference_support.hpp"

namespace kl = kiln;

namespace f16_dot_kernels {

// out = acc + a @ b and plain = a @ b, both f16, for one 16x8 tile with K = 32.
void dot_f16(kl::Ptr<kl::f16> a, kl::Ptr<kl::f16> b, kl::Ptr<kl::f16> acc, kl::Ptr<kl::f16> out,
             kl::Ptr<kl::f16> plain) {
  auto m = kl::expand_dims<1>(kl::arange<16>());
  auto k_across = kl::expand_dims<0>(kl::arange<32>());
  auto k_down = kl::expand_dims<1>(kl::arange<32>());
  auto n = kl::expand_dims<0>(kl::arange<8>());
  auto ta = kl::load(a + m * 32 + k_across);
  auto tb = kl::load(b + k_down * 8 + n);
  kl::store(out + m * 8 + n, kl::dot(ta, tb, kl::load(acc + m * 8 + n)));
  kl::store(plain + m * 8 + n, kl::dot<kl::f16>(ta, tb));
}

// A 16x8 block of a @ b over k in steps of 16, the f16 accumulator rounded
// after each step.
void looped_f16(kl::Ptr<kl::f16> a, kl::Ptr<kl::f16> b, kl::Ptr<kl::f16> out, kl::i32 k) {
  auto m = kl::expand_dims<1>(kl::arange<16>());
  auto n = kl::expand_dims<0>(kl::arange<8>());
  kl::Var acc = kl::zeros<kl::f16, 16, 8>();
  for (auto k0 : kl::range(0, k, 16)) {
    auto ks_across = k0 + kl::expand_dims<0>(kl::arange<16>());
    auto ks_down = k0 + kl::expand_dims<1>(kl::arange<16>());
    acc = kl::dot(kl::load(a + m * k + ks_across), kl::load(b + ks_down * 8 + n), acc);
  }
  kl::store(out + m * 8 + n, acc);
}

}  // namespace f16_dot_kernels

namespace {

using kiln::test::as_double;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::random_values;

/// A bound on |f16(x) - x|: 2^-11 |x| for normal results, 2^-25 (half the
/// smallest subnormal step, 2^-24) below them.
double f16_rounding(double x) { return 0x1p-11 * std::abs(x) + 0x1p-24; }

TEST(DotF16Accumulator, OneRoundingOfTheF32Sum) {
  const auto a = random_values<kl::half>(16 * 32, 61, -2, 2);
  const auto b = random_values<kl::half>(32 * 8, 62, -2, 2);
  const auto acc = random_values<kl::half>(16 * 8, 63, -50, 50);
  const auto ba = kl::Buffer<kl::half>::from(a), bb = kl::Buffer<kl::half>::from(b);
  const auto bacc = kl::Buffer<kl::half>::from(acc);
  kl::Buffer<kl::half> out(16 * 8), plain(16 * 8);
  kl::compile<f16_dot_kernels::dot_f16>().launch(kl::Grid(1), ba, bb, bacc, out, plain);
  // The f32 sum of 32 exact products and the accumulator is within
  // gamma_33(2^-24) (|acc| + sum |ab|) of the exact value; one f16 rounding follows.
  std::vector<double> want_out, want_plain, bound_out, bound_plain;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      double sum = 0, magnitude = 0;
      for (int k = 0; k < 32; ++k) {
        const double p = as_double(a[i * 32 + k]) * as_double(b[k * 8 + j]);
        sum += p;
        magnitude += std::abs(p);
      }
      const double c = as_double(acc[i * 8 + j]);
      const double g = gamma_bound(33, 0x1p-24);
      want_out.push_back(c + sum);
      bound_out.push_back(g * (std::abs(c) + magnitude) * (1 + 0x1p-11) + f16_rounding(c + sum));
      want_plain.push_back(sum);
      bound_plain.push_back(g * magnitude * (1 + 0x1p-11) + f16_rounding(sum));
    }
  expect_within(out.to_host(), want_out, bound_out, "acc + a @ b in f16");
  expect_within(plain.to_host(), want_plain, bound_plain, "kl::dot<kl::f16>(a, b)");
}

TEST(DotF16Accumulator, KLoopRoundsAfterEachStep) {
  constexpr int k = 80;  // five steps of 16
  const auto a = random_values<kl::half>(16 * k, 64, -1, 1);
  const auto b = random_values<kl::half>(k * 8, 65, -1, 1);
  const auto ba = kl::Buffer<kl::half>::from(a), bb = kl::Buffer<kl::half>::from(b);
  kl::Buffer<kl::half> out(16 * 8);
  kl::compile<f16_dot_kernels::looped_f16>().launch(kl::Grid(1), ba, bb, out, k);
  // Reference: the exact sum, with each step's error bounded as above: the
  // f32 sum of 16 products and the running value, then one f16 rounding of
  // a partial result that is at most the running magnitude.
  std::vector<double> want, bound;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      double exact = 0, running_magnitude = 0, error = 0;
      for (int k0 = 0; k0 < k; k0 += 16) {
        double step_magnitude = 0;
        for (int t = k0; t < k0 + 16; ++t) {
          const double p = as_double(a[i * k + t]) * as_double(b[t * 8 + j]);
          exact += p;
          step_magnitude += std::abs(p);
        }
        running_magnitude += step_magnitude;
        const double g = gamma_bound(17, 0x1p-24);
        error += g * (running_magnitude + error) + f16_rounding((1 + g) * (running_magnitude + error));
      }
      want.push_back(exact);
      bound.push_back(error);
    }
  expect_within(out.to_host(), want, bound, "K loop with an f16 accumulator");
}

}  // namespace
