// Chapter 10, "Fusing an epilogue: conv2d + batchnorm + SiLU": a direct
// convolution whose batchnorm and SiLU run on the accumulator before its one
// store, against the same work as three launches through global memory; the
// bytes each moves against the compulsory traffic; and the variant the
// library's shape rule (kiln/kernels/conv2d_select.hpp) picks for a range of
// layers. Both ways are checked against a double-precision reference.
#include <array>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

#include "kiln/kernels/conv2d_select.hpp"
#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:conv]
/// One output channel (program_id(1)) for BLOCK output positions over the
/// batch (program_id(0)): stride 1, `pad` zeros around each image, an r x s
/// kernel. x is [n, c, h, w], w is [k, c, r, s], y is [n, k, p, q]. With
/// FUSED the epilogue is applied before the store; without it y holds the
/// raw convolution.
template <int BLOCK, bool FUSED>
void conv(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> w, kl::Ptr<kl::f32> scale, kl::Ptr<kl::f32> shift, kl::Ptr<kl::f32> y,
          kl::i32 n, kl::i32 c, kl::i32 h, kl::i32 width, kl::i32 k, kl::i32 r, kl::i32 s, kl::i32 pad) {
  auto p = h + 2 * pad - r + 1, q = width + 2 * pad - s + 1;
  auto channel = kl::program_id(1);
  auto positions = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto in_range = positions < n * p * q;
  auto image = positions / (p * q), pq = positions % (p * q);
  auto top = pq / q - pad, left = pq % q - pad;
  kl::Var acc = kl::zeros<kl::f32, BLOCK>();
  for (auto term : kl::range(0, c * r * s)) {  // (input channel, kernel row, kernel column)
    auto ci = term / (r * s), i = term % (r * s) / s, j = term % s;
    auto row = top + i, col = left + j;
    auto inside = in_range & (row >= 0) & (row < h) & (col >= 0) & (col < width);  // padding reads 0
    acc = acc +
          kl::load(x + ((image * c + ci) * h + row) * width + col, inside) * kl::load(w + channel * c * r * s + term);
  }
  auto out = y + (image * k + channel) * (p * q) + pq;
  if constexpr (FUSED) kl::store(out, kl::silu(acc * kl::load(scale + channel) + kl::load(shift + channel)), in_range);
  else kl::store(out, acc, in_range);
}
// [/book:conv]

// [book:unfused]
/// The batchnorm of the unfused sequence, y = scale[channel] x + shift[channel]:
/// one program per (image, channel) of [n, k, plane] (program_id(0)), BLOCK
/// elements of its plane at a time (program_id(1)), so it loads its channel's
/// scale and shift once.
template <int BLOCK>
void batchnorm(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> scale, kl::Ptr<kl::f32> shift, kl::Ptr<kl::f32> y, kl::i32 k,
               kl::i32 plane) {
  auto channel = kl::program_id(0) % k;
  auto offsets = kl::program_id(1) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < plane;
  auto at = kl::program_id(0) * plane + offsets;
  kl::store(y + at, kl::load(x + at, mask) * kl::load(scale + channel) + kl::load(shift + channel), mask);
}

/// Its SiLU: y = silu(x), element by element.
template <int BLOCK>
void silu(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::i32 size) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < size;
  kl::store(y + offsets, kl::silu(kl::load(x + offsets, mask)), mask);
}
// [/book:unfused]

struct Layer {
  int n, c, h, w, k, r, s, pad;
  int p() const { return h + 2 * pad - r + 1; }
  int q() const { return w + 2 * pad - s + 1; }
  int input_size() const { return n * c * h * w; }
  int weight_size() const { return k * c * r * s; }
  int output_size() const { return n * k * p() * q(); }
};

std::mt19937 random_engine(2024);
std::vector<float> uniform(std::size_t size, float bound) {
  std::uniform_real_distribution<float> distribution(-bound, bound);
  std::vector<float> v(size);
  for (float& e : v) e = distribution(random_engine);
  return v;
}

int failures = 0;
const double u = std::numeric_limits<float>::epsilon() / 2;

/// Checks y against silu(scale conv + shift) in double: the f32 sum of the
/// reduction's terms ((terms - 1) u times the sum of their magnitudes), the
/// scale and the shift (one rounding each), all through SiLU, whose slope is
/// below 1.1, and SiLU's own few roundings.
void check(const Layer& l, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& scale,
           const std::vector<float>& shift, const std::vector<float>& y) {
  const int terms = l.c * l.r * l.s;
  for (int b = 0; b < l.n; ++b)
    for (int o = 0; o < l.k; ++o)
      for (int i = 0; i < l.p(); ++i)
        for (int j = 0; j < l.q(); ++j) {
          double sum = 0, magnitude = 0;
          for (int ci = 0; ci < l.c; ++ci)
            for (int a = 0; a < l.r; ++a)
              for (int e = 0; e < l.s; ++e) {
                const int row = i + a - l.pad, col = j + e - l.pad;
                if (row < 0 || row >= l.h || col < 0 || col >= l.w) continue;
                const double term =
                    double{x[((b * l.c + ci) * l.h + row) * l.w + col]} * w[((o * l.c + ci) * l.r + a) * l.s + e];
                sum += term, magnitude += std::abs(term);
              }
          const double pre = sum * scale[o] + shift[o], want = pre / (1 + std::exp(-pre));
          const double bound = 1.1 * (std::abs(scale[o]) * (terms - 1) * u * magnitude + 2 * u * (std::abs(pre) + 1)) +
                               8 * u * std::abs(want);
          failures += !(std::abs(y[((b * l.k + o) * l.p() + i) * l.q() + j] - want) <= bound);
        }
}

