// The bounds check before every global-memory access of an emulated kernel:
// the same rule and message as the cpu device (runtime/interp/bounds.cpp):
// inside the pointer argument the access derives from, or for mixed
// provenance inside any pointer argument or live allocation; and the byte
// counts and footprints of LaunchStats.
#include <cstdio>
#include <limits>
#include <optional>

#include "../src/footprint_counter.hpp"
#include "../src/live_allocations.hpp"
#include "cta_scheduler.hpp"
#include "hooks.hpp"

namespace kiln::runtime::emu {

namespace {

bool inside(const MemoryRange& range, std::uint64_t address, std::uint64_t bytes) {
  return address >= range.begin && range.end >= range.begin && range.end - range.begin >= bytes &&
         address - range.begin <= range.end - range.begin - bytes;
}

std::uint64_t distance(const MemoryRange& range, std::uint64_t address, std::uint64_t bytes) {
  if (address < range.begin) return range.begin - address;
  return address + bytes > range.end ? address + bytes - range.end : 0;
}

std::string hex(std::uint64_t address) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

/// The message for an access outside `range` (null: outside every buffer),
/// which is pointer argument `argument` or, when that is negative, a live
/// allocation. It counts in the op's element dtype as the cpu device does
/// (the argument's when the code generator recorded none).
std::string out_of_bounds_message(const LaunchContext& launch, const AccessSite& site, int argument,
                                  const MemoryRange* range, std::uint64_t address, std::uint64_t bytes) {
  const KernelDescription& kernel = *launch.kernel;
  const std::string at = site.place.empty() ? "" : " at " + site.place;
  const std::string what = "kernel " + kernel.name + ": " + site.op_name + " out of bounds" + at + ": ";
  const auto argument_dtype = [&] { return kernel.argument_types[static_cast<std::size_t>(argument)].dtype; };
  const std::optional<ir::DType> dtype = site.dtype ? site.dtype : argument >= 0 ? argument_dtype() : site.dtype;
  if (!range) {
    const std::string element =
        dtype ? std::string(ir::dtype_name(*dtype)) + " element" : std::to_string(bytes) + "-byte access";
    return what + "address " + hex(address) + " of a " + element + " is inside no live buffer";
  }
  const auto element_bytes = static_cast<std::uint64_t>(dtype ? ir::dtype_bytes(*dtype) : 1);
  // A vector access reports its first element outside the range.
  std::uint64_t element = address;
  while (element + element_bytes <= address + bytes && inside(*range, element, element_bytes)) element += element_bytes;
  const auto difference = static_cast<std::int64_t>(element - range->begin);
  const auto size = static_cast<std::int64_t>(element_bytes);
  const std::int64_t offset = difference >= 0 ? difference / size : -((-difference + size - 1) / size);
  const std::int64_t count = static_cast<std::int64_t>(range->end - range->begin) / size;
  std::string name = "the buffer at " + hex(range->begin);
  if (argument >= 0)
    name = range->name.empty() ? kernel.argument_names[static_cast<std::size_t>(argument)] : "'" + range->name + "'";
  return what + "element offset " + std::to_string(offset) +
         (offset < 0 ? " is before the start of " : " is past the end of ") + name + " (" + std::to_string(count) +
         " elements of " + (dtype ? std::string(ir::dtype_name(*dtype)) : std::string("bytes")) + ")";
}

void count(CtaScheduler& scheduler, const LaunchContext& launch, const AccessSite& site, int argument,
           std::uint64_t address, std::uint64_t bytes) {
  LaunchStats& stats = scheduler.stats();
  if (site.kind != AccessSite::Kind::store) stats.bytes_read += bytes;
  if (site.kind != AccessSite::Kind::load) stats.bytes_written += bytes;
  if (launch.footprints && argument >= 0) {
    if (site.kind != AccessSite::Kind::store) launch.footprints->read(argument, address, bytes);
    if (site.kind != AccessSite::Kind::load) launch.footprints->written(argument, address, bytes);
  }
}

}  // namespace

void check_global_access(std::uint64_t address, std::uint64_t bytes, std::uint32_t site_index) {
  CtaScheduler& scheduler = CtaScheduler::current();
  const LaunchContext& launch = scheduler.launch();
  const KernelDescription& kernel = *launch.kernel;
  const AccessSite& site = kernel.access_sites[site_index];
  if (bytes == 0) return;  // a cp.async of 0 source bytes reads nothing
  // An access whose addresses derive from one pointer argument must lie in it.
  if (site.source >= 0) {
    const MemoryRange& range = launch.arguments[static_cast<std::size_t>(site.source)].range;
    if (inside(range, address, bytes)) return count(scheduler, launch, site, site.source, address, bytes);
    scheduler.fault([&] { return out_of_bounds_message(launch, site, site.source, &range, address, bytes); });
  }
  // Mixed provenance: any pointer argument, then any live allocation.
  int nearest = -1;
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t a = 0; a < kernel.argument_types.size(); ++a) {
    if (!kernel.argument_types[a].is_pointer) continue;
    const MemoryRange& range = launch.arguments[a].range;
    if (inside(range, address, bytes)) return count(scheduler, launch, site, static_cast<int>(a), address, bytes);
    if (const std::uint64_t d = distance(range, address, bytes); d < best) {
      best = d;
      nearest = static_cast<int>(a);
    }
  }
  const std::optional<live_allocations::Lookup> live = live_allocations::find(address, bytes);
  if (live && live->holds) return count(scheduler, launch, site, -1, address, bytes);
  if (live && distance(live->range, address, bytes) < best)
    scheduler.fault([&] { return out_of_bounds_message(launch, site, -1, &live->range, address, bytes); });
  const MemoryRange* range = nearest >= 0 ? &launch.arguments[static_cast<std::size_t>(nearest)].range : nullptr;
  scheduler.fault([&] { return out_of_bounds_message(launch, site, nearest, range, address, bytes); });
}

}  // namespace kiln::runtime::emu
