// An application whose kernels were compiled ahead of time (tests/aot/aot.cmake):
// it links kiln::runtime_core only, and checks each kernel on every device
// named on its command line (default: cpu emu) against plain C++ on random
// inputs. Both kernels are exact on every device (one rounding per f32
// operation, no contraction; integer sums), so results must match bit for bit.
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "aot_app_kernels.hpp"

namespace {

bool check_scale_bias(const kiln::Device& device, std::mt19937& random) {
  const int n = 1008;  // a multiple of 16, as the specialisation assumes; not of the block
  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  std::vector<float> x(n);
  for (float& value : x) value = uniform(random);
  const float scale = uniform(random), bias = uniform(random);
  auto x_buffer = kiln::Buffer<float>::from(x, device);
  kiln::Buffer<float> out(n, device);
  kiln_kernels::scale_bias::launch({(n + 255) / 256}, x_buffer, out, scale, bias, n);
  const std::vector<float> result = out.to_host();
  for (int i = 0; i < n; ++i) {
    const float product = x[i] * scale;
    const float expected = product + bias;
    if (result[i] != expected) {
      std::printf("scale_bias on %s: element %d is %.9g, expected %.9g\n", device.name().c_str(), i, result[i],
                  expected);
      return false;
    }
  }
  try {
    kiln_kernels::scale_bias::launch({4}, x_buffer, out, scale, bias, n - 8);
    std::printf("scale_bias on %s: n = %d, not a multiple of 16, was accepted\n", device.name().c_str(), n - 8);
    return false;
  } catch (const std::invalid_argument& error) {
    if (std::string(error.what()).find("not a multiple of 16") == std::string::npos) {
      std::printf("scale_bias on %s: unexpected message: %s\n", device.name().c_str(), error.what());
      return false;
    }
  }
  return true;
}

bool check_row_sums(const kiln::Device& device, std::mt19937& random) {
  const int rows = 37, cols = 300;
  std::uniform_int_distribution<int> uniform(-1000, 1000);
  std::vector<int> x(rows * cols);
  for (int& value : x) value = uniform(random);
  auto x_buffer = kiln::Buffer<int>::from(x, device);
  kiln::Buffer<int> sums(rows, device);
  kiln_kernels::row_sums::launch({rows}, x_buffer, sums, cols);
  const std::vector<int> result = sums.to_host();
  for (int r = 0; r < rows; ++r) {
    int expected = 0;
    for (int c = 0; c < cols; ++c) expected += x[r * cols + c];
    if (result[r] != expected) {
      std::printf("row_sums on %s: row %d is %d, expected %d\n", device.name().c_str(), r, result[r], expected);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> devices(argv + 1, argv + argc);
  if (devices.empty()) devices = {"cpu", "emu"};
  bool ok = true;
  for (const std::string& name : devices) {
    try {
      const kiln::Device device = kiln::Device::from_name(name);
      std::mt19937 random(2026);
      const bool passed = check_scale_bias(device, random) && check_row_sums(device, random);
      std::printf("%s: %s\n", name.c_str(), passed ? "scale_bias and row_sums match" : "FAILED");
      ok = ok && passed;
    } catch (const std::exception& error) {
      std::printf("%s: %s\n", name.c_str(), error.what());
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
