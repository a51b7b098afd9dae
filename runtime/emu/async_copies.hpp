// cp.async on the emu: the copies one thread has issued and not yet
// completed. Each reads its source when issued and lands in shared memory
// only when a wait completes its group (PTX ISA: cp.async.commit_group,
// cp.async.wait_group), so code that reads a destination before the wait
// that covers it sees what was there before, as it may on a GPU.
#pragma once

#include <cstddef>
#include <vector>

namespace kiln::runtime::emu {

class AsyncCopies {
 public:
  /// A copy of `copied` bytes from `source` (read now) to `destination`,
  /// the rest of its `bytes` zero-filled, in the thread's open group.
  void issue(std::byte* destination, const std::byte* source, std::size_t copied, std::size_t bytes);
  /// Closes the open group (cp.async.commit_group).
  void commit();
  /// Completes every committed group but the newest `pending_groups`
  /// (cp.async.wait_group); copies not yet committed stay in flight.
  void wait(int pending_groups);
  /// Forgets every copy (a new program).
  void clear();

 private:
  struct Copy {
    std::byte* destination;
    std::vector<std::byte> data;
    int group;  // -1 while the copy's group is open
  };
  std::vector<Copy> copies_;
  int committed_ = 0;
};

}  // namespace kiln::runtime::emu
