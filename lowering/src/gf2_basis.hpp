// Gaussian elimination over GF(2) on 64-bit vectors: the solver behind layout
// inversion, kernels and conversion planning. Private to kiln_lowering.
#pragma once

#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::lowering::gf2 {

/// A fully reduced basis of the span of the vectors added so far. Each row
/// remembers which added vectors (bit i = the i-th added) XOR to it, so that a
/// vector in the span can be written as a combination of the added ones.
class Basis {
 public:
  /// Adds the next vector; returns false (and records a kernel combination)
  /// if it depends on the earlier ones.
  bool add(std::uint64_t vector) {
    const std::uint64_t own = std::uint64_t{1} << added_++;
    auto [rest, combination] = reduce(vector);
    combination ^= own;
    if (rest == 0) {
      kernel_.push_back(combination);
      return false;
    }
    // Keep the basis fully reduced: the new pivot bit appears in no other row,
    // so reduce() may visit the rows in any order.
    const std::uint64_t pivot = rest & (~rest + 1);
    for (Row& row : rows_)
      if (row.value & pivot) {
        row.value ^= rest;
        row.combination ^= combination;
      }
    rows_.push_back({rest, combination, pivot});
    return true;
  }

  /// The part of `vector` outside the span (0 iff it is in the span) and the
  /// combination of added vectors that XORs to the part inside.
  std::pair<std::uint64_t, std::uint64_t> reduce(std::uint64_t vector) const {
    std::uint64_t combination = 0;
    for (const Row& row : rows_)
      if (vector & row.pivot) {
        vector ^= row.value;
        combination ^= row.combination;
      }
    return {vector, combination};
  }

  bool contains(std::uint64_t vector) const { return reduce(vector).first == 0; }
  int rank() const { return static_cast<int>(rows_.size()); }
  /// Combinations of added vectors that XOR to zero, one per dependent vector.
  const std::vector<std::uint64_t>& kernel() const { return kernel_; }

 private:
  struct Row {
    std::uint64_t value;
    std::uint64_t combination;
    std::uint64_t pivot;  // the lowest set bit of value, unique among rows
  };
  std::vector<Row> rows_;
  std::vector<std::uint64_t> kernel_;
  int added_ = 0;
};

}  // namespace kiln::lowering::gf2