constexpr int BLOCK = 128, ELEMENTWISE_BLOCK = 1024;

// [book:footprints]
/// One line per buffer a launch touched: the distinct bytes it read and
/// wrote (its compulsory traffic), in the order of the kernel's parameters.
double print_footprints(const char* launch, const kl::runtime::LaunchStats& stats,
                        std::initializer_list<const char*> parameters) {
  double compulsory = 0;
  const char* const* name = parameters.begin();
  for (const kl::runtime::BufferFootprint& f : stats.footprints) {
    if (f.bytes_read + f.bytes_written > 0)
      std::printf("    %-9s %-6s read %7llu B, wrote %7llu B\n", launch, *name,
                  static_cast<unsigned long long>(f.bytes_read), static_cast<unsigned long long>(f.bytes_written));
    compulsory += static_cast<double>(f.bytes_read + f.bytes_written);
    ++name;
  }
  return compulsory;
}
// [/book:footprints]

void compare(const Layer& l) {
  const std::vector<float> x = uniform(l.input_size(), 1),
                           w = uniform(l.weight_size(), std::sqrt(3.0f / (l.c * l.r * l.s)));
  const std::vector<float> scale = uniform(l.k, 1.5f), shift = uniform(l.k, 0.5f);
  auto x_buffer = kl::Buffer<float>::from(x), w_buffer = kl::Buffer<float>::from(w);
  auto scale_buffer = kl::Buffer<float>::from(scale), shift_buffer = kl::Buffer<float>::from(shift);
  kl::Buffer<float> y(l.output_size()), conv_out(l.output_size()), bn_out(l.output_size());
  const kl::Grid grid(kl::cdiv(l.n * l.p() * l.q(), BLOCK), l.k),
      planes(l.n * l.k, kl::cdiv(l.p() * l.q(), ELEMENTWISE_BLOCK)),
      elementwise(kl::cdiv(l.output_size(), ELEMENTWISE_BLOCK));
  // [book:counting]
  const kl::runtime::FootprintCounting counting;  // the launches below also count each buffer's distinct bytes
  // [/book:counting]

  const kl::runtime::LaunchStats fused = kl::compile<conv<BLOCK, true>>().launch(
      grid, x_buffer, w_buffer, scale_buffer, shift_buffer, y, l.n, l.c, l.h, l.w, l.k, l.r, l.s, l.pad);
  check(l, x, w, scale, shift, y.to_host());

  kl::runtime::LaunchStats unfused[3] = {
      kl::compile<conv<BLOCK, false>>().launch(grid, x_buffer, w_buffer, scale_buffer, shift_buffer, conv_out, l.n, l.c,
                                               l.h, l.w, l.k, l.r, l.s, l.pad),
      kl::compile<batchnorm<ELEMENTWISE_BLOCK>>().launch(planes, conv_out, scale_buffer, shift_buffer, bn_out, l.k,
                                                         l.p() * l.q()),
      kl::compile<silu<ELEMENTWISE_BLOCK>>().launch(elementwise, bn_out, y, l.output_size())};
  check(l, x, w, scale, shift, y.to_host());

  std::printf("n=%d c=%d h=%d w=%d k=%d r=%d s=%d pad=%d\n", l.n, l.c, l.h, l.w, l.k, l.r, l.s, l.pad);
  std::printf("  fused: read %llu B, wrote %llu B; distinct bytes of each buffer:\n",
              static_cast<unsigned long long>(fused.bytes_read), static_cast<unsigned long long>(fused.bytes_written));
  const double fused_compulsory = print_footprints("conv", fused, {"x", "w", "scale", "shift", "y"});
  std::printf(
      "  unfused: read %llu B, wrote %llu B; distinct bytes of each buffer:\n",
      static_cast<unsigned long long>(unfused[0].bytes_read + unfused[1].bytes_read + unfused[2].bytes_read),
      static_cast<unsigned long long>(unfused[0].bytes_written + unfused[1].bytes_written + unfused[2].bytes_written));
  const double unfused_compulsory = print_footprints("conv", unfused[0], {"x", "w", "scale", "shift", "y"}) +
                                    print_footprints("batchnorm", unfused[1], {"x", "scale", "shift", "y"}) +
                                    print_footprints("silu", unfused[2], {"x", "y"});
  std::printf("  compulsory: fused %.0f B, unfused %.0f B: %.2fx the fused\n", fused_compulsory, unfused_compulsory,
              unfused_compulsory / fused_compulsory);
}

void show_plan(kl::kernels::Conv2dShape shape) {
  const kl::kernels::Conv2dPlan plan = kl::kernels::plan_conv2d(shape, 132);  // an H100 SXM's 132 multiprocessors
  std::printf("c=%-3lld k=%-3lld r=s=%lld groups=%-2lld %s\n", static_cast<long long>(shape.c),
              static_cast<long long>(shape.k), static_cast<long long>(shape.r), static_cast<long long>(shape.groups),
              kl::kernels::conv2d_plan_summary(plan).c_str());
}

int main() {
  compare({2, 16, 28, 28, 32, 3, 3, 1});
  compare({2, 64, 14, 14, 64, 1, 1, 0});
  // [book:plans]
  for (auto [c, k, r, groups] : {std::array{32, 3, 3, 1},
                                 {32, 4, 3, 1},
                                 {1, 16, 3, 1},
                                 {2, 16, 3, 1},
                                 {32, 15, 3, 1},
                                 {32, 48, 3, 1},
                                 {64, 64, 3, 1},
                                 {32, 32, 3, 32}})
    show_plan({.n = 8, .c = c, .h = 56, .w = 56, .k = k, .r = r, .s = r, .pad = r / 2, .groups = groups});
  // [/book:plans]
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
