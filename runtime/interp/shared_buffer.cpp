// local_alloc, async_commit, async_wait and local_load: the shared rings of
// pipelined loops (OPS.md, "Shared buffers"), each slot's copy → wait →
// barrier → read cycle checked (ring_state.hpp). async_copy is in memory.cpp.
#include "shared_buffer.hpp"

#include <algorithm>
#include <cstring>

#include "fault.hpp"

namespace kiln::runtime::interp {

RingView ring_view(const SlotRef& ring, const Exec& ex) {
  std::byte* base = ex.at<std::byte>(ring);
  RingSize size;
  std::memcpy(&size, base, sizeof size);
  return {base, size.slots, size.slot_bytes};
}

RingSlot& checked_slot(const RingView& ring, std::int32_t index, const Instr& ins, const Exec& ex) {
  if (index < 0 || index >= ring.slots)
    fault(ex, std::string(ir::op_info(ins.code).name) + at_line(ins) + " in " + program_string(ex) + ": slot " +
                  std::to_string(index) + " of a ring of " + std::to_string(ring.slots));
  return ring.slot(index);
}

void RingState::wait(std::int64_t pending) {
  completed_ = std::max(completed_, committed_ - pending);
  for (const RingView& ring : rings_)
    for (std::int64_t s = 0; s < ring.slots; ++s) {
      RingSlot& slot = ring.slot(s);
      if (slot.phase != RingSlot::Phase::in_flight || slot.group >= completed_) continue;
      std::memcpy(ring.data(s), ring.in_flight(s), ring.slot_bytes);
      slot.phase = RingSlot::Phase::landed;
    }
}

void RingState::barrier() {
  for (const RingView& ring : rings_)
    for (std::int64_t s = 0; s < ring.slots; ++s) {
      RingSlot& slot = ring.slot(s);
      if (slot.phase == RingSlot::Phase::landed) slot.phase = RingSlot::Phase::visible;
      slot.read_since_barrier = false;
    }
}

namespace {

/// param: [slots, bytes per slot].
KILN_ROUTINE void run_local_alloc(const Instr& ins, Exec& ex) {
  const RingSize size{ins.param[0], static_cast<std::size_t>(ins.param[1])};
  std::byte* base = ex.at<std::byte>(ins.out[0]);
  std::memcpy(base, &size, sizeof size);
  const RingView ring{base, size.slots, size.slot_bytes};
  for (std::int64_t s = 0; s < ring.slots; ++s) ring.slot(s) = RingSlot{};
  ex.rings.add_ring(ring);
}

KILN_ROUTINE void run_async_commit(const Instr&, Exec& ex) { ex.rings.commit(); }

/// param[0]: the groups that may stay pending.
KILN_ROUTINE void run_async_wait(const Instr& ins, Exec& ex) { ex.rings.wait(ins.param[0]); }

KILN_ROUTINE void run_local_load(const Instr& ins, Exec& ex) {
  const RingView ring = ring_view(ins.in[0], ex);
  RingSlot& slot = checked_slot(ring, *ex.at<std::int32_t>(ins.in[1]), ins, ex);
  const std::string reads =
      "local_load" + at_line(ins) + " in " + program_string(ex) + " reads slot " + std::to_string(ring.index_of(slot));
  switch (slot.phase) {
    case RingSlot::Phase::empty: fault(ex, reads + ", which no async_copy has written");
    case RingSlot::Phase::in_flight:
      fault(ex, reads + " before an async_wait completed the copy of async_copy" + at_line(*slot.copy) + " into it");
    case RingSlot::Phase::landed:
      fault(ex, reads + ", whose copy (async_copy" + at_line(*slot.copy) +
                    ") landed, with no barrier since to make it visible to the whole program");
    case RingSlot::Phase::visible: break;
  }
  std::memcpy(ex.at<std::byte>(ins.out[0]), ring.data(ring.index_of(slot)), ring.slot_bytes);
  slot.read_since_barrier = true;
  slot.reader = &ins;
}

}  // namespace

void bind_shared_buffer(const ir::Operation& op, Instr& ins) {
  switch (op.code) {
    case ir::OpCode::local_alloc: {
      const ir::Type& ring = op.result()->type;
      ins.param[0] = ring.shape[0];
      ins.param[1] = ring.numel() / ring.shape[0] * ir::dtype_bytes(ring.dtype);
      ins.run = &run_local_alloc;
      return;
    }
    case ir::OpCode::async_copy: bind_async_copy(op, ins); return;
    case ir::OpCode::async_commit: ins.run = &run_async_commit; return;
    case ir::OpCode::async_wait:
      ins.param[0] = op.int_attribute("pending");
      ins.run = &run_async_wait;
      return;
    case ir::OpCode::local_load: ins.run = &run_local_load; return;
    default: unsupported(op, "not a shared-buffer op");
  }
}

}  // namespace kiln::runtime::interp
