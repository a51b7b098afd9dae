// The CTA scheduler: fibers on raw Boost.Context fcontexts (a fault abandons a
// fiber without unwinding the JIT-compiled frames on its stack), a ring of
// ready threads, barriers and warp collectives completed by their last
// arrival, and deadlock detection when no thread is ready.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <optional>

#include "cta_scheduler.hpp"
#include "kiln/lowering/compile.hpp"

namespace kiln::runtime::emu {

namespace {

using boost::context::detail::jump_fcontext;
using boost::context::detail::make_fcontext;
using boost::context::detail::transfer_t;
using lowering::kLanesPerWarp;

/// Shared memory starts each program filled with this byte: a read of an
/// element no thread wrote shows as a distinctive pattern, not stale data.
constexpr int kSharedMemoryPoison = 0x7d;
/// The program's shared memory starts on a 1024-byte boundary, as a GPU's
/// does, so that wgmma's swizzle patterns fall on the same offsets.
constexpr std::size_t kSharedMemoryAlignment = 1024;

thread_local CtaScheduler* running_scheduler = nullptr;

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

/// The lane shfl.sync reads for `lane` (PTX ISA: the source lane j, or the
/// lane itself when j is outside the segment the clamp allows).
int shuffle_source(ShuffleMode mode, int lane, std::uint32_t operand, std::uint32_t c) {
  const int b = static_cast<int>(operand & 31);
  const int clamp = static_cast<int>(c & 31);
  const int segment_mask = static_cast<int>((c >> 8) & 31);
  const int max_lane = (lane & segment_mask) | (clamp & ~segment_mask);
  const int min_lane = lane & segment_mask;
  int j = lane;
  bool in_range = false;
  switch (mode) {
    case ShuffleMode::up:
      j = lane - b;
      in_range = j >= max_lane;
      break;
    case ShuffleMode::down:
      j = lane + b;
      in_range = j <= max_lane;
      break;
    case ShuffleMode::butterfly:
      j = lane ^ b;
      in_range = j <= max_lane;
      break;
    case ShuffleMode::index:
      j = min_lane | (b & ~segment_mask);
      in_range = j <= max_lane;
      break;
  }
  return in_range ? j : lane;
}

}  // namespace

CtaScheduler::CtaScheduler(const LaunchContext& launch, KernelEntry entry, const std::uint64_t* arguments,
                           std::size_t stack_bytes)
    : launch_(launch),
      entry_(entry),
      arguments_(arguments),
      thread_count_(launch.kernel->threads_per_program),
      stack_bytes_((stack_bytes + page_size() - 1) / page_size() * page_size()),
      stack_stride_(stack_bytes_ + page_size()),
      contexts_(static_cast<std::size_t>(thread_count_)),
      states_(static_cast<std::size_t>(thread_count_)),
      ready_(static_cast<std::size_t>(thread_count_)),
      warps_(static_cast<std::size_t>((thread_count_ + kLanesPerWarp - 1) / kLanesPerWarp)),
      warpgroups_(static_cast<std::size_t>((thread_count_ + kThreadsPerWarpgroup - 1) / kThreadsPerWarpgroup)),
      wgmma_states_(static_cast<std::size_t>(thread_count_)),
      async_copies_(static_cast<std::size_t>(thread_count_)),
      shared_shadow_(launch.kernel->shared_bytes) {
  const std::size_t bytes = stack_stride_ * static_cast<std::size_t>(thread_count_);
  void* stacks = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stacks == MAP_FAILED) throw std::bad_alloc();
  stacks_ = static_cast<std::byte*>(stacks);
  // A guard page below each stack turns an overflow into a fault, not a
  // neighbour's corrupted frames.
  for (int t = 0; t < thread_count_; ++t)
    mprotect(stacks_ + stack_stride_ * static_cast<std::size_t>(t), page_size(), PROT_NONE);
  shared_bytes_ = std::max<std::size_t>(launch.kernel->shared_bytes, 64);
  // Aligned by hand inside a plain allocation: an aligned allocation would
  // leave glibc's split-off fragments in its caches at every launch.
  shared_allocation_ = std::make_unique<std::byte[]>(shared_bytes_ + kSharedMemoryAlignment);
  const auto address = reinterpret_cast<std::uintptr_t>(shared_allocation_.get());
  shared_ =
      shared_allocation_.get() + ((kSharedMemoryAlignment - address % kSharedMemoryAlignment) % kSharedMemoryAlignment);
}

