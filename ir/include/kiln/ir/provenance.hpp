// Pointer provenance: which pointer argument each pointer value of a kernel
// derives from, and which arguments the kernel writes through. The
// interpreter's bounds and hazard checks and the code generator's uniform
// scalar loads read it.
#pragma once

#include <unordered_set>
#include <vector>

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

/// The operand of a memory, atomic or async_copy op that holds the addresses
/// it accesses in global memory, or null for any other op.
const Value* pointer_operand(const Operation& op);

class Provenance {
 public:
  /// The source of a pointer that is not known to derive from one argument
  /// (a select of two, a pointer cast from an integer, a loaded pointer).
  static constexpr int kMixed = -1;

  /// Iterates to a fixed point over loop-carried values.
  explicit Provenance(const Function& fn);

  /// The index of the argument pointer `v` derives from, or kMixed.
  int source(const Value* v) const;

  /// Whether a store or an atomic of the kernel may write memory reached
  /// through a pointer of `source`: a mixed source meets every other.
  bool may_be_written(int source) const;

 private:
  void visit(const Block& block);
  void flow(const Value* to, int from);
  int of(const Value* v) const { return sources_[v->id]; }

  std::vector<int> sources_;
  std::unordered_set<int> written_;
  bool changed_ = false;
};

}  // namespace kiln::ir
