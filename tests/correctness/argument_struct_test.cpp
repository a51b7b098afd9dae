// Kernels whose parameters are the fields of an arguments struct, launched
// with designated initialisers: the fields reach the kernel by name whatever
// order the launch writes them in, their names are the parameters' names in
// the IR and in every launch and bounds message, on cpu and emu alike.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "reference_support.hpp"

namespace kl = kiln;

namespace struct_kernels {

// A strided 2-D copy: eight fields, six of them integers a positional
// launch could swap without a compile error.
template <class S = kl::traced>
struct Copy2dArgs {
  kl::param<S, kl::Ptr<kl::i32>> x;
  kl::param<S, kl::Ptr<kl::i32>> out;
  kl::param<S, kl::i32> rows;
  kl::param<S, kl::i32> cols;
  kl::param<S, kl::i32> x_row_stride;
  kl::param<S, kl::i32> x_col_stride;
  kl::param<S, kl::i32> out_row_stride;
  kl::param<S, kl::i32> out_col_stride;
};

template <int BLOCK>
void copy2d(Copy2dArgs<> a) {
  auto row = kl::program_id(0);
  auto cols = kl::arange<BLOCK>();
  auto mask = cols < a.cols;
  auto values = kl::load(a.x + (row * a.x_row_stride + cols * a.x_col_stride), mask);
  kl::store(a.out + (row * a.out_row_stride + cols * a.out_col_stride), values, mask);
}

// Scales f16 inputs by a float into f32 outputs: fields of three kinds.
template <class S = kl::traced>
struct ScaleArgs {
  kl::param<S, kl::Ptr<kl::f16>> x;
  kl::param<S, kl::Ptr<kl::f32>> out;
  kl::param<S, kl::f32> factor;
  kl::param<S, kl::i32> n;
};

template <int BLOCK>
void scale(ScaleArgs<> a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < a.n;
  kl::store(a.out + offsets, kl::cast<kl::f32>(kl::load(a.x + offsets, mask)) * a.factor, mask);
}

// Reads x without a mask: program 1 runs past the end of a short buffer.
template <class S = kl::traced>
struct UnmaskedArgs {
  kl::param<S, kl::Ptr<kl::f32>> out;
  kl::param<S, kl::Ptr<kl::f32>> x;
};

constexpr int unmasked_line = __LINE__ + 3;
void unmasked(UnmaskedArgs<> a) {
  auto offsets = kl::program_id(0) * 16 + kl::arange<16>();
  auto values = kl::load(a.x + offsets);
  kl::store(a.out + offsets, values);
}

}  // namespace struct_kernels

namespace {

using kiln::test::expect_equal;
using kiln::test::invalid_argument_error;
using kiln::test::kernel_error;
using kiln::test::random_values;
using namespace struct_kernels;

TEST(ArgumentStruct, TransposingCopyFollowsTheNamedStrides) {
  const int rows = 37, cols = 29;
  const std::vector<std::int32_t> host = random_values<std::int32_t>(rows * cols, 41, -100000, 100000);
  const auto x = kl::Buffer<std::int32_t>::from(host);
  kl::Buffer<std::int32_t> out(rows * cols);
  // Written out of declaration order: the names, not the positions, decide.
  kl::compile<copy2d<32>>().launch(kl::Grid(rows), {.x = x,
                                                    .out = out,
                                                    .rows = rows,
                                                    .cols = cols,
                                                    .x_row_stride = cols,
                                                    .x_col_stride = 1,
                                                    .out_row_stride = 1,
                                                    .out_col_stride = rows});
  std::vector<std::int32_t> want(host.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) want[c * rows + r] = host[r * cols + c];
  expect_equal(out.to_host(), want, "transposed copy");
}

TEST(ArgumentStruct, FieldsOfEveryKindReachTheKernel) {
  const int n = 1000;
  const std::vector<kl::half> host = random_values<kl::half>(n, 42, -8, 8);
  const auto x = kl::Buffer<kl::half>::from(host);
  kl::Buffer<float> out(n + 24);
  // 0.25 is a power of two: every product is exact in f32.
  kl::compile<scale<128>>().launch(kl::Grid(8), {.x = x, .out = out, .factor = 0.25, .n = n});
  std::vector<float> want(n + 24, 0.0f);
  for (int i = 0; i < n; ++i) want[i] = static_cast<float>(host[i]) * 0.25f;
  expect_equal(out.to_host(), want, "scaled");
}

TEST(ArgumentStruct, FieldNamesAreTheParameterNames) {
  const auto kernel = kl::compile<copy2d<32>>();
  EXPECT_EQ(kernel.ir().argument_names, (std::vector<std::string>{"x", "out", "rows", "cols", "x_row_stride",
                                                                  "x_col_stride", "out_row_stride", "out_col_stride"}));
}

TEST(ArgumentStruct, AValueThatDoesNotFitNamesItsField) {
  const auto x = kl::Buffer<kl::half>::from(random_values<kl::half>(16, 43, -1, 1));
  kl::Buffer<float> out(16);
  EXPECT_EQ(invalid_argument_error([&] {
              kl::compile<scale<128>>().launch(kl::Grid(1),
                                               {.x = x, .out = out, .factor = 1.0f, .n = std::int64_t{1} << 40});
            }),
            "launch struct_kernels::scale<128>: 'n': the value 1099511627776 does not fit in i32");
}

TEST(ArgumentStruct, OutOfBoundsNamesTheField) {
  auto x = kl::Buffer<float>::from(random_values<float>(20, 44));
  kl::Buffer<float> out(32);
  EXPECT_EQ(kernel_error([&] { kl::compile<unmasked>().launch(kl::Grid(2), {.out = out, .x = x}); }),
            "kernel unmasked: load out of bounds at argument_struct_test.cpp:" + std::to_string(unmasked_line) +
                ": element offset 20 is past the end of 'x' (20 elements of f32)");
}

TEST(ArgumentStruct, ProgramForSpecialisesOnTheFields) {
  const auto x = kl::Buffer<kl::half>::from(random_values<kl::half>(64, 45, -1, 1));
  kl::Buffer<float> out(64);
  const auto kernel = kl::compile<scale<64>>();
  // n == 1 is specialised into a constant; n == 48 only marked divisible.
  const auto one = kernel.program_for({.x = x, .out = out, .factor = 2.0f, .n = 1});
  const auto many = kernel.program_for({.x = x, .out = out, .factor = 2.0f, .n = 48});
  EXPECT_NE(one.get(), many.get());
}

}  // namespace
