// The emu as a sanitizer of shared memory: every shared access of a program
// must lie inside the kernel's allocation, a read must find bytes some
// thread of the program wrote (on a GPU the others hold what an earlier
// program left), and no two threads of a program may touch one byte, at
// least one of them writing, between the same two barriers. On a GPU such a pair is a data race whatever the order the
// emu's fibers happen to run in, so it is reported even when the emu's order gave the intended result. As CUDA's
// racecheck does, a write that leaves a byte's value as it was (every lane of a warp storing the one reduced value) is
// no hazard. A record per byte keeps its last write and up to two of its readers, each stamped with the barrier
// interval (epoch) it happened in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::runtime::emu {

/// Another thread's access that a new one races with.
struct SharedRace {
  std::size_t byte;    // the first byte both touch (offset in shared memory)
  int thread;          // the other thread
  std::uint32_t site;  // its access site (KernelDescription::access_sites)
  bool wrote;          // whether it wrote (else it read)
};

/// What a read found: a race, or a byte no thread of the program had written.
struct SharedRead {
  std::optional<SharedRace> race;
  std::optional<std::size_t> unwritten;
};

/// A read of shared memory that no thread of the program had written.
struct UnwrittenRead {
  std::size_t byte;                        // the first such byte (offset in shared memory)
  int thread;                              // the reader
  std::uint32_t site;                      // its access site
  std::optional<std::uint32_t> copy_site;  // the reader's own cp.async into the byte, in flight at the read
};

/// The shadow of one program's shared memory, reused program after program.
class SharedMemoryShadow {
 public:
  explicit SharedMemoryShadow(std::size_t bytes) : records_(bytes) {}

  /// A new program: nothing recorded before counts any more.
  void start_program() {
    program_epoch_ = ++epoch_;
    unwritten_read_.reset();
  }
  /// Every thread of the program passed a barrier.
  void barrier() { ++epoch_; }
  std::uint32_t epoch() const { return epoch_; }

  /// An atomic at [offset, offset + bytes): its bytes count as written.
  void mark_written(std::size_t offset, std::size_t bytes);
  /// Keeps the program's first unwritten read. It is a fault at the next
  /// barrier or at the program's end (CtaScheduler), unless a write by
  /// another thread before then is reported first as the race behind it.
  void note_unwritten_read(const UnwrittenRead& read) {
    if (!unwritten_read_) unwritten_read_ = read;
  }
  const std::optional<UnwrittenRead>& unwritten_read() const { return unwritten_read_; }
  /// `thread` reads [offset, offset + bytes) at `site`: the first race with
  /// another thread's write since the last barrier, else records the read;
  /// and the first byte no thread of the program has written (a store, a
  /// landed cp.async or an atomic), if any.
  SharedRead read(std::size_t offset, std::size_t bytes, int thread, std::uint32_t site);
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
    std::uint32_t written_in = 0;  // the start epoch of the last program that wrote the byte
    std::uint32_t write_epoch = 0;
    int writer = kNobody;
    std::uint32_t write_site = 0;
    std::uint32_t read_epoch = 0;
    std::array<int, 2> readers{kNobody, kNobody};  // two distinct readers are a witness against any writer
    std::array<std::uint32_t, 2> read_sites{};
  };
  std::vector<ByteRecord> records_;
  std::uint32_t epoch_ = 0;  // 0: never, so fresh records count as nobody's
  std::uint32_t program_epoch_ = 0;
  std::optional<UnwrittenRead> unwritten_read_;
};

/// The fault message of `read` in the running program.
std::string unwritten_read_fault(const UnwrittenRead& read);

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
