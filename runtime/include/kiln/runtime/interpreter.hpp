// The CPU device's engine: runs a tile-IR kernel over a launch grid.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "kiln/ir/ir.hpp"

namespace kiln::runtime {

/// A region of host memory a pointer argument points into; loads and stores
/// through pointers derived from the argument are checked against it.
struct MemoryRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // one past the last byte
  std::string name;        // for messages: the kernel parameter's name
};

/// One launch argument: the raw bits of a scalar (zero-extended into 64
/// bits; floats as their bit pattern, f32 in the low 32 bits) or a pointer's
/// address with the range it may touch.
struct KernelArgument {
  std::uint64_t bits = 0;
  MemoryRange range;  // pointers only
};

using Grid = std::array<int, 3>;

/// Global-memory traffic of one launch, summed over programs.
struct LaunchStats {
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
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
