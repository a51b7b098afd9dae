// The CPU device's engine: runs a tile-IR kernel over a launch grid.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/ir/ir.hpp"

namespace kiln::runtime {

/// A region of host memory a pointer argument points into; loads and stores
/// through pointers derived from the argument are checked against it.
struct MemoryRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // one past the last byte
  std::string name;        // for messages (quoted there); empty: the kernel names its parameter
};

/// One launch argument: the raw bits of a scalar (zero-extended into 64
/// bits; floats as their bit pattern, f32 in the low 32 bits) or a pointer's
/// address with the range it may touch.
struct KernelArgument {
  std::uint64_t bits = 0;
  MemoryRange range;  // pointers only
};

using Grid = std::array<int, 3>;

/// The distinct bytes of one pointer argument that a launch read and wrote:
/// its compulsory traffic, however many times each byte was accessed.
struct BufferFootprint {
  std::string kernel;    // the launched kernel
  std::string argument;  // the pointer argument's name
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
};

/// Global-memory traffic of one launch, summed over programs.
struct LaunchStats {
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  /// One per pointer argument, in parameter order, when the launch was made
  /// under FootprintCounting on `cpu` or `emu`; empty otherwise.
  std::vector<BufferFootprint> footprints;
};

/// The traffic of a sequence of launches: bytes summed, footprints listed
/// launch after launch.
inline LaunchStats& operator+=(LaunchStats& total, const LaunchStats& launch) {
  total.bytes_read += launch.bytes_read;
  total.bytes_written += launch.bytes_written;
  total.footprints.insert(total.footprints.end(), launch.footprints.begin(), launch.footprints.end());
  return total;
}

/// While one with `on` lives on a thread, the `cpu` and `emu` launches made
/// from that thread also count LaunchStats::footprints. Counting keeps a bit
/// per byte of every pointer argument and sets bits at every access, so it
/// is off unless asked for; a scope with `on` false turns it off inside
/// (timed launches do).
class FootprintCounting {
 public:
  explicit FootprintCounting(bool on = true) : outer_(current()) { current() = on; }
  ~FootprintCounting() { current() = outer_; }
  FootprintCounting(const FootprintCounting&) = delete;
  FootprintCounting& operator=(const FootprintCounting&) = delete;

  /// Whether launches from this thread count footprints now.
  static bool on() { return current(); }

 private:
  static bool& current() {
    static thread_local bool counting = false;
    return counting;
  }
  bool outer_;
};

/// A fault while running a kernel: out-of-bounds access, integer division by
/// zero, a failed device_assert. The message names the kernel, the op's source
/// line and the values.
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A kernel prepared for the interpreter once (value slots assigned, each op
/// bound to the routine for its dtype) and then launched any number of times.
class InterpretedKernel {
 public:
  explicit InterpretedKernel(const ir::Function& fn);
  ~InterpretedKernel();
  InterpretedKernel(InterpretedKernel&&) noexcept;
  InterpretedKernel& operator=(InterpretedKernel&&) noexcept;

  /// Runs every program of `grid`, in parallel over `threads` host threads
  /// (0: all hardware threads). Throws KernelError on the first fault.
  LaunchStats launch(Grid grid, std::span<const KernelArgument> args, int threads = 0) const;

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

}  // namespace kiln::runtime