CtaScheduler::~CtaScheduler() {
  sanitizer_.release_stacks(stacks_, stack_stride_ * static_cast<std::size_t>(thread_count_));
  munmap(stacks_, stack_stride_ * static_cast<std::size_t>(thread_count_));
}

std::string CtaScheduler::program_string() const {
  return "program (" + std::to_string(program_[0]) + ", " + std::to_string(program_[1]) + ", " +
         std::to_string(program_[2]) + ")";
}

CtaScheduler& CtaScheduler::current() { return *running_scheduler; }

bool CtaScheduler::run(const std::array<int, 3>& program) {
  running_scheduler = this;
  program_ = program;
  fault_.clear();
  faulted_ = false;
  finished_ = 0;
  barrier_arrived_ = 0;
  barrier_accumulated_ = 0;
  for (Warp& warp : warps_) warp.arrived = 0;
  for (Warpgroup& warpgroup : warpgroups_) warpgroup.arrived = 0;
  std::fill(wgmma_states_.begin(), wgmma_states_.end(), WgmmaState{});
  for (AsyncCopies& copies : async_copies_) copies.clear();
  std::memset(shared_, kSharedMemoryPoison, shared_bytes_);
  shared_shadow_.start_program();
  fault_record_ = {};
  ready_head_ = 0;
  ready_count_ = 0;
  sanitizer_.begin_program(stacks_, stack_stride_, stack_stride_ - stack_bytes_, thread_count_);
  for (int t = 0; t < thread_count_; ++t) {
    std::byte* top = stacks_ + stack_stride_ * static_cast<std::size_t>(t + 1);
    contexts_[static_cast<std::size_t>(t)] = make_fcontext(top, stack_bytes_, &CtaScheduler::fiber_main);
    states_[static_cast<std::size_t>(t)] = ThreadState::ready;
    make_ready(t);
  }
  while (ready_count_ > 0) {
    running_ = ready_[ready_head_];
    ready_head_ = (ready_head_ + 1) % ready_.size();
    --ready_count_;
    sanitizer_.to_fiber(running_, stacks_ + stack_stride_ * static_cast<std::size_t>(running_) + page_size(),
                        stack_bytes_);
    const transfer_t back = jump_fcontext(contexts_[static_cast<std::size_t>(running_)], this);
    sanitizer_.back_on_host();
    contexts_[static_cast<std::size_t>(running_)] = back.fctx;
    if (faulted_) break;
  }
  sanitizer_.end_program();
  if (const std::optional<UnwrittenRead>& read = shared_shadow_.unwritten_read(); read && !faulted_)
    record_fault(unwritten_read_fault(*read));
  if (faulted_) return false;
  running_ = -1;
  if (finished_ == thread_count_) return true;
  fault_ = deadlock_message();
  return false;
}

void CtaScheduler::fiber_main(transfer_t from) {
  auto* scheduler = static_cast<CtaScheduler*>(from.data);
  scheduler->sanitizer_.fiber_started();
  scheduler->scheduler_context_ = from.fctx;
  scheduler->entry_(scheduler->arguments_);
  scheduler->finish_thread();
}

void CtaScheduler::make_ready(int thread) {
  ready_[(ready_head_ + ready_count_) % ready_.size()] = thread;
  ++ready_count_;
  states_[static_cast<std::size_t>(thread)] = ThreadState::ready;
}

void CtaScheduler::suspend() {
  void* fake_stack = nullptr;
  sanitizer_.to_host(&fake_stack);
  const transfer_t back = jump_fcontext(scheduler_context_, nullptr);
  sanitizer_.fiber_resumed(fake_stack);
  scheduler_context_ = back.fctx;
}

