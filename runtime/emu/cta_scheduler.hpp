// The emu device's CTA scheduler: one program (CTA) of a launch runs as
// num_warps * 32 threads, each a fiber (Boost.Context fcontext) on the calling
// host thread. A thread runs until it reaches a barrier or a warp collective
// (shuffle, vote) and then hands over to the next ready thread; the last to
// arrive completes the collective and makes the others ready again.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <boost/context/detail/fcontext.hpp>

#include "async_copies.hpp"
#include "fiber_sanitizer.hpp"
#include "kernel_description.hpp"
#include "kiln/lowering/fault_record.hpp"
#include "shared_access.hpp"

namespace kiln::runtime::emu {

/// How shfl.sync picks the source lane (PTX ISA, "shfl.sync").
enum class ShuffleMode { up, down, butterfly, index };
/// vote.sync's reductions over the warp's predicates.
enum class VoteMode { all, any, uniform, ballot };
/// barrier0's reductions over the CTA's predicates (plain: none).
enum class BarrierMode { plain, all, any, count };

/// Threads of a warpgroup (wgmma's 4 warps).
inline constexpr int kThreadsPerWarpgroup = 128;

/// Runs programs of one launch, one after another, on the calling host thread.
/// Hooks reach the scheduler of the running fiber through current().
class CtaScheduler {
 public:
  /// Fiber stacks of `stack_bytes` each (plus a guard page below each), and
  /// the shared memory of one program.
  CtaScheduler(const LaunchContext& launch, KernelEntry entry, const std::uint64_t* arguments,
               std::size_t stack_bytes = kDefaultStackBytes);
  ~CtaScheduler();
  CtaScheduler(const CtaScheduler&) = delete;
  CtaScheduler& operator=(const CtaScheduler&) = delete;

  /// Runs every thread of `program` to its end. False when a thread faulted
  /// or the threads deadlocked: fault_message() says why.
  bool run(const std::array<int, 3>& program);
  const std::string& fault_message() const { return fault_; }
  /// Global-memory bytes the access checks counted so far.
  LaunchStats& stats() { return stats_; }

  /// The scheduler whose fiber runs on this host thread (for the hooks).
  static CtaScheduler& current();
  const LaunchContext& launch() const { return launch_; }
  const std::array<int, 3>& program() const { return program_; }
  /// "program (x, y, z)", as messages name the running program.
  std::string program_string() const;
  int thread_count() const { return thread_count_; }
  /// The running thread's index in its program (tid.x).
  int thread_index() const { return running_; }
  /// This program's shared memory.
  std::byte* shared_memory() const { return shared_; }
  std::size_t shared_memory_bytes() const { return shared_bytes_; }
  /// The running thread's cp.async copies in flight.
  AsyncCopies& async_copies() { return async_copies_[static_cast<std::size_t>(running_)]; }
  /// The record of this program's shared-memory accesses since its last barriers.
  SharedMemoryShadow& shared_shadow() { return shared_shadow_; }
  /// This program's fault record (fault_record.hpp), empty when it starts.
  lowering::FaultRecord& fault_record() { return fault_record_; }

  /// Waits until every thread of the program arrives, then returns to all of
  /// them `mode`'s reduction of their `predicate`s (plain: 0). `site` tells
  /// the barriers of the code apart (KernelDescription::barrier_places): a
  /// thread arriving at another site than the waiting threads is a fault,
  /// since on a GPU the two groups would release each other at different points.
  std::uint32_t barrier(std::uint32_t site, BarrierMode mode = BarrierMode::plain, bool predicate = false);
  /// shfl.sync: this lane's `value` to the warp, the value of the lane that
  /// `mode`, `operand` and `clamp` (c: clamp in bits 0-4, segment mask in bits
  /// 8-12) pick back. Every lane of `member_mask` must take part.
  std::uint32_t shuffle(ShuffleMode mode, std::uint32_t member_mask, std::uint32_t value, std::uint32_t operand,
                        std::uint32_t clamp);
  /// vote.sync over the lanes of `member_mask`.
  std::uint32_t vote(VoteMode mode, std::uint32_t member_mask, bool predicate);
  /// A warp-wide operation on data in each lane's memory (mma.sync): every
  /// lane of the full warp passes `data`; the last to arrive runs `complete`
  /// once on all 32 (in lane order) while the others wait.
  using WarpExchange = void (*)(const std::array<void*, 32>& lanes);
  void warp_exchange(void* data, WarpExchange complete);
  /// The same over a warpgroup (wgmma): the 128 threads of the 4 warps from
  /// warp 4 (thread index / 128) on.
  using WarpgroupExchange = void (*)(const std::array<void*, 128>& threads);
  void warpgroup_exchange(void* data, WarpgroupExchange complete);
  /// One shared-memory read of a wgmma.mma_async: `bytes` at `address`, at
  /// access site `site`.
  struct WgmmaRead {
    const std::byte* address;
    std::uint64_t bytes;
    std::uint32_t site;
  };
  /// The running thread's wgmma state: whether it passed a wgmma.fence since
  /// its last wait, its wgmma.mma_async not yet committed to a group, and the
  /// shared reads of the instructions it completed: those not yet committed,
  /// then each committed group's, oldest first. A wgmma reads its operands
  /// until the wait_group that retires its group, which reads them again
  /// (warpgroup_wait), so that a write since the last barrier is a race.
  struct WgmmaState {
    bool fenced = false;
    int uncommitted = 0;
    std::vector<WgmmaRead> uncommitted_reads;
    std::deque<std::vector<WgmmaRead>> committed_reads;
  };
  WgmmaState& wgmma_state() { return wgmma_states_[static_cast<std::size_t>(running_)]; }
  /// Ends the running thread's program (the launch throws KernelError with
  /// the message `describe()` returns). Does not return: the fiber is
  /// abandoned without unwinding, so the message is made here and its
  /// temporaries freed before the jump; the caller's own frame must own no
  /// memory and be in no catch handler, since nothing on it is destroyed.
  template <class Describe>
  [[noreturn]] void fault(const Describe& describe) {
    record_fault(describe());
    abandon_thread();
  }

