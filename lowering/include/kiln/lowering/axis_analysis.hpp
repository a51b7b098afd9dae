// Axis analysis (Triton's AxisInfo): per dimension of every integer and
// pointer value, what the GPU lowering may assume about runs of contiguous and
// equal elements and about their alignment. It decides how wide the vector
// loads and stores can be.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/ir/ir.hpp"

namespace kiln::lowering {

/// What is known about a value along each of its dimensions. A scalar is
/// described as a tile of shape [1]. All numbers are powers of two. Along
/// dimension d (every other index fixed), split the indices into aligned
/// blocks of a given length:
///  - contiguity[d]: in each block of this length the values step by 1 (for a
///    pointer: by one element) from the block's first value;
///  - divisibility[d]: the first value of each contiguity block is a multiple
///    of this (for a pointer: its address in bytes); with contiguity 1 that is
///    every value;
///  - constancy[d]: in each block of this length all values are equal.
/// Integer values are assumed non-negative where a rule needs it (divisions,
/// remainders and comparisons of indices), as Triton does.
struct AxisInfo {
  std::vector<std::int64_t> contiguity;
  std::vector<std::int64_t> divisibility;
  std::vector<std::int64_t> constancy;
  /// Every element equals this value.
  std::optional<std::int64_t> constant;

  int rank() const { return static_cast<int>(contiguity.size()); }
  friend bool operator==(const AxisInfo&, const AxisInfo&) = default;
};

/// "contiguity [1024] divisibility [16] constancy [1]" plus " constant 4" when known.
std::string to_string(const AxisInfo& info);

/// The analysis result: one AxisInfo per integer or pointer value of a kernel.
class AxisInfoMap {
 public:
  /// Throws std::invalid_argument naming the value (%N) if it was not
  /// analysed (a float value, or one of another kernel).
  const AxisInfo& at(const ir::Value& value) const;
  const AxisInfo* find(const ir::Value& value) const;
  /// Records (or replaces) the facts about `value`.
  void set(const ir::Value& value, AxisInfo info) { infos_[&value] = std::move(info); }

 private:
  std::unordered_map<const ir::Value*, AxisInfo> infos_;
};

/// Runs the analysis over `fn`, seeded by its argument facts (a kernel
/// argument with `{divisibility = 16}` is a multiple of 16, or 16-byte
/// aligned; one without facts is assumed nothing of). Loop-carried values are
/// the fixed point of meeting the initial value with the yielded one, `if`
/// results the meet of both branches, and values the rules do not cover
/// (loads, reductions, floats cast to integers…) are unknown: contiguity,
/// divisibility and constancy 1.
AxisInfoMap analyze_axes(const ir::Function& fn);

/// The dimension a vector access of `pointers` runs along: the one with the
/// largest contiguity, the last on a tie (tiles are row-major).
int fastest_dimension(const AxisInfo& pointers);

/// Elements one thread may move with a single vector access of the pointer
/// tile `pointers` (a load's or store's address operand), optionally masked
/// by `mask`: the contiguity along the fastest dimension, limited by the
/// alignment (divisibility / element bytes), by 16 bytes per access and by the
/// mask's constancy there (a mask constant over runs of N predicates a vector
/// of N as one). At least 1.
std::int64_t access_vector_width(const AxisInfoMap& infos, const ir::Value& pointers, const ir::Value* mask = nullptr);

/// access_vector_width for a `load`, `store` or `async_copy` op (its pointer
/// and, if present, mask operands); throws std::invalid_argument for other ops.
std::int64_t access_vector_width(const AxisInfoMap& infos, const ir::Operation& access);

}  // namespace kiln::lowering
