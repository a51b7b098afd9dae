// Every error of the C API: a status and one line from kiln_last_error()
// naming the function, the argument and the values; never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "host_tensor.hpp"

extern "C" int kiln_c99_header_check(void);

namespace kiln::capi_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// out[i] = x[i] * scale for i < n, unmasked: it reads and writes n elements.
constexpr const char* kUnmaskedScale = R"(kernel @scale(%0: ptr<f32>, %1: ptr<f32>, %2: f32, %3: i32) {
  %4 = arange {start = 0} : tile<64xi32>
  %5 = splat %0 : tile<64xptr<f32>>
  %6 = addptr %5, %4 : tile<64xptr<f32>>
  %7 = load %6 {cache = none, evict = none} : tile<64xf32>
  %8 = splat %2 : tile<64xf32>
  %9 = mul %7, %8 : tile<64xf32>
  %10 = splat %1 : tile<64xptr<f32>>
  %11 = addptr %10, %4 : tile<64xptr<f32>>
  store %11, %9 {cache = none, evict = none}
}
)";

/// Expects `status` to be `expected` with the last error `message`.
void expect_error(kiln_status status, kiln_status expected, const std::string& message) {
  EXPECT_EQ(status, expected) << kiln_status_name(status);
  EXPECT_EQ(std::string(kiln_last_error()), message);
}

class CApiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    expect_ok(kiln_kernel_from_library("softmax", &softmax_.kernel));
    expect_ok(kiln_kernel_from_library("matmul", &matmul_.kernel));
    expect_ok(kiln_kernel_from_ir(kUnmaskedScale, &scale_.kernel));
  }
  kiln_status launch_softmax(HostTensor<float>& x, DLManagedTensor* out) {
    kiln_argument arguments[] = {x.argument(), kiln_tensor_argument(out)};
    return kiln_launch(cpu_.device, softmax_.kernel, arguments, 2, nullptr);
  }
  OpenDevice cpu_{"cpu"};
  OwnedKernel softmax_, matmul_, scale_;
  HostTensor<float> x_{{4, 8}};
  HostTensor<float> y_{{4, 8}};
  const std::int32_t one_program_[3] = {1, 1, 1};
};

TEST(CApiHeader, CompilesAsC99) { EXPECT_EQ(kiln_c99_header_check(), KILN_ARGUMENT_FLOAT); }

