// The host memory of every live `cpu` and `emu` allocation (DeviceMemory):
// where the bounds checks of both devices look up an address that lies in no
// pointer argument of the launch, such as a pointer a kernel loaded from
// memory (Buffer::address() stored in an i64 buffer, Triton's pointer arrays).
#pragma once

#include <cstdint>
#include <optional>

#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime::live_allocations {

/// Records [begin, begin + bytes) as live; DeviceMemory calls these.
void add(std::uintptr_t begin, std::uint64_t bytes);
void remove(std::uintptr_t begin);

/// The live allocation holding all of [address, address + bytes), or the
/// nearest one when none holds it (nullopt when there are none). Its range
/// has no name; messages describe it by its address.
struct Lookup {
  MemoryRange range;
  bool holds = false;
};
std::optional<Lookup> find(std::uint64_t address, std::uint64_t bytes);

}  // namespace kiln::runtime::live_allocations
