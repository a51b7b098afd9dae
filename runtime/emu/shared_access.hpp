// The emu as a sanitizer of shared memory: every shared access of a program
// must lie inside the kernel's allocation, and no two threads of a program
// may touch one byte, at least one of them writing, between the same two
// barriers. On a GPU such a pair is a data race whatever the order the emu's
// fibers happen to run in, so it is reported even when the emu's order gave
// the intended result. As CUDA's racecheck does, a write that leaves a byte's
// value as it was (every lane of a warp storing the one reduced value) is no
// hazard. A record per byte keeps its last write and up to two of its
// readers, each stamped with the barrier interval (epoch) it happened in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::runtime::emu {

/// Another thread's access that a new one races with.
struct SharedRace {
  std::size_t byte;    // the first byte both touch (offset in shared memory)
  int thread;          // the other thread
  std::uint32_t site;  // its access site (KernelDescription::access_sites)
  bool wrote;          // whether it wrote (else it read)
};

/// The shadow of one program's shared memory, reused program after program.
class SharedMemoryShadow {
 public:
  explicit SharedMemoryShadow(std::size_t bytes) : records_(bytes) {}

  /// A new program: nothing recorded before counts any more.
  void start_program() { ++epoch_; }
  /// Every thread of the program passed a barrier.
  void barrier() { ++epoch_; }
  std::uint32_t epoch() const { return epoch_; }

  /// `thread` reads [offset, offset + bytes) at `site`: the first race with
  /// another thread's write since the last barrier, else records the read.
  std::optional<SharedRace> read(std::size_t offset, std::size_t bytes, int thread, std::uint32_t site);
  /// `thread` writes `data` over `memory`'s [offset, offset + bytes) at
  /// `site`: the first race with another thread's read or write since the
  /// barrier before epoch `since` (the current one for a store; the issue's
  /// for a cp.async, which may land anywhere from its issue to its wait),
  /// else records the write of each byte it changes.
  std::optional<SharedRace> write(const std::byte* memory, std::size_t offset, const std::byte* data, std::size_t bytes,
                                  int thread, std::uint32_t site, std::uint32_t since);

 private:
  static constexpr int kNobody = -1;
  struct ByteRecord {
    std::uint32_t write_epoch = 0;
    int writer = kNobody;
    std::uint32_t write_site = 0;
    std::uint32_t read_epoch = 0;
    std::array<int, 2> readers{kNobody, kNobody};  // two distinct readers are a witness against any writer
    std::array<std::uint32_t, 2> read_sites{};
  };
  std::vector<ByteRecord> records_;
  std::uint32_t epoch_ = 0;  // 0: never, so fresh records count as nobody's
};

/// The check before every shared-memory access of an emulated kernel (the
/// kiln_emu_check_shared_access hook): `bytes` at `address` inside the
/// program's shared memory, and no race; else the running program faults
/// naming the site's source line and, for a race, both threads and lines.
/// Lanes past the site's active lanes (an ldmatrix's ignored rows) pass.
/// `stored` holds a store's bytes; null for a read.
void check_shared_access(const std::byte* address, std::uint64_t bytes, std::uint32_t site, const std::byte* stored);
/// The bounds check of a cp.async's destination when issued (no race check:
/// the copy writes when it lands, land_async_copy).
void check_async_copy_destination(const std::byte* address, std::uint64_t bytes, std::uint32_t site);
/// The race check and record of a cp.async of the running thread landing
/// now: `data` over `bytes` at `address`.
void land_async_copy(std::byte* address, const std::byte* data, std::size_t bytes, std::uint32_t site,
                     std::uint32_t issued);

}  // namespace kiln::runtime::emu
