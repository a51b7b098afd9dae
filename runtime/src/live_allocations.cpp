// The registry of live host allocations: an ordered map from start address to
// end, behind a reader-writer lock (lookups come only from accesses outside
// every pointer argument, so they are rare and never on a fast path).
#include "live_allocations.hpp"

#include <map>
#include <mutex>
#include <shared_mutex>

namespace kiln::runtime::live_allocations {

namespace {

struct Registry {
  std::shared_mutex mutex;
  std::map<std::uintptr_t, std::uintptr_t> ends;  // begin -> one past the last byte
};

Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: buffers may outlive static destructors
  return *instance;
}

std::uint64_t distance(std::uintptr_t begin, std::uintptr_t end, std::uint64_t address, std::uint64_t bytes) {
  if (address < begin) return begin - address;
  return address + bytes > end ? address + bytes - end : 0;
}

}  // namespace

void add(std::uintptr_t begin, std::uint64_t bytes) {
  Registry& r = registry();
  const std::unique_lock lock(r.mutex);
  r.ends[begin] = begin + bytes;
}

void remove(std::uintptr_t begin) {
  Registry& r = registry();
  const std::unique_lock lock(r.mutex);
  r.ends.erase(begin);
}

std::optional<Lookup> find(std::uint64_t address, std::uint64_t bytes) {
  Registry& r = registry();
  const std::shared_lock lock(r.mutex);
  if (r.ends.empty()) return std::nullopt;
  // Allocations do not overlap, so only the last one starting at or before
  // the address can hold it; the nearest is that one or the next.
  auto next = r.ends.upper_bound(address);
  std::optional<Lookup> best;
  std::uint64_t best_distance = 0;
  const auto consider = [&](std::uintptr_t begin, std::uintptr_t end) {
    const std::uint64_t d = distance(begin, end, address, bytes);
    if (best && d >= best_distance) return;
    best = Lookup{MemoryRange{begin, end, ""}, d == 0 && end - begin >= bytes};
    best_distance = d;
  };
  if (next != r.ends.begin()) {
    const auto previous = std::prev(next);
    consider(previous->first, previous->second);
  }
  if (next != r.ends.end()) consider(next->first, next->second);
  return best;
}

}  // namespace kiln::runtime::live_allocations
