// The bounds check before every global-memory access of an emulated kernel:
// the same rule and message as the cpu device (runtime/interp/bounds.cpp),
// and the byte counts and footprints of LaunchStats.
#include <cstdio>
#include <limits>

#include "../src/footprint_counter.hpp"
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

std::string out_of_bounds_message(const LaunchContext& launch, const AccessSite& site, int argument,
                                  std::uint64_t address, std::uint64_t bytes) {
  const KernelDescription& kernel = *launch.kernel;
  const std::string at = site.place.empty() ? "" : " at " + site.place;
  const std::string what = "kernel " + kernel.name + ": " + site.op_name + " out of bounds" + at + ": ";
  if (argument < 0) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
    return what + "address " + hex + " of a " + std::to_string(bytes) + "-byte access is inside no pointer argument";
  }
  const ir::Type& type = kernel.argument_types[static_cast<std::size_t>(argument)];
  const MemoryRange& range = launch.arguments[static_cast<std::size_t>(argument)].range;
  const auto element_bytes = static_cast<std::uint64_t>(ir::dtype_bytes(type.dtype));
  // A vector access reports its first element outside the range.
  std::uint64_t element = address;
  while (element + element_bytes <= address + bytes && inside(range, element, element_bytes)) element += element_bytes;
  const auto difference = static_cast<std::int64_t>(element - range.begin);
  const auto size = static_cast<std::int64_t>(element_bytes);
  const std::int64_t offset = difference >= 0 ? difference / size : -((-difference + size - 1) / size);
  const std::int64_t count = static_cast<std::int64_t>(range.end - range.begin) / size;
  const std::string& name = range.name.empty() ? kernel.argument_names[static_cast<std::size_t>(argument)] : range.name;
  return what + "element offset " + std::to_string(offset) +
         (offset < 0 ? " is before the start of '" : " is past the end of '") + name + "' (" + std::to_string(count) +
         " elements of " + std::string(ir::dtype_name(type.dtype)) + ")";
}

}  // namespace

void check_global_access(std::uint64_t address, std::uint64_t bytes, std::uint32_t site_index) {
  CtaScheduler& scheduler = CtaScheduler::current();
  const LaunchContext& launch = scheduler.launch();
  const KernelDescription& kernel = *launch.kernel;
  const AccessSite& site = kernel.access_sites[site_index];
  if (bytes == 0) return;  // a cp.async of 0 source bytes reads nothing
  int nearest = -1;
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t a = 0; a < kernel.argument_types.size(); ++a) {
    if (!kernel.argument_types[a].is_pointer) continue;
    const MemoryRange& range = launch.arguments[a].range;
    if (inside(range, address, bytes)) {
      LaunchStats& stats = scheduler.stats();
      if (site.kind != AccessSite::Kind::store) stats.bytes_read += bytes;
      if (site.kind != AccessSite::Kind::load) stats.bytes_written += bytes;
      if (launch.footprints) {
        if (site.kind != AccessSite::Kind::store) launch.footprints->read(static_cast<int>(a), address, bytes);
        if (site.kind != AccessSite::Kind::load) launch.footprints->written(static_cast<int>(a), address, bytes);
      }
      return;
    }
    if (const std::uint64_t d = distance(range, address, bytes); d < best) {
      best = d;
      nearest = static_cast<int>(a);
    }
  }
  scheduler.fault([&] { return out_of_bounds_message(launch, site, nearest, address, bytes); });
}

}  // namespace kiln::runtime::emu
