// Setting and counting the footprint bitmaps.
#include "footprint_counter.hpp"

#include <bit>

namespace kiln::runtime {

namespace {
constexpr std::uint64_t kBitsPerWord = 64;
constexpr std::uint64_t kAllBits = ~std::uint64_t{0};
}  // namespace

FootprintCounter::FootprintCounter(std::span<const KernelArgument> args, std::span<const ir::Type> types)
    : pointers_(args.size()), reads_(args.size()), writes_(args.size()) {
  for (std::size_t a = 0; a < args.size(); ++a) {
    pointers_[a] = types[a].is_pointer;
    if (!pointers_[a]) continue;
    const MemoryRange& range = args[a].range;
    const std::uint64_t bytes = range.end > range.begin ? range.end - range.begin : 0;
    for (Bitmap* map : {&reads_[a], &writes_[a]}) {
      map->begin = range.begin;
      map->words = static_cast<std::size_t>((bytes + kBitsPerWord - 1) / kBitsPerWord);
      map->bits = std::make_unique<std::atomic<std::uint64_t>[]>(map->words);  // value-initialised: all zero
    }
  }
}

void FootprintCounter::mark(Bitmap& map, std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0) return;
  const std::uint64_t first = address - map.begin, last = first + bytes - 1;
  const std::uint64_t first_word = first / kBitsPerWord, last_word = last / kBitsPerWord;
  for (std::uint64_t w = first_word; w <= last_word; ++w) {
    std::uint64_t bits = kAllBits;
    if (w == first_word) bits &= kAllBits << (first % kBitsPerWord);
    if (w == last_word) bits &= kAllBits >> (kBitsPerWord - 1 - last % kBitsPerWord);
    std::atomic<std::uint64_t>& word = map.bits[w];
    if ((word.load(std::memory_order_relaxed) & bits) != bits) word.fetch_or(bits, std::memory_order_relaxed);
  }
}

std::uint64_t FootprintCounter::count(const Bitmap& map) {
  std::uint64_t total = 0;
  for (std::size_t w = 0; w < map.words; ++w) total += std::popcount(map.bits[w].load(std::memory_order_relaxed));
  return total;
}

std::vector<BufferFootprint> FootprintCounter::footprints(const std::string& kernel,
                                                          std::span<const KernelArgument> args,
                                                          const std::vector<std::string>& names) const {
  std::vector<BufferFootprint> out;
  for (std::size_t a = 0; a < args.size(); ++a) {
    if (!pointers_[a]) continue;
    const std::string& name = args[a].range.name.empty() ? names[a] : args[a].range.name;
    out.push_back({kernel, name, count(reads_[a]), count(writes_[a])});
  }
  return out;
}

}  // namespace kiln::runtime
