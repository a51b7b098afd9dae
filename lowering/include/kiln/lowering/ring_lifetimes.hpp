// Where the shared rings of pipelined loops (local_alloc) live in shared
// memory: rings that are never live at once share bytes. A ring is live from
// its local_alloc to the first `async_wait {pending = 0}` followed by a
// `barrier` in its block after its last use there: the wait lands every copy
// still in flight into it, and the barrier orders every thread's last read of
// it before any thread's first write of what comes next. A ring without such
// a pair after its last use lives to the end of the kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>

#include "kiln/ir/ir.hpp"

namespace kiln::lowering {

/// Each ring's byte offset from the start of shared memory, and the bytes
/// all rings take together (the most that are live at one time, with gaps).
struct RingPlacement {
  std::unordered_map<const ir::Value*, std::uint64_t> offsets;
  std::uint64_t bytes = 0;
};

/// Places every ring of `fn` (`bytes_of` gives each ring's size; every offset
/// is a multiple of `alignment`) so that rings live at the same time do not
/// overlap: first fit, in program order.
RingPlacement place_rings(const ir::Function& fn, const std::function<std::uint64_t(const ir::Value&)>& bytes_of,
                          std::uint64_t alignment);

}  // namespace kiln::lowering
