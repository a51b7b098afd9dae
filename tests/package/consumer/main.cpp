// A program built against an installed kiln: its own kernel (scaled row sums
// of a matrix) and the installed vector_add sample, each launched on random
// inputs and compared with a plain loop, and the library's conv2d + BN + SiLU
// (kiln::kernels) called on this program's buffers, with the plan its shape
// rule picks, and checked against its reference. Exits 1 on a mismatch.
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include <kiln/kernels/conv2d_bn_silu.hpp>
#include <kiln/kernels/vector_add.hpp>
#include <kiln/kiln.hpp>

namespace kl = kiln;

/// out[r] = scale * sum_c x[r, c] + shift, ROWS rows per program, the columns
/// walked BLOCK at a time in a runtime loop; rows and columns past the ends are masked.
template <int ROWS, int BLOCK>
void scaled_row_sum(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n_rows, kl::i32 n_cols, kl::f32 scale,
                    kl::f32 shift) {
  auto rows = kl::program_id(0) * ROWS + kl::arange<ROWS>();
  auto row_mask = rows < n_rows;
  kl::Var acc = kl::zeros<kl::f32, ROWS>();
  for (auto start : kl::range(0, n_cols, BLOCK)) {
    auto cols = start + kl::arange<BLOCK>();
    auto mask = kl::expand_dims<1>(row_mask) & kl::expand_dims<0>(cols < n_cols);
    auto tile = kl::load(x + kl::expand_dims<1>(rows) * n_cols + kl::expand_dims<0>(cols), mask);
    acc = acc + kl::sum(tile, kl::axis<1>);
  }
  kl::store(out + rows, acc * scale + shift, row_mask);
}

namespace {

std::vector<float> random_floats(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

bool check_scaled_row_sum(std::mt19937& rng) {
  constexpr int rows = 37, cols = 301, row_block = 8;
  const float scale = 0.75f, shift = -1.5f;
  std::vector<float> x = random_floats(static_cast<std::size_t>(rows) * cols, rng);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(rows);
  kl::compile<scaled_row_sum<row_block, 64>>().launch({(rows + row_block - 1) / row_block}, x_buffer, out, rows, cols,
                                                      scale, shift);
  std::vector<float> got = out.to_host();
  for (int r = 0; r < rows; ++r) {
    double sum = 0, magnitude = 0;
    for (int c = 0; c < cols; ++c) {
      sum += x[static_cast<std::size_t>(r) * cols + c];
      magnitude += std::fabs(x[static_cast<std::size_t>(r) * cols + c]);
    }
    double expected = scale * sum + shift;
    // f32 summation error grows with the row length and the sum of magnitudes.
    double tolerance =
        2.0 * cols * std::numeric_limits<float>::epsilon() * (std::fabs(scale) * magnitude + std::fabs(shift));
    if (std::fabs(got[r] - expected) > tolerance) {
      std::fprintf(stderr, "consumer: scaled_row_sum: row %d is %.9g, expected %.9g (tolerance %.3g)\n", r, got[r],
                   expected, tolerance);
      return false;
    }
  }
  return true;
}

bool check_vector_add(std::mt19937& rng) {
  constexpr int n = 1000;
  std::vector<float> x = random_floats(n, rng), y = random_floats(n, rng);
  auto x_buffer = kl::Buffer<float>::from(x), y_buffer = kl::Buffer<float>::from(y);
  kl::Buffer<float> out(n);
  kl::compile<kl::kernels::vector_add<kl::f32, 256>>().launch({(n + 255) / 256}, x_buffer, y_buffer, out, n);
  std::vector<float> got = out.to_host(), expected = kl::kernels::vector_add_reference(x, y);
  for (int i = 0; i < n; ++i) {
    if (got[i] != expected[i]) {
      std::fprintf(stderr, "consumer: vector_add: element %d is %.9g, expected %.9g\n", i, got[i], expected[i]);
      return false;
    }
  }
  return true;
}

/// The library's fused conv2d + BN + SiLU on this program's own buffers, one
/// call: the shape rule picks the variant for the device, and each output
/// must lie within the library's per-element bound of its double reference.
bool check_library_conv2d(std::mt19937& rng) {
  const kl::kernels::Conv2dShape shape{.n = 2, .c = 8, .h = 9, .w = 11, .k = 24, .r = 3, .s = 3, .pad = 1};
  const std::vector<float> x = random_floats(static_cast<std::size_t>(shape.input_size()), rng),
                           w = random_floats(static_cast<std::size_t>(shape.weight_size()), rng),
                           scale = random_floats(static_cast<std::size_t>(shape.k), rng),
                           shift = random_floats(static_cast<std::size_t>(shape.k), rng);
  auto x_buffer = kl::Buffer<float>::from(x), w_buffer = kl::Buffer<float>::from(w);
  auto scale_buffer = kl::Buffer<float>::from(scale), shift_buffer = kl::Buffer<float>::from(shift);
  kl::Buffer<float> y(static_cast<std::size_t>(shape.output_size()));
  const kl::kernels::Conv2dPlan plan =
      kl::kernels::conv2d_bn_silu(shape, x_buffer, w_buffer, scale_buffer, shift_buffer, y);
  const auto reference = kl::kernels::conv2d_bn_silu_reference(x, w, scale, shift, shape);
  const std::vector<double> bound = kl::kernels::conv2d_error_bound(reference, shape.reduction(), kl::ir::DType::f32);
  const std::vector<float> got = y.to_host();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - reference.y[i]) <= bound[i])) {
      std::fprintf(stderr, "consumer: conv2d_bn_silu: element %zu is %.9g, expected %.9g (bound %.3g)\n", i, got[i],
                   reference.y[i], bound[i]);
      return false;
    }
  }
  std::printf("consumer: conv2d_bn_silu %s: %s\n", shape.to_string().c_str(),
              kl::kernels::conv2d_plan_summary(plan).c_str());
  return true;
}

}  // namespace

int main() {
  std::mt19937 rng(20240611);
  bool ok = check_scaled_row_sum(rng);
  ok = check_vector_add(rng) && ok;
  ok = check_library_conv2d(rng) && ok;
  if (!ok) return 1;
  std::puts("consumer: scaled_row_sum, vector_add and the library's conv2d_bn_silu match their references");
  return 0;
}
