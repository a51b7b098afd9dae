// The interpreter's state of the program's shared rings (OPS.md, "Shared
// buffers"): where each slot stands in its copy → wait → barrier → read
// cycle, so that a pipelined program that reads a slot too early, or
// overwrites one another thread may still be reading, is reported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::runtime::interp {

struct Instr;

/// One slot of a ring, at the start of the ring's frame slot.
struct RingSlot {
  enum class Phase : std::uint8_t { empty, in_flight, landed, visible };
  Phase phase = Phase::empty;
  bool read_since_barrier = false;
  std::int64_t group = 0;         // the commit group of the copy in flight
  const Instr* copy = nullptr;    // the async_copy that last wrote the slot
  const Instr* reader = nullptr;  // the local_load that last read it
};

/// A ring in a frame: its size (RingSize), S RingSlots, then S slots of
/// data, then S of copies in flight (read from global memory at issue,
/// landing at their wait).
struct RingSize {
  std::int64_t slots = 0;
  std::size_t slot_bytes = 0;
};
struct RingView {
  std::byte* base = nullptr;
  std::int64_t slots = 0;
  std::size_t slot_bytes = 0;

  RingSlot& slot(std::int64_t s) const { return reinterpret_cast<RingSlot*>(base + kSlotsAt)[s]; }
  std::int64_t index_of(const RingSlot& s) const { return &s - &slot(0); }
  std::byte* data(std::int64_t s) const {
    return base + header_bytes(slots) + static_cast<std::size_t>(s) * slot_bytes;
  }
  std::byte* in_flight(std::int64_t s) const { return data(slots + s); }

  static constexpr std::size_t kSlotsAt = 64;
  static std::size_t header_bytes(std::int64_t slots) {
    return kSlotsAt + (static_cast<std::size_t>(slots) * sizeof(RingSlot) + 63) / 64 * 64;
  }
  /// The frame bytes of a ring of `slots` slots of `slot_bytes`.
  static std::size_t frame_bytes(std::int64_t slots, std::size_t slot_bytes) {
    return header_bytes(slots) + 2 * static_cast<std::size_t>(slots) * slot_bytes;
  }
};

/// The program's copy groups and its live rings.
class RingState {
 public:
  /// A new program: no groups, no rings.
  void clear() {
    committed_ = completed_ = 0;
    rings_.clear();
  }
  /// A local_alloc ran: its ring is live (once, however often it runs).
  void add_ring(const RingView& ring) {
    for (const RingView& live : rings_)
      if (live.base == ring.base) return;
    rings_.push_back(ring);
  }
  /// The group the copies issued now belong to.
  std::int64_t open_group() const { return committed_; }
  void commit() { ++committed_; }
  /// Completes every committed group but the newest `pending`: their copies land.
  void wait(std::int64_t pending);
  /// Landed copies become visible to every thread; reads no longer hold their slots.
  void barrier();

 private:
  std::int64_t committed_ = 0, completed_ = 0;
  std::vector<RingView> rings_;
};

}  // namespace kiln::runtime::interp
