// Chapter 22, "Your kernel as a library function": a program calling the
// rownorm library (examples/book/library), which wraps a kiln kernel in one
// C++ function. It normalises matrices of several widths, each checked
// against plain C++, and shows the errors the function gives for arguments it
// cannot take.
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "rownorm/rownorm.hpp"

namespace kl = kiln;

std::mt19937 random_engine(2024);
int failures = 0;
const double u = std::numeric_limits<float>::epsilon() / 2;

/// Checks out = x / sqrt(mean(x^2) + eps) row by row: the sum of n squares
/// (n roundings relative to the sum), the division, rsqrt (a few units of
/// roundoff on a GPU) and the product.
void check(const std::vector<float>& x, const std::vector<float>& out, int rows, int cols, float eps) {
  for (int r = 0; r < rows; ++r) {
    double squares = 0;
    for (int c = 0; c < cols; ++c) squares += double{x[r * cols + c]} * x[r * cols + c];
    const double scale = 1 / std::sqrt(squares / cols + eps), bound = (cols + 8) * u;
    for (int c = 0; c < cols; ++c) {
      const double want = x[r * cols + c] * scale;
      failures += !(std::abs(out[r * cols + c] - want) <= bound * std::abs(want));
    }
  }
}

void normalize(int rows, int cols) {
  std::uniform_real_distribution<float> distribution(-2.0f, 2.0f);
  std::vector<float> x(static_cast<std::size_t>(rows) * cols);
  for (float& v : x) v = distribution(random_engine);
  // [book:call]
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(x.size());
  rownorm::normalize_rows(x_buffer, out, rows, cols);
  std::printf("%4d x %-5d %s\n", rows, cols, rownorm::configuration(cols).c_str());
  // [/book:call]
  check(x, out.to_host(), rows, cols, 1e-6f);
  rownorm::normalize_rows(x_buffer, x_buffer, rows, cols);  // in place
  check(x, x_buffer.to_host(), rows, cols, 1e-6f);
}

void show_error(const char* what, int rows, int cols, std::size_t x_size, std::size_t out_size,
                kl::Device out_device = kl::Device::default_device()) {
  kl::Buffer<float> x(x_size), out(out_size, out_device);
  try {
    rownorm::normalize_rows(x, out, rows, cols);
    std::printf("%s: no error\n", what);
    ++failures;
  } catch (const std::invalid_argument& e) {
    std::printf("%s: %s\n", what, e.what());
  }
}

int main() {
  normalize(300, 100);
  normalize(64, 1000);
  normalize(16, 3000);
  normalize(4, 10000);
  show_error("x too small", 64, 1000, 63000, 64000);
  show_error("out too small", 64, 1000, 64000, 1000);
  show_error("no columns", 64, 0, 0, 0);
  show_error("too large", 1 << 20, 4096, 1, 1);
  const kl::Device other = kl::Device::default_device() == kl::Device::cpu() ? kl::Device::emu() : kl::Device::cpu();
  show_error("two devices", 64, 1000, 64000, 64000, other);
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
