// cp.async on the emu: the copies one thread has issued and not yet
// completed. Each reads its source when issued and lands in shared memory
// only when a wait completes its group (PTX ISA: cp.async.commit_group,
// cp.async.wait_group), so code that reads a destination before the wait
// that covers it sees what was there before, as it may on a GPU. Each copy
// keeps its access site and the barrier interval it was issued in, for the
// race check when it lands (shared_access.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace kiln::runtime::emu {

class AsyncCopies {
 public:
  /// A copy of `copied` bytes from `source` (read now) to `destination`,
  /// the rest of its `bytes` zero-filled, in the thread's open group; issued
  /// at access site `site` in barrier interval `epoch`.
  void issue(std::byte* destination, const std::byte* source, std::size_t copied, std::size_t bytes, std::uint32_t site,
             std::uint32_t epoch);
  /// Closes the open group (cp.async.commit_group).
  void commit();
  /// Completes every committed group but the newest `pending_groups`
  /// (cp.async.wait_group); copies not yet committed stay in flight. Before
  /// each copy lands, `check(destination, data, bytes, site, epoch)` runs.
  template <class Check>
  void wait(int pending_groups, Check check) {
    const int complete_below = committed_ - pending_groups;
    auto done = [&](const Copy& copy) { return copy.group >= 0 && copy.group < complete_below; };
    for (const Copy& copy : copies_)
      if (done(copy)) {
        check(copy.destination, copy.data.data(), copy.data.size(), copy.site, copy.epoch);
        std::memcpy(copy.destination, copy.data.data(), copy.data.size());
      }
    std::erase_if(copies_, done);
  }
  /// The access site of a copy in flight whose destination holds `address`, if any.
  std::optional<std::uint32_t> site_in_flight_at(const std::byte* address) const;
  /// Forgets every copy (a new program).
  void clear();

 private:
  struct Copy {
    std::byte* destination;
    std::vector<std::byte> data;
    int group;  // -1 while the copy's group is open
    std::uint32_t site;
    std::uint32_t epoch;
  };
  std::vector<Copy> copies_;
  int committed_ = 0;
};

}  // namespace kiln::runtime::emu
