// What the shared-buffer routines (shared_buffer.cpp) and async_copy's
// (memory.cpp, beside the loads it shares its checks with) have in common.
#pragma once

#include <cstdint>

#include "program.hpp"

namespace kiln::runtime::interp {

/// The ring in frame slot `ring` (a local_alloc's result).
RingView ring_view(const SlotRef& ring, const Exec& ex);

/// Slot `index` of `ring`; KernelError naming `ins` when it is out of range.
RingSlot& checked_slot(const RingView& ring, std::int32_t index, const Instr& ins, const Exec& ex);

/// Binds async_copy (memory.cpp): its pointers and mask come first in `ins.in`, as a load's.
void bind_async_copy(const ir::Operation& op, Instr& ins);

}  // namespace kiln::runtime::interp