void CtaScheduler::finish_thread() {
  states_[static_cast<std::size_t>(running_)] = ThreadState::finished;
  ++finished_;
  sanitizer_.to_host(nullptr);
  jump_fcontext(scheduler_context_, nullptr);
  __builtin_unreachable();  // a finished fiber is never resumed
}

void CtaScheduler::record_fault(std::string message) {
  if (!faulted_) fault_ = std::move(message);
  faulted_ = true;
}

void CtaScheduler::abandon_thread() {
  sanitizer_.to_host(nullptr);
  jump_fcontext(scheduler_context_, nullptr);
  __builtin_unreachable();  // a faulted program's fibers are abandoned
}

std::string CtaScheduler::barrier_string(std::uint32_t site) const {
  const std::vector<std::string>& places = launch_.kernel->barrier_places;
  const std::string& place = site < places.size() ? places[site] : std::string();
  return "barrier " + std::to_string(site) + (place.empty() ? "" : " (" + place + ")");
}

std::uint32_t CtaScheduler::barrier(std::uint32_t site, BarrierMode mode, bool predicate) {
  if (barrier_arrived_ == 0) {
    barrier_mode_ = mode;
    barrier_accumulated_ = mode == BarrierMode::all ? 1 : 0;
    barrier_site_ = site;
    barrier_first_ = running_;
  } else if (site != barrier_site_) {
    fault([&] {
      return "kernel " + launch_.kernel->name + ": threads of " + program_string() +
             " reach different barriers: thread " + std::to_string(running_) + " arrives at " + barrier_string(site) +
             ", the " + std::to_string(barrier_arrived_) + " waiting with thread " + std::to_string(barrier_first_) +
             " at " + barrier_string(barrier_site_) +
             "; a branch or loop that the program's threads take differently must not hold a barrier";
    });
  }
  switch (barrier_mode_) {
    case BarrierMode::plain: break;
    case BarrierMode::all: barrier_accumulated_ &= predicate ? 1 : 0; break;
    case BarrierMode::any: barrier_accumulated_ |= predicate ? 1 : 0; break;
    case BarrierMode::count: barrier_accumulated_ += predicate ? 1 : 0; break;
  }
  if (++barrier_arrived_ < thread_count_) {
    states_[static_cast<std::size_t>(running_)] = ThreadState::at_barrier;
    suspend();
    return barrier_result_;
  }
  // The last arrival releases the others; they read the result before any of
  // them can reach the next barrier, which needs every thread again.
  barrier_arrived_ = 0;
  barrier_result_ = barrier_accumulated_;
  if (const std::optional<UnwrittenRead>& read = shared_shadow_.unwritten_read())
    fault([&] { return unwritten_read_fault(*read); });
  shared_shadow_.barrier();
  for (int t = 0; t < thread_count_; ++t)
    if (t != running_ && states_[static_cast<std::size_t>(t)] == ThreadState::at_barrier) make_ready(t);
  return barrier_result_;
}

std::uint32_t CtaScheduler::shuffle(ShuffleMode mode, std::uint32_t member_mask, std::uint32_t value,
                                    std::uint32_t operand, std::uint32_t clamp) {
  Deposit deposit;
  deposit.shuffle = mode;
  deposit.value = value;
  deposit.operand = operand;
  deposit.clamp = clamp;
  return warp_collective(member_mask, deposit);
}

std::uint32_t CtaScheduler::vote(VoteMode mode, std::uint32_t member_mask, bool predicate) {
  Deposit deposit;
  deposit.is_vote = true;
  deposit.vote = mode;
  deposit.value = predicate ? 1 : 0;
  return warp_collective(member_mask, deposit);
}

std::uint32_t CtaScheduler::warp_collective(std::uint32_t member_mask, const Deposit& deposit) {
  const int lane = running_ % kLanesPerWarp;
  const int first_lane = running_ - lane;
  if (!(member_mask >> lane & 1u))
    fault([&] {
      return "kernel " + launch_.kernel->name + ": thread " + std::to_string(running_) + " of " + program_string() +
             " takes part in a warp collective whose member mask " + std::to_string(member_mask) +
             " leaves out its lane";
    });
  Warp& warp = warps_[static_cast<std::size_t>(running_ / kLanesPerWarp)];
  warp.deposits[static_cast<std::size_t>(lane)] = deposit;
  if (++warp.arrived < std::popcount(member_mask)) {
    states_[static_cast<std::size_t>(running_)] = ThreadState::at_warp_collective;
    suspend();
    return warp.results[static_cast<std::size_t>(lane)];
  }
  complete_warp_collective(warp, first_lane, member_mask);
  return warp.results[static_cast<std::size_t>(lane)];
}

