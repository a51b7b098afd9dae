// Chapter 12, "Reductions and scans": the first-order linear recurrence
// h[t] = a[t] h[t-1] + x[t] along each row, as one scan of (a, x) pairs,
// checked against the sequential loop in double.
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:recurrence]
template <int BLOCK>
void recurrence(kl::Ptr<kl::f32> a, kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> h, kl::i32 length) {
  auto t = kl::arange<BLOCK>();
  auto mask = t < length;
  auto offsets = kl::program_id(0) * length + t;  // one row per program
  // The padding is the step (1, 0), which leaves h as it is.
  auto av = kl::load(a + offsets, mask, {.other = 1});
  auto xv = kl::load(x + offsets, mask);
  auto [decay, state] = kl::associative_scan(std::tuple(av, xv), kl::axis<0>, [](auto a1, auto x1, auto a2, auto x2) {
    return std::tuple(a1 * a2, a2 * x1 + x2);  // step (a1, x1), then step (a2, x2)
  });
  kl::store(h + offsets, state, mask);
}
// [/book:recurrence]

int main() {
  // [book:recurrence_check]
  constexpr int kRows = 8, kLength = 1000, kBlock = 1024;
  std::mt19937 random(12);
  std::uniform_real_distribution<float> decays(0.8f, 1.0f), inputs(-1.0f, 1.0f);
  std::vector<float> a(kRows * kLength), x(kRows * kLength);
  for (float& e : a) e = decays(random);
  for (float& e : x) e = inputs(random);
  kl::Buffer<float> h(kRows * kLength);
  kl::compile<recurrence<kBlock>>().launch(kl::Grid(kRows), kl::Buffer<float>::from(a), kl::Buffer<float>::from(x), h,
                                           kLength);
  const std::vector<float> got = h.to_host();
  // The scan groups the steps its own way: each h[t] is within
  // gamma(2 kLength) = 2 kLength u / (1 - 2 kLength u) of the sum of its
  // terms' magnitudes, the same recurrence on |a| and |x|.
  const double u = 0x1p-24, gamma = 2 * kLength * u / (1 - 2 * kLength * u);
  int outside = 0;
  std::vector<double> exact(kRows * kLength);
  for (int r = 0; r < kRows; ++r) {
    double state = 0, magnitude = 0;
    for (int t = 0; t < kLength; ++t) {
      const int i = r * kLength + t;
      state = a[i] * state + x[i];
      magnitude = std::abs(a[i]) * magnitude + std::abs(x[i]);
      exact[i] = state;
      if (std::abs(got[i] - state) > gamma * magnitude) ++outside;
    }
  }
  std::printf("%d rows of %d steps, one row per program in a %d-element tile\n", kRows, kLength, kBlock);
  std::printf("row 0: h[0] = %.4f, h[1] = %.4f, h[999] = %.4f\n", got[0], got[1], got[kLength - 1]);
  std::printf("row 0, sequential loop in double: h[999] = %.4f\n", exact[kLength - 1]);
  std::printf("elements outside the bound: %d of %d\n", outside, kRows * kLength);
  // [/book:recurrence_check]
  return outside == 0 ? 0 : 1;
}
