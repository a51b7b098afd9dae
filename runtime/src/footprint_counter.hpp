// The bitmaps behind LaunchStats::footprints: a bit per byte of each pointer
// argument of one launch, for reads and for writes, set by the threads that
// run its programs (the interpreter's memory ops, the emu's access check).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime {

class FootprintCounter {
 public:
  /// `types[a]` is argument `a`'s type; arguments that are not pointers
  /// have no memory and get no bitmap.
  FootprintCounter(std::span<const KernelArgument> args, std::span<const ir::Type> types);

  /// Marks [address, address + bytes) of pointer argument `argument` as read
  /// or written; the range lies inside the argument (the caller checked it).
  void read(int argument, std::uint64_t address, std::uint64_t bytes) {
    mark(reads_[static_cast<std::size_t>(argument)], address, bytes);
  }
  void written(int argument, std::uint64_t address, std::uint64_t bytes) {
    mark(writes_[static_cast<std::size_t>(argument)], address, bytes);
  }

  /// One footprint per pointer argument, named `names[a]` (or the range's
  /// own name when it has one).
  std::vector<BufferFootprint> footprints(const std::string& kernel, std::span<const KernelArgument> args,
                                          const std::vector<std::string>& names) const;

 private:
  struct Bitmap {
    std::uint64_t begin = 0;
    std::size_t words = 0;
    std::unique_ptr<std::atomic<std::uint64_t>[]> bits;
  };
  static void mark(Bitmap& map, std::uint64_t address, std::uint64_t bytes);
  static std::uint64_t count(const Bitmap& map);

  std::vector<bool> pointers_;  // whether each argument has bitmaps
  std::vector<Bitmap> reads_, writes_;
};

}  // namespace kiln::runtime
