// The shared rings' plan (shared_rings.hpp): each ring's slot layout and
// size from its copies and readers, then its place (ring_lifetimes.hpp).
#include "kiln/lowering/shared_rings.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/ring_lifetimes.hpp"
#include "kiln/lowering/shared_access.hpp"
#include "kiln/lowering/shared_layout.hpp"
#include "kiln/lowering/wgmma_layout.hpp"
#include "operand_uses.hpp"

namespace kiln::lowering {

namespace {

/// A dot reading a ring's slot: the op and the operand index (0: a, 1: b).
using SlotReader = std::pair<const ir::Operation*, int>;

/// Every dot reading the ring's slots, or none when some reader of a slot
/// is not a dot taking it as a or b.
std::optional<std::vector<SlotReader>> dot_readers(const ir::Function& fn, const ir::Value& ring) {
  std::vector<SlotReader> readers;
  for (const auto& [load, index] : uses_of(fn, ring)) {
    if (load->code != ir::OpCode::local_load) continue;
    for (const auto& [user, operand] : uses_of(fn, *load->result())) {
      if (user->code != ir::OpCode::dot || !reads_shared_slot(*user, operand)) return std::nullopt;
      readers.emplace_back(user, operand);
    }
  }
  return readers;
}

/// The layout the ring's slots are read in by every reader, when all are
/// tensor-core dots taking it as the same operand; none otherwise.
std::optional<LinearLayout> common_fragment_layout(const std::vector<SlotReader>& readers, const GpuTarget& target) {
  std::optional<LinearLayout> fragment;
  for (const auto& [dot, operand] : readers) {
    if (!dot_uses_tensor_cores(*dot, target)) return std::nullopt;
    LinearLayout needed = dot_fragment_layout(*dot, operand == 0 ? DotOperand::a : DotOperand::b, target);
    if (fragment && *fragment != needed) return std::nullopt;
    fragment = std::move(needed);
  }
  return fragment;
}

/// The layout async_copy writes the ring from: its first copy's pointers'.
const LinearLayout* copy_layout(const ir::Function& fn, const ir::Value& ring, const LayoutMap& layouts) {
  for (const auto& [op, index] : uses_of(fn, ring))
    if (op->code == ir::OpCode::async_copy) return &layouts.at(*op->operands[2]);
  return nullptr;
}

/// The first reader and the operand the ring's slots are to it, when every
/// reader is a wgmma dot (a wgmma tile's layout does not depend on which
/// operand it is, so a tile that is both operands of its dot is one tile);
/// none otherwise.
std::optional<std::pair<const ir::Operation*, DotOperand>> wgmma_reader(const ir::Function& fn,
                                                                        const std::vector<SlotReader>& readers,
                                                                        const GpuTarget& target,
                                                                        const AxisInfoMap& axes) {
  for (const auto& [dot, operand] : readers)
    if (!dot_uses_wgmma(fn, *dot, target, axes)) return std::nullopt;
  if (readers.empty()) return std::nullopt;
  return std::pair{readers.front().first, readers.front().second == 0 ? DotOperand::a : DotOperand::b};
}

SharedRingPlan plan_ring(const ir::Function& fn, const ir::Value& ring, const AxisInfoMap& axes,
                         const LayoutMap& layouts, const GpuTarget& target) {
  const ir::Shape slot_shape(ring.type.shape.begin() + 1, ring.type.shape.end());
  SharedRingPlan plan;
  plan.ring = &ring;
  plan.stages = static_cast<int>(ring.type.shape[0]);
  plan.element_bytes = ir::dtype_bytes(ring.type.dtype);
  const LinearLayout* writer = copy_layout(fn, ring, layouts);
  const std::optional<std::vector<SlotReader>> readers = dot_readers(fn, ring);
  const std::optional<LinearLayout> reader =
      readers ? common_fragment_layout(*readers, target) : std::optional<LinearLayout>();
  std::uint64_t alignment = kRingSlotAlignment;
  const auto wgmma = readers ? wgmma_reader(fn, *readers, target, axes) : std::nullopt;
  if (writer && wgmma && slot_shape.size() == 2) {
    const auto& [dot, operand] = *wgmma;
    const WgmmaTile tile =
        wgmma_tile(operand, slot_shape[0], slot_shape[1],
                   wgmma_contiguous_dim(*dot, operand, contiguous_dim_of(*writer)), plan.element_bytes);
    plan.layout = tile.layout;
    plan.chosen_for_readers = true;
    plan.read_by_wgmma = true;
    alignment = std::max(alignment, tile.alignment());
  } else if (writer && reader && slot_shape.size() == 2) {
    plan.layout = choose_shared_layout(*writer, *reader, plan.element_bytes);
    plan.chosen_for_readers = true;
  } else {
    std::vector<LinearLayout::OutDim> dims;
    for (std::size_t d = 0; d < slot_shape.size(); ++d)
      dims.push_back({"dim" + std::to_string(d), std::countr_zero(static_cast<std::uint64_t>(slot_shape[d]))});
    plan.layout = row_major_shared_layout(dims);
  }
  std::uint64_t tile_bytes = static_cast<std::uint64_t>(plan.element_bytes);
  for (const std::int64_t extent : slot_shape) tile_bytes *= static_cast<std::uint64_t>(extent);
  plan.slot_bytes = (tile_bytes + alignment - 1) / alignment * alignment;
  return plan;
}

}  // namespace

const SharedRingPlan& SharedRings::at(const ir::Value& ring) const {
  for (const SharedRingPlan& plan : rings)
    if (plan.ring == &ring) return plan;
  throw InternalError("%" + std::to_string(ring.id) + " is not a planned shared ring");
}

SharedRings plan_shared_rings(const ir::Function& fn, const AxisInfoMap& axes, const LayoutMap& layouts,
                              const GpuTarget& target) {
  SharedRings planned;
  ir::walk(fn.body, [&](ir::Operation& op) {
    if (op.code == ir::OpCode::local_alloc) planned.rings.push_back(plan_ring(fn, *op.result(), axes, layouts, target));
  });
  std::uint64_t alignment = kRingSlotAlignment;
  for (const SharedRingPlan& plan : planned.rings)
    if (plan.read_by_wgmma) alignment = std::max(alignment, kWgmmaLargestAtomBytes);
  const RingPlacement placement = place_rings(
      fn,
      [&](const ir::Value& ring) {
        const SharedRingPlan& plan = planned.at(ring);
        return plan.slot_bytes * static_cast<std::uint64_t>(plan.stages);
      },
      alignment);
  for (SharedRingPlan& plan : planned.rings) plan.offset = placement.offsets.at(plan.ring);
  planned.bytes = placement.bytes;
  return planned;
}

std::string describe_shared_rings(const SharedRings& rings) {
  if (rings.rings.empty()) return {};
  std::ostringstream out;
  for (const SharedRingPlan& plan : rings.rings)
    out << "ring %" << plan.ring->id << " : " << ir::to_string(plan.ring->type) << ": " << plan.stages << " stages of "
        << plan.slot_bytes << " bytes at offset " << plan.offset << ", "
        << (plan.read_by_wgmma        ? "wgmma's swizzled layout"
            : plan.chosen_for_readers ? "layout chosen for its copies and dot fragments"
                                      : "row-major")
        << "\n"
        << plan.layout << "\n";
  out << "shared rings: " << rings.rings.size() << ", " << rings.bytes << " bytes\n";
  return out.str();
}

}  // namespace kiln::lowering