TEST_F(CApiErrors, NullPointers) {
  kiln_device* device = nullptr;
  expect_error(kiln_device_open(nullptr, &device), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_device_open: name is a null pointer");
  expect_error(kiln_device_open("cpu", nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_device_open: device is a null pointer");
  kiln_kernel* kernel = nullptr;
  expect_error(kiln_kernel_from_library(nullptr, &kernel), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_kernel_from_library: name is a null pointer");
  expect_error(kiln_kernel_from_ir(nullptr, &kernel), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_kernel_from_ir: text is a null pointer");
  const char* name = nullptr;
  expect_error(kiln_kernel_name(nullptr, &name), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_kernel_name: kernel is a null pointer");
  expect_error(kiln_device_name(cpu_.device, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_device_name: name is a null pointer");
  expect_error(kiln_launch(nullptr, softmax_.kernel, nullptr, 0, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: device is a null pointer");
  expect_error(kiln_launch(cpu_.device, nullptr, nullptr, 0, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: kernel is a null pointer");
  expect_error(kiln_launch(cpu_.device, softmax_.kernel, nullptr, 2, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: arguments is a null pointer and num_arguments is 2");
  expect_error(launch_softmax(x_, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 1 'out' is a null DLManagedTensor pointer");
  // Closing and releasing null is allowed, and a success clears the last error.
  expect_ok(kiln_device_close(nullptr));
  expect_ok(kiln_kernel_release(nullptr));
  EXPECT_STREQ(kiln_last_error(), "");
}

TEST_F(CApiErrors, UnknownNames) {
  kiln_device* device = nullptr;
  const kiln_status status = kiln_device_open("tpu", &device);
  EXPECT_EQ(status, KILN_ERROR_NOT_FOUND);
  EXPECT_EQ(device, nullptr);
  EXPECT_THAT(kiln_last_error(), StartsWith("kiln_device_open: unknown device 'tpu' (available here: cpu, emu"));
  kiln_kernel* kernel = nullptr;
  expect_error(kiln_kernel_from_library("softmx", &kernel), KILN_ERROR_NOT_FOUND,
               "kiln_kernel_from_library: unknown kernel 'softmx' (the library offers: matmul, softmax, vector_add)");
  EXPECT_EQ(kernel, nullptr);
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_NOT_FOUND), "KILN_ERROR_NOT_FOUND");
  EXPECT_STREQ(kiln_status_name(static_cast<kiln_status>(42)), "unknown status");
}

TEST_F(CApiErrors, DtypeMismatch) {
  HostTensor<half> out({4, 8});
  expect_error(launch_softmax(x_, out.dlpack()), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 1 'out' has dtype f16, the kernel expects f32 (the dtype of 'x')");
  HostTensor<std::int32_t> integers({4, 8});
  kiln_argument arguments[] = {integers.argument(), integers.argument()};
  expect_error(kiln_launch(cpu_.device, softmax_.kernel, arguments, 2, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 0 'x' has dtype i32, softmax takes f32, f16, bf16 or f64");
  HostTensor<float> complex({4, 8});
  complex.dlpack()->dl_tensor.dtype = {5, 64, 1};
  expect_error(launch_softmax(x_, complex.dlpack()), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 1 'out' has dtype DLPack code 5 with 64 bits and 1 lanes, which kiln "
               "has no element type for");
}

TEST_F(CApiErrors, RankAndShapeMismatch) {
  HostTensor<float> vector({5});
  expect_error(launch_softmax(vector, y_.dlpack()), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 0 'x' has shape (5,) (1-D), the kernel expects a 2-D tensor");
  HostTensor<float> wider({4, 9});
  expect_error(launch_softmax(x_, wider.dlpack()), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 1 'out' has shape (4, 9), the kernel expects (4, 8) (the shape of 'x')");
  HostTensor<float> a({3, 5}), b({4, 2}), c({3, 2});
  kiln_argument arguments[] = {a.argument(), b.argument(), c.argument()};
  expect_error(kiln_launch(cpu_.device, matmul_.kernel, arguments, 3, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: matmul argument 1 'b' has shape (4, 2), a has (3, 5): b needs as many rows (4) as a has "
               "columns (5)");
}

TEST_F(CApiErrors, DeviceMismatch) {
  HostTensor<float> on_gpu({4, 8});
  on_gpu.dlpack()->dl_tensor.device = {kDLCUDA, 1};
  expect_error(launch_softmax(x_, on_gpu.dlpack()), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 1 'out' is in the memory of GPU 1 (kDLCUDA), the device cpu needs host "
               "memory (kDLCPU or kDLCUDAHost)");
}

TEST_F(CApiErrors, StridesThatTheKernelCannotTake) {
  HostTensor<float> every_other_column({4, 8}, {16, 2});
  expect_error(launch_softmax(x_, every_other_column.dlpack()), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 1 'out' has strides (16, 2) (in elements), the kernel needs dimension "
               "1 contiguous (stride 1)");
  HostTensor<float> every_other({64}, {2}), out({64});
  kiln_argument arguments[] = {every_other.argument(), out.argument(), kiln_float_argument(2), kiln_int_argument(64)};
  expect_error(kiln_launch(cpu_.device, scale_.kernel, arguments, 4, one_program_), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: @scale argument 0 (ptr<f32>) has shape (64,) and strides (2,) (in elements), the kernel "
               "needs it contiguous (row-major, strides (1,))");
  HostTensor<float> backwards({4, 8}, {8, 1});
  backwards.dlpack()->dl_tensor.strides[0] = -8;
  expect_error(launch_softmax(backwards, y_.dlpack()), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 0 'x' has strides (-8, 1); kiln takes no negative strides (dimension 0)");
}

TEST_F(CApiErrors, ArgumentCountsAndKinds) {
  kiln_argument three[] = {x_.argument(), y_.argument(), y_.argument()};
  expect_error(kiln_launch(cpu_.device, softmax_.kernel, three, 3, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax takes 2 tensors, 3 arguments were given");
  kiln_argument scalar[] = {x_.argument(), kiln_int_argument(3)};
  expect_error(kiln_launch(cpu_.device, softmax_.kernel, scalar, 2, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 1 'out' is not a tensor (kind 1)");
  kiln_argument pair[] = {x_.argument(), y_.argument()};
  expect_error(kiln_launch(cpu_.device, softmax_.kernel, pair, 2, one_program_), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax is a library kernel and chooses its own grid: pass a null grid");
}

TEST_F(CApiErrors, IrKernelArguments) {
  HostTensor<float> x({64}), out({64});
  kiln_argument arguments[] = {x.argument(), out.argument(), kiln_float_argument(2), kiln_int_argument(64)};
  expect_error(kiln_launch(cpu_.device, scale_.kernel, arguments, 4, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: @scale is an IR kernel and needs a grid (3 numbers of programs)");
  const std::int32_t empty_grid[3] = {1, 0, 1};
  expect_error(kiln_launch(cpu_.device, scale_.kernel, arguments, 4, empty_grid), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: the grid is (1, 0, 1), each of its numbers must be at least 1");
  expect_error(kiln_launch(cpu_.device, scale_.kernel, arguments, 3, one_program_), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: @scale takes 4 arguments, 3 were given");
  arguments[3] = kiln_int_argument(std::int64_t{1} << 40);
  expect_error(kiln_launch(cpu_.device, scale_.kernel, arguments, 4, one_program_), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: @scale argument 3 (i32) is 1099511627776, which i32 cannot hold");
  arguments[3] = kiln_float_argument(64);
  expect_error(kiln_launch(cpu_.device, scale_.kernel, arguments, 4, one_program_), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: @scale argument 3 (i32) is a float, the kernel expects an integer scalar");
  arguments[3] = kiln_int_argument(64);
  arguments[0] = kiln_int_argument(0);
  expect_error(kiln_launch(cpu_.device, scale_.kernel, arguments, 4, one_program_), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: @scale argument 0 (ptr<f32>) is an int, the kernel expects a tensor");
  HostTensor<double> doubles({64});
  arguments[0] = doubles.argument();
  expect_error(kiln_launch(cpu_.device, scale_.kernel, arguments, 4, one_program_), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: @scale argument 0 (ptr<f32>) has dtype f64, the kernel expects f32");
}

TEST_F(CApiErrors, IrTextThatDoesNotCompile) {
  kiln_kernel* kernel = nullptr;
  const kiln_status status =
      kiln_kernel_from_ir("kernel @broken(%0: ptr<f32>) {\n  %1 = frobnicate %0 : f32\n}\n", &kernel);
  EXPECT_EQ(status, KILN_ERROR_COMPILE);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_THAT(kiln_last_error(), StartsWith("kiln_kernel_from_ir: ir text:2:"));
  EXPECT_THAT(kiln_last_error(), HasSubstr("frobnicate"));
}

TEST_F(CApiErrors, KernelFaultIsAnErrorNotACrash) {
  // The unmasked kernel reads 64 elements of a tensor of 40.
  HostTensor<float> x({40}), out({64});
  kiln_argument arguments[] = {x.argument(), out.argument(), kiln_float_argument(2), kiln_int_argument(64)};
  const kiln_status status = kiln_launch(cpu_.device, scale_.kernel, arguments, 4, one_program_);
  EXPECT_EQ(status, KILN_ERROR_KERNEL_FAULT);
  EXPECT_THAT(kiln_last_error(), StartsWith("kiln_launch: kernel scale: load out of bounds"));
  EXPECT_THAT(kiln_last_error(), HasSubstr("@scale argument 0 (ptr<f32>)"));
}

// On a GPU, or with tests/gpu/fake_libcuda.cpp standing in for the driver
// (this binary's fake_gpu.* run), the cuda device opens; elsewhere it says
// why not, and the test skips.
TEST(CApiCuda, TensorsMustBeInTheGpusMemory) {
  kiln_device* cuda = nullptr;
  if (kiln_device_open("cuda", &cuda) != KILN_OK) {
    EXPECT_THAT(kiln_last_error(), StartsWith("kiln_device_open: device 'cuda' is unavailable: "));
    GTEST_SKIP() << kiln_last_error();
  }
  OwnedKernel softmax;
  expect_ok(kiln_kernel_from_library("softmax", &softmax.kernel));
  HostTensor<float> x({4, 8}), out({4, 8});
  kiln_argument arguments[] = {x.argument(), out.argument()};
  expect_error(kiln_launch(cuda, softmax.kernel, arguments, 2, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 0 'x' is in host memory (kDLCPU), the device cuda needs the memory of "
               "GPU 0 (kDLCUDA or kDLCUDAManaged)");
  x.dlpack()->dl_tensor.device = {kDLCUDA, 3};
  expect_error(kiln_launch(cuda, softmax.kernel, arguments, 2, nullptr), KILN_ERROR_INVALID_ARGUMENT,
               "kiln_launch: softmax argument 0 'x' is in the memory of GPU 3 (kDLCUDA), the device cuda needs the "
               "memory of GPU 0 (kDLCUDA or kDLCUDAManaged)");
  expect_ok(kiln_device_close(cuda));
}

}  // namespace
}  // namespace kiln::capi_test
