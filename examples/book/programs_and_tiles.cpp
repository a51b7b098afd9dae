// Chapter 1, "What a kernel is": a launch over a 2-D grid of programs. Each
// program writes its program_id(0), its program_id(1) and its tile's arange
// into the elements it owns, and the host prints which program wrote which
// element of a 3 x 10 matrix.
#include <cstdio>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:kernel]
template <int BLOCK>
void who_wrote(kl::Ptr<kl::i32> pid0, kl::Ptr<kl::i32> pid1, kl::Ptr<kl::i32> pos, kl::i32 n_cols) {
  auto cols = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();  // BLOCK columns of the matrix
  auto offsets = kl::program_id(1) * n_cols + cols;             // in row program_id(1)
  auto mask = cols < n_cols;                                    // false past the last column
  auto zero = kl::zeros<kl::i32, BLOCK>();
  kl::store(pid0 + offsets, zero + kl::program_id(0), mask);  // a scalar added to a tile: every element
  kl::store(pid1 + offsets, zero + kl::program_id(1), mask);
  kl::store(pos + offsets, kl::arange<BLOCK>(), mask);  // the element's place in its program's tile
}
// [/book:kernel]

int main() {
  // [book:launch]
  constexpr int kBlock = 4;
  const int rows = 3, cols = 10;
  const kl::Grid grid((cols + kBlock - 1) / kBlock, rows);  // 3 programs along a row, one row each: 3 x 3
  const std::vector<int> unwritten(rows * cols, -1);
  auto pid0 = kl::Buffer<int>::from(unwritten);
  auto pid1 = kl::Buffer<int>::from(unwritten);
  auto pos = kl::Buffer<int>::from(unwritten);
  kl::compile<who_wrote<kBlock>>().launch(grid, pid0, pid1, pos, cols);
  // [/book:launch]

  // [book:print]
  auto print = [&](const char* title, const std::vector<int>& v) {
    std::printf("%s\n         column:", title);
    for (int c = 0; c < cols; ++c) std::printf(" %d", c);
    for (int r = 0; r < rows; ++r) {
      std::printf("\n  row %d         ", r);
      for (int c = 0; c < cols; ++c) std::printf(" %d", v[r * cols + c]);
    }
    std::printf("\n");
  };
  const std::vector<int> got0 = pid0.to_host(), got1 = pid1.to_host(), got_pos = pos.to_host();
  print("program_id(0) of the program that wrote each element", got0);
  print("program_id(1)", got1);
  print("arange<4>() value stored there", got_pos);
  // [/book:print]

  // [book:check]
  int wrong = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int i = r * cols + c;
      if (got0[i] != c / kBlock || got1[i] != r || got_pos[i] != c % kBlock) ++wrong;
    }
  const int slots = grid.x * grid.y * kBlock;
  std::printf("%d x %d programs of %d elements: %d slots for %d elements, %d masked off\n", grid.x, grid.y, kBlock,
              slots, rows * cols, slots - rows * cols);
  std::printf("%s: %d of %d elements were not written by the program the grid assigns them to\n",
              wrong == 0 ? "ok" : "FAILED", wrong, rows * cols);
  // [/book:check]
  return wrong == 0 ? 0 : 1;
}
