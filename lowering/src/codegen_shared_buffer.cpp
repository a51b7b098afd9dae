// LLVM code generation for the shared rings of pipelined loops (OPS.md,
// "Shared buffers"): every local_alloc's ring is placed once, at the start
// of the kernel's shared memory before any op's scratch, since a ring lives
// across the loop while ops come and go, where its plan puts it
// (shared_rings.hpp: rings that are never live at once share bytes);
// async_commit and async_wait are cp.async.commit_group and wait_group (the
// wait followed by fence.proxy.async where wgmma reads a ring, so that the
// copies that landed are visible to the tensor cores after the loop's
// barrier); a
// local_load whose every user is a dot reading it as a or b costs nothing
// here (the dot reads its fragments from the slot, with ldmatrix where the
// ring's layout allows), else it reads the slot into its own layout.
// async_copy is in codegen_memory.cpp.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"
#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/shared_rings.hpp"
#include "kiln/lowering/wgmma_layout.hpp"
#include "operand_uses.hpp"

namespace kiln::lowering {

namespace {

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

void place_shared_rings(KernelCodegen& cg) {
  const SharedRings planned = plan_shared_rings(cg.fn, cg.axes, cg.layouts, cg.target);
  for (const SharedRingPlan& plan : planned.rings) {
    SharedRing ring;
    ring.memory_type = cg.memory_type(plan.ring->type.element(), *plan.ring->def);
    ring.layout = plan.layout;
    ring.slot_bytes = plan.slot_bytes;
    ring.base = cg.builder.CreateConstInBoundsGEP1_64(cg.builder.getInt8Ty(), shared_memory_array(cg), plan.offset);
    cg.rings.emplace(plan.ring, std::move(ring));
    cg.rings_read_by_wgmma |= plan.read_by_wgmma;
  }
  if (cg.rings_read_by_wgmma) shared_memory_array(cg)->setAlignment(llvm::Align(kWgmmaLargestAtomBytes));
  cg.ring_bytes = planned.bytes;
  cg.shared_bytes = std::max(cg.shared_bytes, planned.bytes);
}

void emit_shared_buffer_op(KernelCodegen& cg, const ir::Operation& op) {
  llvm::IRBuilderBase& b = cg.builder;
  switch (op.code) {
    case ir::OpCode::local_alloc: return;  // placed by place_shared_rings
    case ir::OpCode::async_copy: emit_async_copy(cg, op); return;
    case ir::OpCode::async_commit: b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {}); return;
    case ir::OpCode::async_wait:
      b.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                        {b.getInt32(static_cast<std::uint32_t>(op.int_attribute("pending")))});
      if (cg.rings_read_by_wgmma) emit_ptx_statement(cg, "fence.proxy.async.shared::cta;");
      return;
    case ir::OpCode::local_load: emit_local_load(cg, op); return;
    default: throw InternalError(std::string(op.name()) + " reached the shared-buffer code generator");
  }
}

}  // namespace kiln::lowering
