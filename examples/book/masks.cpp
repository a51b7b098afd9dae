// Chapter 5, "Loads, stores and masks": tiles of pointers, masks and the
// value masked-off elements load as, a 2-D tile built by broadcasting a
// column against a row, and the cpu device catching a load that forgot its mask.
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:pad]
template <int ROWS, int COLS>
void pad(kl::Ptr<kl::i32> x, kl::Ptr<kl::i32> out, kl::i32 m, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::arange<ROWS>());  // shape [ROWS, 1]: a column 0, 1, …, ROWS - 1
  auto cols = kl::expand_dims<0>(kl::arange<COLS>());  // shape [1, COLS]: a row 0, 1, …, COLS - 1
  auto inside = (rows < m) & (cols < n);               // shape [ROWS, COLS]: both broadcast
  auto tile = kl::load(x + rows * n + cols, inside, {.other = -1});
  kl::store(out + rows * COLS + cols, tile);  // no mask: all ROWS x COLS elements, the padding too
}
// [/book:pad]

// [book:transpose]
template <int BLOCK>
void transpose(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK + kl::arange<BLOCK>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK + kl::arange<BLOCK>());
  auto mask = (rows < m) & (cols < n);
  auto tile = kl::load(x + rows * n + cols, mask);  // x is m x n, row-major: (r, c) is at r * n + c
  kl::store(out + cols * m + rows, tile, mask);     // out is n x m: (c, r) is at c * m + r
}
// [/book:transpose]

// [book:unmasked]
template <int BLOCK>
void copy_unmasked(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  kl::store(out + offsets, kl::load(x + offsets));  // no mask: the last program runs past the end
}
// [/book:unmasked]

int main() {
  std::mt19937 random(2024);
  int failures = 0;

  // [book:pad_launch]
  const int m = 5, n = 6;
  std::uniform_int_distribution<std::int32_t> digits(10, 99);
  std::vector<std::int32_t> small(m * n);
  for (auto& v : small) v = digits(random);
  auto small_buffer = kl::Buffer<std::int32_t>::from(small);
  kl::Buffer<std::int32_t> padded(8 * 8);
  kl::compile<pad<8, 8>>().launch(kl::Grid(1), small_buffer, padded, m, n);
  const std::vector<std::int32_t> grid = padded.to_host();
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) std::printf("%4d", grid[r * 8 + c]);
    std::printf("\n");
  }
  // [/book:pad_launch]
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      if (grid[r * 8 + c] != (r < m && c < n ? small[r * n + c] : -1)) ++failures;

  // [book:transpose_launch]
  const int rows = 37, cols = 50;
  constexpr int kBlock = 16;
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> matrix(rows * cols);
  for (auto& v : matrix) v = uniform(random);
  auto in = kl::Buffer<float>::from(matrix);
  kl::Buffer<float> out(cols * rows);
  const kl::Grid tiles((rows + kBlock - 1) / kBlock, (cols + kBlock - 1) / kBlock);  // 3 x 4 programs
  kl::compile<transpose<kBlock>>().launch(tiles, in, out, rows, cols);
  const std::vector<float> transposed = out.to_host();
  // [/book:transpose_launch]
  int wrong = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (transposed[c * rows + r] != matrix[r * cols + c]) ++wrong;
  std::printf("transpose: %d x %d programs of %d x %d, %d of %d elements wrong\n", tiles.x, tiles.y, kBlock, kBlock,
              wrong, rows * cols);
  failures += wrong;

  // [book:catch]
  const int length = 1000;  // 4 programs of 256: the last one reads elements 768 … 1023
  const kl::Device cpu = kl::Device::cpu();
  auto x = kl::Buffer<float>::from(std::vector<float>(length, 1.0f), cpu);
  kl::Buffer<float> copy(length, cpu);
  bool caught = false;
  try {
    kl::compile<copy_unmasked<256>>().launch(kl::Grid(4), x, copy);
  } catch (const kl::runtime::KernelError& error) {
    std::printf("KernelError: %s\n", error.what());
    caught = true;
  }
  // [/book:catch]
  if (!caught) {
    std::printf("FAILED: the unmasked load ran without an error\n");
    ++failures;
  }
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
