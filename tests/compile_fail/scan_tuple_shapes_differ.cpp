// expect: associative_scan inputs must share one shape
// A linear recurrence h = a h + x whose coefficients are one row while the
// inputs are a whole [4, 64] tile: a scan of several tiles takes them element
// by element, so they must have one shape (broadcast a first).
#include <tuple>

#include "kiln/kiln.hpp"

namespace kl = kiln;

void recurrence(kl::Ptr<kl::f32> a, kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> h) {
  auto cols = kl::arange<64>();
  auto offsets = kl::expand_dims<1>(kl::arange<4>()) * 64 + kl::expand_dims<0>(cols);
  auto coefficients = kl::expand_dims<0>(kl::load(a + cols));
  auto inputs = kl::load(x + offsets);
  auto [products, states] =
      kl::associative_scan(std::make_tuple(coefficients, inputs), kl::axis<1>,
                           [](auto a1, auto x1, auto a2, auto x2) { return std::make_tuple(a1 * a2, a2 * x1 + x2); });
  kl::store(h + offsets, states);
}

void launch_recurrence(kl::Buffer<float>& a, kl::Buffer<float>& x, kl::Buffer<float>& h) {
  kl::compile<recurrence>().launch({1}, a, x, h);
}
