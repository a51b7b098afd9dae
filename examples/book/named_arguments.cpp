// Chapter 22, "Arguments by name": a kernel whose parameters are the fields
// of a struct, launched with designated initialisers, so that two integer
// arguments cannot trade places unnoticed.
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:struct]
// The parameters of strided_copy. The kernel sees Copy2dArgs<kl::traced>
// (DSL values); a launch fills Copy2dArgs<kl::host> (Buffers and numbers).
template <class S = kl::traced>
struct Copy2dArgs {
  kl::param<S, kl::Ptr<kl::f32>> x;
  kl::param<S, kl::Ptr<kl::f32>> out;
  kl::param<S, kl::i32> cols;
  kl::param<S, kl::i32> x_row_stride;
  kl::param<S, kl::i32> x_col_stride;
  kl::param<S, kl::i32> out_row_stride;
  kl::param<S, kl::i32> out_col_stride;
};
// [/book:struct]

// [book:kernel]
// Program r copies row r of x to out, each side with its own strides.
template <int BLOCK>
void strided_copy(Copy2dArgs<> a) {
  auto row = kl::program_id(0);
  auto cols = kl::arange<BLOCK>();
  auto mask = cols < a.cols;
  auto values = kl::load(a.x + (row * a.x_row_stride + cols * a.x_col_stride), mask);
  kl::store(a.out + (row * a.out_row_stride + cols * a.out_col_stride), values, mask);
}
// [/book:kernel]

int main() {
  const int rows = 37, cols = 29;
  std::mt19937 random(22);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(rows * cols);
  for (float& v : x) v = uniform(random);
  auto x_buffer = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(rows * cols);

  // [book:launch]
  // A transpose: x is read along its rows, out is written down its columns.
  const auto kernel = kl::compile<strided_copy<32>>();
  kernel.launch(kl::Grid(rows), {.x = x_buffer,
                                 .out = out,
                                 .cols = cols,
                                 .x_row_stride = cols,
                                 .x_col_stride = 1,
                                 .out_row_stride = 1,
                                 .out_col_stride = rows});
  // [/book:launch]

  // How many elements of out are not the transpose of x.
  const auto wrong_elements = [&] {
    const std::vector<float> result = out.to_host();
    int wrong = 0;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) wrong += result[c * rows + r] != x[r * cols + c];
    return wrong;
  };
  const int wrong = wrong_elements();
  std::printf("transposed %d x %d: %d of %d elements wrong\n", rows, cols, wrong, rows * cols);

  std::printf("parameters:");
  for (const std::string& name : kernel.ir().argument_names) std::printf(" %s", name.c_str());
  std::printf("\n");

  // [book:range]
  try {
    kernel.launch(kl::Grid(rows), {.x = x_buffer,
                                   .out = out,
                                   .cols = cols,
                                   .x_row_stride = cols,
                                   .x_col_stride = 1,
                                   .out_row_stride = 1,
                                   .out_col_stride = 3'000'000'000u});
  } catch (const std::invalid_argument& error) {
    std::printf("invalid_argument: %s\n", error.what());
  }
  // [/book:range]

  out.copy_from(std::vector<float>(rows * cols, std::nanf("")));
  // [book:autotune]
  // Two block widths; one narrower than a row would copy part of it, so it
  // is pruned for that key.
  struct Width {
    int block;
  };
  const auto tuned = kl::autotune(kl::config<strided_copy<16>>({.num_warps = 1}, Width{16}),
                                  kl::config<strided_copy<64>>({.num_warps = 2}, Width{64}))
                         .key<&Copy2dArgs<>::cols>()
                         .prune([](const Width& width, const kl::CompileOptions&, const kl::TuneKey& key) {
                           return width.block < key[0];
                         });
  tuned.launch(kl::Grid(rows), {.x = x_buffer,
                                .out = out,
                                .cols = cols,
                                .x_row_stride = cols,
                                .x_col_stride = 1,
                                .out_row_stride = 1,
                                .out_col_stride = rows});
  // [/book:autotune]
  const int tuned_wrong = wrong_elements();
  std::printf("autotuned for cols = %d: %s, %d elements wrong\n", cols,
              tuned.compiled()[tuned.choice({cols})->index].description.c_str(), tuned_wrong);
  const bool ok = wrong == 0 && tuned_wrong == 0;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
