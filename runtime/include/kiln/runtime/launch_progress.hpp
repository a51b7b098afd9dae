// Progress of long launches: while a LaunchProgress lives on a thread, the
// `cpu` and `emu` launches made from that thread tell it, every so often while
// they run, how many of their programs are done (the kiln tool's progress line).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace kiln::runtime {

class LaunchProgress {
 public:
  /// Called with the launching kernel's name, the programs done and the
  /// launch's programs, from any of the launch's host threads (one call at
  /// a time per launch).
  using Report = std::function<void(const std::string& kernel, std::int64_t done, std::int64_t total)>;

  explicit LaunchProgress(Report report) : report_(std::move(report)), outer_(current()) { current() = &report_; }
  ~LaunchProgress() { current() = outer_; }
  LaunchProgress(const LaunchProgress&) = delete;
  LaunchProgress& operator=(const LaunchProgress&) = delete;

  /// The innermost one's report on this thread, null when none lives.
  static const Report* active() { return current(); }

 private:
  static const Report*& current() {
    static thread_local const Report* report = nullptr;
    return report;
  }
  Report report_;
  const Report* outer_;
};

/// One launch's count of programs done, reported to the LaunchProgress active
/// on the thread that made the counter, at most every `interval` (and not at
/// all when none is active). add() may be called from any thread.
class LaunchProgressCounter {
 public:
  LaunchProgressCounter(std::string kernel, std::int64_t total,
                        std::chrono::milliseconds interval = std::chrono::milliseconds(100))
      : report_(LaunchProgress::active()), kernel_(std::move(kernel)), total_(total), interval_(interval) {}

  void add(std::int64_t programs) {
    if (!report_) return;
    const std::int64_t done = done_.fetch_add(programs, std::memory_order_relaxed) + programs;
    const auto now = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || now - last_ < interval_) return;
    last_ = now;
    (*report_)(kernel_, done, total_);
  }

 private:
  const LaunchProgress::Report* report_;
  std::string kernel_;
  std::int64_t total_;
  std::chrono::milliseconds interval_;
  std::atomic<std::int64_t> done_{0};
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace kiln::runtime
