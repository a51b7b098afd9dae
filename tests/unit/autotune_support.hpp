// What the autotune tests share: a meta holding the block size, the grid it
// gives, and random inputs.
#pragma once

#include <random>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::test {

/// The meta of the tests' configurations: elements per program.
struct Block {
  int size;
};

/// The launch grid of n elements for a configuration's block.
inline auto grid_of_blocks(int n) {
  return [n](const Block& b) { return Grid((n + b.size - 1) / b.size); };
}

/// n floats uniform in [-4, 4) from `seed`.
inline std::vector<float> random_floats(int n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-4.0f, 4.0f);
  std::vector<float> values(n);
  for (float& v : values) v = distribution(generator);
  return values;
}

}  // namespace kiln::test
