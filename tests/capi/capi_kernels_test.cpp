// The C API end to end: the library's softmax and matmul, and a tile-IR text
// kernel, launched on DLPack tensors on the cpu and emu devices, against
// double references with bounds from the dtype and the reduction length.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "host_tensor.hpp"

namespace kiln::capi_test {
namespace {

constexpr double kF32Roundoff = 0x1p-24;

double gamma(double terms, double roundoff) { return terms * roundoff / (1 - terms * roundoff); }

class CApiKernels : public ::testing::TestWithParam<const char*> {};

/// softmax of `rows` x `cols` random T in x (rows `x_row_stride` apart) into
/// a contiguous out, each element within (u_T + (cols + 4) u_f32) of the
/// double softmax relative to it, plus T's underflow.
template <class T>
void check_softmax(const char* device_name, std::int64_t rows, std::int64_t cols, std::int64_t x_row_stride,
                   double roundoff, double underflow) {
  OpenDevice device(device_name);
  OwnedKernel softmax;
  expect_ok(kiln_kernel_from_library("softmax", &softmax.kernel));
  HostTensor<T> x({rows, cols}, {x_row_stride, 1});
  x.fill_random(1234, -4, 4);
  HostTensor<T> out({rows, cols});
  kiln_argument arguments[] = {x.argument(), out.argument()};
  expect_ok(kiln_launch(device.device, softmax.kernel, arguments, 2, nullptr));
  const double relative = roundoff + static_cast<double>(cols + 4) * kF32Roundoff;
  for (std::int64_t r = 0; r < rows; ++r) {
    double largest = -std::numeric_limits<double>::infinity(), sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) largest = std::max(largest, static_cast<double>(x.at(r, c)));
    for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(x.at(r, c)) - largest);
    for (std::int64_t c = 0; c < cols; ++c) {
      const double expected = std::exp(static_cast<double>(x.at(r, c)) - largest) / sum;
      ASSERT_NEAR(static_cast<double>(out.at(r, c)), expected, relative * expected + underflow)
          << "row " << r << ", column " << c << " on " << device_name;
    }
  }
}

TEST_P(CApiKernels, SoftmaxF32WithStridedRows) {
  check_softmax<float>(GetParam(), 37, 300, 320, kF32Roundoff, std::numeric_limits<float>::denorm_min());
}

TEST_P(CApiKernels, SoftmaxF16NarrowRows) { check_softmax<half>(GetParam(), 9, 100, 100, 0x1p-11, 0x1p-25); }

/// c = a @ b for random f32 a [m, k] and b [k, n] (b read through strides of
/// its transpose), each element within gamma_{k+2}(u_f32) sum |a b| of the
/// double product, plus the rounding of the result.
TEST_P(CApiKernels, MatmulF32WithTransposedB) {
  const std::int64_t m = 70, n = 45, k = 90;
  OpenDevice device(GetParam());
  OwnedKernel matmul;
  expect_ok(kiln_kernel_from_library("matmul", &matmul.kernel));
  HostTensor<float> a({m, k});
  HostTensor<float> b({k, n}, {1, k});  // column-major: b's transpose is contiguous
  HostTensor<float> c({m, n});
  a.fill_random(7, -1, 1);
  b.fill_random(8, -1, 1);
  kiln_argument arguments[] = {a.argument(), b.argument(), c.argument()};
  expect_ok(kiln_launch(device.device, matmul.kernel, arguments, 3, nullptr));
  const double accumulation = gamma(k + 2.0, kF32Roundoff) + gamma(k + 2.0, 0x1p-53);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double expected = 0, magnitude = 0;
      for (std::int64_t t = 0; t < k; ++t) {
        const double product = static_cast<double>(a.at(i, t)) * static_cast<double>(b.at(t, j));
        expected += product;
        magnitude += std::abs(product);
      }
      const double bound =
          accumulation * magnitude + kF32Roundoff * std::abs(expected) + std::numeric_limits<float>::denorm_min();
      ASSERT_NEAR(c.at(i, j), expected, bound) << "c[" << i << ", " << j << "] on " << GetParam();
    }
  }
}

// out[i] = x[i] * scale for i < n, 64 elements per program.
constexpr const char* kScaleKernel = R"(kernel @scale(%0: ptr<f32>, %1: ptr<f32>, %2: f32, %3: i32) {
  %4 = program_id {axis = 0} : i32
  %5 = constant {value = 64} : i32
  %6 = mul %4, %5 : i32
  %7 = arange {start = 0} : tile<64xi32>
  %8 = splat %6 : tile<64xi32>
  %9 = add %8, %7 : tile<64xi32>
  %10 = splat %3 : tile<64xi32>
  %11 = cmp %9, %10 {pred = lt} : tile<64xi1>
  %12 = splat %0 : tile<64xptr<f32>>
  %13 = addptr %12, %9 : tile<64xptr<f32>>
  %14 = load %13, %11 {cache = none, evict = none} : tile<64xf32>
  %15 = splat %2 : tile<64xf32>
  %16 = mul %14, %15 : tile<64xf32>
  %17 = splat %1 : tile<64xptr<f32>>
  %18 = addptr %17, %9 : tile<64xptr<f32>>
  store %18, %16, %11 {cache = none, evict = none}
}
)";

TEST_P(CApiKernels, IrTextKernel) {
  const std::int64_t n = 200;
  OpenDevice device(GetParam());
  OwnedKernel scale;
  expect_ok(kiln_kernel_from_ir(kScaleKernel, &scale.kernel));
  const char* name = nullptr;
  expect_ok(kiln_kernel_name(scale.kernel, &name));
  EXPECT_STREQ(name, "scale");
  HostTensor<float> x({n});
  HostTensor<float> out({n});
  x.fill_random(99, -8, 8);
  const float factor = 1.75f;
  kiln_argument arguments[] = {x.argument(), out.argument(), kiln_float_argument(factor), kiln_int_argument(n)};
  const std::int32_t grid[3] = {static_cast<std::int32_t>((n + 63) / 64), 1, 1};
  expect_ok(kiln_launch(device.device, scale.kernel, arguments, 4, grid));
  // One f32 multiplication: correctly rounded, so exactly the host's product.
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out.values()[i], x.values()[i] * factor) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Devices, CApiKernels, ::testing::Values("cpu", "emu"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace kiln::capi_test
