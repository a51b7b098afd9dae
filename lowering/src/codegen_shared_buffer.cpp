// LLVM code generation for the shared rings of pipelined loops (OPS.md,
// "Shared buffers"): every local_alloc's ring is placed once, at the start
// of the kernel's shared memory before any op's scratch, since a ring lives
// across the loop while ops come and go; rings that are never live at once
// share bytes (plan_shared_rings, ring_lifetimes.hpp);
// async_commit and async_wait are cp.async.commit_group and wait_group; a
// local_load whose every user is a dot reading it as a or b costs nothing
// here (the dot reads its fragments from the slot, with ldmatrix where the
// ring's layout allows), else it reads the slot into its own layout.
// async_copy is in codegen_memory.cpp.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <bit>

#include "codegen.hpp"
#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/ring_lifetimes.hpp"
#include "kiln/lowering/shared_layout.hpp"

namespace kiln::lowering {

namespace {

/// Slots start on 128-byte lines, so that a swizzle's bank analysis holds.
constexpr std::uint64_t kSlotAlignment = 128;

/// The ops of `fn` reading `value` as an operand.
std::vector<std::pair<const ir::Operation*, int>> uses_of(const ir::Function& fn, const ir::Value& value) {
  std::vector<std::pair<const ir::Operation*, int>> uses;
  ir::walk(fn.body, [&](ir::Operation& op) {
    for (std::size_t i = 0; i < op.operands.size(); ++i)
      if (op.operands[i] == &value) uses.emplace_back(&op, static_cast<int>(i));
  });
  return uses;
}

/// The layout the ring's slots are read in by every reader, when all are
/// tensor-core dots taking it as the same operand; none otherwise.
std::optional<LinearLayout> common_fragment_layout(const KernelCodegen& cg, const ir::Value& ring) {
  std::optional<LinearLayout> fragment;
  for (const auto& [load, index] : uses_of(cg.fn, ring)) {
    if (load->code != ir::OpCode::local_load) continue;
    for (const auto& [user, operand] : uses_of(cg.fn, *load->result())) {
      if (user->code != ir::OpCode::dot || !reads_shared_slot(*user, operand) ||
          !dot_uses_tensor_cores(*user, cg.target))
        return std::nullopt;
      LinearLayout needed =
          dot_fragment_layout(*user, operand == 0 ? DotOperand::a : DotOperand::b, cg.target.num_warps);
      if (fragment && *fragment != needed) return std::nullopt;
      fragment = std::move(needed);
    }
  }
  return fragment;
}

/// The layout async_copy writes the ring from: its first copy's pointers'.
const LinearLayout* copy_layout(const KernelCodegen& cg, const ir::Value& ring) {
  for (const auto& [op, index] : uses_of(cg.fn, ring))
    if (op->code == ir::OpCode::async_copy) return &cg.layouts.at(*op->operands[2]);
  return nullptr;
}

void emit_local_load(KernelCodegen& cg, const ir::Operation& op) {
  const SharedRing& ring = cg.rings.at(op.operands[0]);
  const SharedSlot slot{ring_slot_offset(cg, ring, *op.operands[1]), &ring};
  cg.slots[op.result()] = slot;
  bool only_dots = true;
  for (const auto& [user, operand] : uses_of(cg.fn, *op.result()))
    only_dots &= user->code == ir::OpCode::dot && reads_shared_slot(*user, operand);
  if (only_dots) return;
  const LinearLayout& layout = cg.layouts.at(*op.result());
  cg.define(*op.result(), SharedTile(cg, layout, ring.layout, ring.memory_type, ring.base, slot.element_offset)
                              .load(cg.element_type(op.result()->type.element(), op)));
}

}  // namespace

llvm::Value* ring_slot_offset(KernelCodegen& cg, const SharedRing& ring, const ir::Value& slot) {
  const std::uint64_t element_bytes = cg.module.getDataLayout().getTypeAllocSize(ring.memory_type);
  return cg.builder.CreateMul(cg.values_of(slot).at(0),
                              cg.builder.getInt32(static_cast<std::uint32_t>(ring.slot_bytes / element_bytes)));
}

void plan_shared_rings(KernelCodegen& cg) {
  ir::walk(cg.fn.body, [&](ir::Operation& op) {
    if (op.code != ir::OpCode::local_alloc) return;
    const ir::Value& ring = *op.result();
    const ir::Type slot_type =
        ir::Type::tile(ring.type.dtype, ir::Shape(ring.type.shape.begin() + 1, ring.type.shape.end()));
    SharedRing planned;
    planned.memory_type = cg.memory_type(slot_type.element(), op);
    const int element_bytes = static_cast<int>(cg.module.getDataLayout().getTypeAllocSize(planned.memory_type));
    const LinearLayout* writer = copy_layout(cg, ring);
    std::optional<LinearLayout> reader = common_fragment_layout(cg, ring);
    if (writer && reader && slot_type.shape.size() == 2) {
      planned.layout = choose_shared_layout(*writer, *reader, element_bytes);
    } else {
      std::vector<LinearLayout::OutDim> dims;
      for (std::size_t d = 0; d < slot_type.shape.size(); ++d)
        dims.push_back({"dim" + std::to_string(d), std::countr_zero(static_cast<std::uint64_t>(slot_type.shape[d]))});
      planned.layout = row_major_shared_layout(dims);
    }
    const auto tile_bytes = static_cast<std::uint64_t>(slot_type.numel() * element_bytes);
    planned.slot_bytes = (tile_bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
    cg.rings.emplace(&ring, std::move(planned));
  });
  const RingPlacement placement = place_rings(
      cg.fn,
      [&](const ir::Value& ring) {
        return cg.rings.at(&ring).slot_bytes * static_cast<std::uint64_t>(ring.type.shape[0]);
      },
      kSlotAlignment);
  for (auto& [ring, planned] : cg.rings)
    planned.base = cg.builder.CreateConstInBoundsGEP1_64(cg.builder.getInt8Ty(), shared_memory_array(cg),
                                                         placement.offsets.at(ring));
  cg.ring_bytes = placement.bytes;
  cg.shared_bytes = std::max(cg.shared_bytes, placement.bytes);
}

void emit_shared_buffer_op(KernelCodegen& cg, const ir::Operation& op) {
  llvm::IRBuilderBase& b = cg.builder;
  switch (op.code) {
    case ir::OpCode::local_alloc: return;  // placed by plan_shared_rings
    case ir::OpCode::async_copy: emit_async_copy(cg, op); return;
    case ir::OpCode::async_commit: b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {}); return;
    case ir::OpCode::async_wait:
      b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                        {b.getInt32(static_cast<std::uint32_t>(op.int_attribute("pending")))});
      return;
    case ir::OpCode::local_load: emit_local_load(cg, op); return;
    default: throw InternalError(std::string(op.name()) + " reached the shared-buffer code generator");
  }
}

}  // namespace kiln::lowering