void CtaScheduler::warp_exchange(void* data, WarpExchange complete) {
  Warp& warp = warps_[static_cast<std::size_t>(running_ / kLanesPerWarp)];
  exchange(warp.arrived, warp.exchanged, data, complete);
}

void CtaScheduler::warpgroup_exchange(void* data, WarpgroupExchange complete) {
  if (running_ - running_ % kThreadsPerWarpgroup + kThreadsPerWarpgroup > thread_count_)
    fault([&] {
      return "a warpgroup instruction in a program of " + std::to_string(thread_count_) +
             " threads, not a multiple of the 128 of a warpgroup";
    });
  Warpgroup& warpgroup = warpgroups_[static_cast<std::size_t>(running_ / kThreadsPerWarpgroup)];
  exchange(warpgroup.arrived, warpgroup.exchanged, data, complete);
}

template <std::size_t N>
void CtaScheduler::exchange(int& arrived, std::array<void*, N>& exchanged, void* data,
                            void (*complete)(const std::array<void*, N>&)) {
  const int member = running_ % static_cast<int>(N);
  const int first = running_ - member;
  exchanged[static_cast<std::size_t>(member)] = data;
  if (++arrived < static_cast<int>(N)) {
    states_[static_cast<std::size_t>(running_)] = ThreadState::at_warp_collective;
    suspend();
    return;
  }
  // The waiting threads' data lives in their suspended frames until they resume.
  arrived = 0;
  complete(exchanged);
  for (int other = 0; other < static_cast<int>(N); ++other)
    if (first + other != running_) make_ready(first + other);
}

void CtaScheduler::complete_warp_collective(Warp& warp, int first_lane, std::uint32_t member_mask) {
  warp.arrived = 0;
  std::uint32_t ballot = 0;
  for (int lane = 0; lane < kLanesPerWarp; ++lane)
    if ((member_mask >> lane & 1u) && warp.deposits[static_cast<std::size_t>(lane)].value != 0) ballot |= 1u << lane;
  for (int lane = 0; lane < kLanesPerWarp; ++lane) {
    if (!(member_mask >> lane & 1u)) continue;
    const Deposit& mine = warp.deposits[static_cast<std::size_t>(lane)];
    std::uint32_t result = 0;
    if (mine.is_vote) {
      switch (mine.vote) {
        case VoteMode::all: result = ballot == member_mask; break;
        case VoteMode::any: result = ballot != 0; break;
        case VoteMode::uniform: result = ballot == 0 || ballot == member_mask; break;
        case VoteMode::ballot: result = ballot; break;
      }
    } else {
      const int source = shuffle_source(mine.shuffle, lane, mine.operand, mine.clamp);
      result = warp.deposits[static_cast<std::size_t>(source)].value;
    }
    warp.results[static_cast<std::size_t>(lane)] = result;
    const int thread = first_lane + lane;
    if (thread != running_) make_ready(thread);
  }
}

std::string CtaScheduler::deadlock_message() const {
  int at_barrier = 0, at_warp = 0;
  for (ThreadState state : states_) {
    at_barrier += state == ThreadState::at_barrier;
    at_warp += state == ThreadState::at_warp_collective;
  }
  std::string waiting;
  if (at_barrier > 0) waiting += std::to_string(at_barrier) + " wait at " + barrier_string(barrier_site_);
  if (at_warp > 0) waiting += (waiting.empty() ? "" : ", ") + std::to_string(at_warp) + " wait at a warp collective";
  return "kernel " + launch_.kernel->name + ": deadlock in " + program_string() + ": of " +
         std::to_string(thread_count_) + " threads " + std::to_string(finished_) + " finished and " + waiting +
         " that the others never reach";
}

}  // namespace kiln::runtime::emu
