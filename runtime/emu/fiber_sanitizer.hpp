// The CTA scheduler's stack switches told to AddressSanitizer and
// ThreadSanitizer (KILN_SANITIZE builds). Without them ASan takes a fiber's
// frames for the host thread's stack (false reports, wrong bounds after a
// noreturn call) and TSan, whose call stack is per thread, crashes. Every
// member compiles to nothing in a build without either sanitizer.
#pragma once

#include <cstddef>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define KILN_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_EMU_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define KILN_EMU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_EMU_TSAN 1
#endif
#endif

#ifdef KILN_EMU_ASAN
#include <sanitizer/asan_interface.h>
#endif
#ifdef KILN_EMU_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace kiln::runtime::emu {

/// The switches of one scheduler: the host thread's stack to a fiber's and
/// back. ASan's protocol: start_switch names the stack the switch goes to
/// (and saves the leaving stack's fake frames, or frees them when the fiber
/// never resumes), finish_switch runs first on the stack switched to. TSan's:
/// a fiber object per GPU thread, switched to just before each jump.
class FiberSanitizer {
 public:
  /// Before a program's fibers start on fresh stacks: ASan forgets the
  /// poisoned frames that a faulted fiber left behind (it is abandoned, never
  /// unwound); TSan gets a fiber per thread.
  void begin_program([[maybe_unused]] std::byte* stacks, [[maybe_unused]] std::size_t stride,
                     [[maybe_unused]] std::size_t guard_bytes, [[maybe_unused]] int threads) {
#ifdef KILN_EMU_ASAN
    for (int t = 0; t < threads; ++t)
      __asan_unpoison_memory_region(stacks + stride * static_cast<std::size_t>(t) + guard_bytes, stride - guard_bytes);
#endif
#ifdef KILN_EMU_TSAN
    host_fiber_ = __tsan_get_current_fiber();
    fibers_.resize(static_cast<std::size_t>(threads));
    for (void*& fiber : fibers_) fiber = __tsan_create_fiber(0);
#endif
  }
  /// After the program: its fibers are finished or abandoned.
  void end_program() {
#ifdef KILN_EMU_TSAN
    for (void* fiber : fibers_) __tsan_destroy_fiber(fiber);
    fibers_.clear();
#endif
  }
  /// Before munmap of the stacks: no poisoned shadow outlives them.
  void release_stacks([[maybe_unused]] std::byte* stacks, [[maybe_unused]] std::size_t bytes) {
#ifdef KILN_EMU_ASAN
    __asan_unpoison_memory_region(stacks, bytes);
#endif
  }

  /// On the host stack, just before jumping to `thread`'s fiber, whose stack
  /// is [bottom, bottom + bytes).
  void to_fiber([[maybe_unused]] int thread, [[maybe_unused]] const std::byte* bottom,
                [[maybe_unused]] std::size_t bytes) {
#ifdef KILN_EMU_ASAN
    __sanitizer_start_switch_fiber(&host_fake_stack_, bottom, bytes);
#endif
#ifdef KILN_EMU_TSAN
    __tsan_switch_to_fiber(fibers_[static_cast<std::size_t>(thread)], 0);
#endif
  }
  /// On the host stack again, after the jump to a fiber returned.
  void back_on_host() {
#ifdef KILN_EMU_ASAN
    __sanitizer_finish_switch_fiber(host_fake_stack_, nullptr, nullptr);
#endif
  }

  /// First on a new fiber: finishes the switch and learns the host stack.
  void fiber_started() {
#ifdef KILN_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &host_bottom_, &host_bytes_);
#endif
  }
  /// On a fiber, just before jumping back to the host stack. `fake_stack`
  /// keeps the fiber's fake frames until it resumes; null: it never resumes.
  void to_host([[maybe_unused]] void** fake_stack) {
#ifdef KILN_EMU_ASAN
    __sanitizer_start_switch_fiber(fake_stack, host_bottom_, host_bytes_);
#endif
#ifdef KILN_EMU_TSAN
    __tsan_switch_to_fiber(host_fiber_, 0);
#endif
  }
  /// On a fiber resumed after to_host(fake_stack).
  void fiber_resumed([[maybe_unused]] void* fake_stack) {
#ifdef KILN_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, &host_bottom_, &host_bytes_);
#endif
  }

 private:
#ifdef KILN_EMU_ASAN
  void* host_fake_stack_ = nullptr;
  const void* host_bottom_ = nullptr;
  std::size_t host_bytes_ = 0;
#endif
#ifdef KILN_EMU_TSAN
  void* host_fiber_ = nullptr;
  std::vector<void*> fibers_;
#endif
};

}  // namespace kiln::runtime::emu
