// The plan of the shared rings of pipelined loops (OPS.md, "Shared
// buffers"): for each local_alloc, the shared layout of its slots, their
// size, and where the ring lives in shared memory. The code generator lays
// the rings out by it, and the layout stage (`kiln dump --stage layout`)
// prints it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/ir.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// Slots start on 128-byte lines, so that a swizzle's bank analysis holds
/// (on the 1024-byte pattern of a 128-byte swizzle when wgmma reads them).
inline constexpr std::uint64_t kRingSlotAlignment = 128;

/// One ring: `stages` slots of `slot_bytes` (a slot's tile rounded up to
/// kRingSlotAlignment) from `offset` bytes into shared memory, each slot in
/// `layout` (from "offset", in elements, to the slot's coordinates).
struct SharedRingPlan {
  const ir::Value* ring = nullptr;
  LinearLayout layout;
  /// Whether `layout` was chosen for the ring's copies and its tensor-core
  /// readers (shared_access.hpp), rather than row-major.
  bool chosen_for_readers = false;
  /// Whether every reader is a wgmma dot, so that `layout` is its canonical
  /// tile (wgmma_layout.hpp) and slots start on its swizzle pattern.
  bool read_by_wgmma = false;
  int stages = 0;
  int element_bytes = 0;
  std::uint64_t slot_bytes = 0;
  std::uint64_t offset = 0;
};

/// Every ring of a kernel, in program order, and the shared bytes they take
/// together (rings never live at once share bytes: ring_lifetimes.hpp).
struct SharedRings {
  std::vector<SharedRingPlan> rings;
  std::uint64_t bytes = 0;

  /// The plan of `ring`; throws InternalError when it is not a planned ring.
  const SharedRingPlan& at(const ir::Value& ring) const;
};

/// Plans every local_alloc's ring of `fn` with `layouts`: each slot in a
/// shared layout chosen for its copies and readers (swizzled against bank
/// conflicts for the 16-byte copies and the ldmatrix reads) when every
/// reader is a tensor-core dot taking it as one operand, else row-major
/// (the FMA units' dot reads rows and columns of it); placed first fit.
/// `axes` tells which dots run on wgmma (dot_uses_wgmma).
SharedRings plan_shared_rings(const ir::Function& fn, const AxisInfoMap& axes, const LayoutMap& layouts,
                              const GpuTarget& target);

/// Each ring (a line, then its slot layout) and a line for the total; empty
/// without rings. What the layout stage prints.
std::string describe_shared_rings(const SharedRings& rings);

}  // namespace kiln::lowering