  /// Stack bytes per thread. The deepest thread of the test suites touched
  /// 36 KiB (attention with 128-wide heads, whose code at codegen level None
  /// keeps every value in its frame); pages never touched cost nothing
  /// (they are reserved, not committed), and a guard page stops an overflow.
  static constexpr std::size_t kDefaultStackBytes = 256 * 1024;

 private:
  enum class ThreadState { ready, at_barrier, at_warp_collective, finished };
  /// What one lane brought to a warp collective.
  struct Deposit {
    bool is_vote = false;
    ShuffleMode shuffle = ShuffleMode::index;
    VoteMode vote = VoteMode::all;
    std::uint32_t value = 0;
    std::uint32_t operand = 0;
    std::uint32_t clamp = 0;
  };
  struct Warp {
    int arrived = 0;
    std::array<Deposit, 32> deposits{};
    std::array<std::uint32_t, 32> results{};
    std::array<void*, 32> exchanged{};
  };

  static void fiber_main(boost::context::detail::transfer_t from);
  std::uint32_t warp_collective(std::uint32_t member_mask, const Deposit& deposit);
  /// The running thread's part of an exchange among the N threads of its
  /// group (a warp, a warpgroup), counted by `arrived`.
  template <std::size_t N>
  void exchange(int& arrived, std::array<void*, N>& exchanged, void* data,
                void (*complete)(const std::array<void*, N>&));
  void complete_warp_collective(Warp& warp, int first_lane, std::uint32_t member_mask);
  void make_ready(int thread);
  void suspend();
  [[noreturn]] void finish_thread();
  void record_fault(std::string message);
  [[noreturn]] void abandon_thread();
  std::string deadlock_message() const;
  std::string barrier_string(std::uint32_t site) const;

  const LaunchContext& launch_;
  KernelEntry entry_;
  const std::uint64_t* arguments_;
  int thread_count_;
  std::size_t stack_bytes_;
  std::size_t stack_stride_;
  std::byte* stacks_ = nullptr;  // thread_count_ stacks, each above a guard page
  std::unique_ptr<std::byte[]> shared_allocation_;
  std::byte* shared_ = nullptr;   // the program's shared memory, inside shared_allocation_
  std::size_t shared_bytes_ = 0;  // its size: the kernel's, at least 64
  std::vector<void*> contexts_;   // each thread's suspended fiber
  std::vector<ThreadState> states_;
  std::vector<int> ready_;  // ring of ready threads
  std::size_t ready_head_ = 0, ready_count_ = 0;
  std::vector<Warp> warps_;
  struct Warpgroup {
    int arrived = 0;
    std::array<void*, 128> exchanged{};
  };
  std::vector<Warpgroup> warpgroups_;
  std::vector<WgmmaState> wgmma_states_;   // per thread
  std::vector<AsyncCopies> async_copies_;  // per thread
  SharedMemoryShadow shared_shadow_;
  lowering::FaultRecord fault_record_;
  int barrier_arrived_ = 0;
  std::uint32_t barrier_accumulated_ = 0;
  std::uint32_t barrier_result_ = 0;
  BarrierMode barrier_mode_ = BarrierMode::plain;
  std::uint32_t barrier_site_ = 0;  // where the waiting threads wait
  int barrier_first_ = -1;          // the first of them
  int finished_ = 0;
  int running_ = -1;
  void* scheduler_context_ = nullptr;  // where a suspending fiber jumps to
  std::array<int, 3> program_{};
  std::string fault_;
  bool faulted_ = false;
  LaunchStats stats_;
  FiberSanitizer sanitizer_;  // the stack switches, told to ASan and TSan
};

}  // namespace kiln::runtime::emu
