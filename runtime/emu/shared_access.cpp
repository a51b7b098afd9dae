// The emu's shared-memory checks (shared_access.hpp): the shadow's rules for
// unwritten bytes and races, and the messages of the access hooks.
#include "shared_access.hpp"

#include "cta_scheduler.hpp"
#include "kiln/lowering/compile.hpp"

namespace kiln::runtime::emu {

void SharedMemoryShadow::mark_written(std::size_t offset, std::size_t bytes) {
  for (std::size_t b = offset; b < offset + bytes; ++b) records_[b].written_in = program_epoch_;
}

SharedRead SharedMemoryShadow::read(std::size_t offset, std::size_t bytes, int thread, std::uint32_t site) {
  SharedRead found;
  for (std::size_t b = offset; b < offset + bytes; ++b) {
    ByteRecord& record = records_[b];
    if (!found.unwritten && record.written_in != program_epoch_) found.unwritten = b;
    if (record.write_epoch == epoch_ && record.writer != thread) {
      found.race = SharedRace{b, record.writer, record.write_site, true};
      return found;
    }
    if (record.read_epoch != epoch_) {
      record.read_epoch = epoch_;
      record.readers = {thread, kNobody};
      record.read_sites[0] = site;
    } else if (record.readers[0] != thread && record.readers[1] == kNobody) {
      record.readers[1] = thread;
      record.read_sites[1] = site;
    }
  }
  return found;
}

std::optional<SharedRace> SharedMemoryShadow::write(const std::byte* memory, std::size_t offset, const std::byte* data,
                                                    std::size_t bytes, int thread, std::uint32_t site,
                                                    std::uint32_t since) {
  for (std::size_t b = offset; b < offset + bytes; ++b) {
    ByteRecord& record = records_[b];
    record.written_in = program_epoch_;
    if (data[b - offset] == memory[b]) continue;
    if (record.write_epoch >= since && record.writer != kNobody && record.writer != thread)
      return SharedRace{b, record.writer, record.write_site, true};
    if (record.read_epoch >= since)
      for (std::size_t r = 0; r < record.readers.size(); ++r)
        if (record.readers[r] != kNobody && record.readers[r] != thread)
          return SharedRace{b, record.readers[r], record.read_sites[r], false};
    record.write_epoch = epoch_;
    record.writer = thread;
    record.write_site = site;
  }
  return std::nullopt;
}

namespace {

std::string site_string(const AccessSite& site) {
  return site.op_name + (site.place.empty() ? "" : " at " + site.place);
}

/// The fault of an access of `bytes` at `address` outside the kernel's shared memory.
void check_bounds(CtaScheduler& scheduler, const std::byte* address, std::uint64_t bytes, const AccessSite& site) {
  const KernelDescription& kernel = *scheduler.launch().kernel;
  const std::int64_t offset = address - scheduler.shared_memory();
  const auto size = static_cast<std::int64_t>(kernel.shared_bytes);
  if (offset >= 0 && offset <= size && static_cast<std::uint64_t>(size - offset) >= bytes) return;
  scheduler.fault([&] {
    return "kernel " + kernel.name + ": " + site.op_name + " out of bounds" +
           (site.place.empty() ? "" : " at " + site.place) + ": offset " + std::to_string(offset) + " of a " +
           std::to_string(bytes) + "-byte access by thread " + std::to_string(scheduler.thread_index()) +
           (offset < 0 ? " is before the start of" : " is past the end of") + " the program's " + std::to_string(size) +
           " bytes of shared memory";
  });
}

void report(CtaScheduler& scheduler, const AccessSite& mine, bool writes, const SharedRace& race, bool in_flight) {
  const KernelDescription& kernel = *scheduler.launch().kernel;
  const AccessSite& other = kernel.access_sites[race.site];
  const char* what = writes ? (in_flight ? " (in flight from its issue to its wait) writes" : " writes") : " reads";
  scheduler.fault([&] {
    return "kernel " + kernel.name + ": shared-memory race in " + scheduler.program_string() + " at byte " +
           std::to_string(race.byte) + ": thread " + std::to_string(scheduler.thread_index()) + "'s " +
           site_string(mine) + what + " what thread " + std::to_string(race.thread) + "'s " + site_string(other) +
           (race.wrote ? " wrote" : " read") + ", with no barrier between";
  });
}

}  // namespace

void check_shared_access(const std::byte* address, std::uint64_t bytes, std::uint32_t site_index,
                         const std::byte* stored) {
  CtaScheduler& scheduler = CtaScheduler::current();
  const AccessSite& site = scheduler.launch().kernel->access_sites[site_index];
  if (scheduler.thread_index() % lowering::kLanesPerWarp >= site.active_lanes) return;
  check_bounds(scheduler, address, bytes, site);
  const auto offset = static_cast<std::size_t>(address - scheduler.shared_memory());
  SharedMemoryShadow& shadow = scheduler.shared_shadow();
  const int thread = scheduler.thread_index();
  if (site.kind == AccessSite::Kind::atomic) {  // atomics do not race with each other
    shadow.mark_written(offset, bytes);
    return;
  }
  if (stored) {
    if (const std::optional<SharedRace> race =
            shadow.write(scheduler.shared_memory(), offset, stored, bytes, thread, site_index, shadow.epoch()))
      report(scheduler, site, true, *race, false);
    return;
  }
  const SharedRead read = shadow.read(offset, bytes, thread, site_index);
  if (read.race) report(scheduler, site, false, *read.race, false);
  if (read.unwritten)
    shadow.note_unwritten_read(
        {*read.unwritten, thread, site_index,
         scheduler.async_copies().site_in_flight_at(scheduler.shared_memory() + *read.unwritten)});
}

std::string unwritten_read_fault(const UnwrittenRead& read) {
  const CtaScheduler& scheduler = CtaScheduler::current();
  const KernelDescription& kernel = *scheduler.launch().kernel;
  const std::string reads = "kernel " + kernel.name + ": thread " + std::to_string(read.thread) + "'s " +
                            site_string(kernel.access_sites[read.site]) + " in " + scheduler.program_string() +
                            " reads byte " + std::to_string(read.byte) + " of shared memory";
  if (read.copy_site)
    return reads + " before a cp.async.wait_group completed its " + site_string(kernel.access_sites[*read.copy_site]) +
           " into it";
  return reads + ", which no thread of the program had written: on a GPU it holds what an earlier program left";
}

void check_async_copy_destination(const std::byte* address, std::uint64_t bytes, std::uint32_t site) {
  CtaScheduler& scheduler = CtaScheduler::current();
  check_bounds(scheduler, address, bytes, scheduler.launch().kernel->access_sites[site]);
}

void land_async_copy(std::byte* address, const std::byte* data, std::size_t bytes, std::uint32_t site,
                     std::uint32_t issued) {
  CtaScheduler& scheduler = CtaScheduler::current();
  const auto offset = static_cast<std::size_t>(address - scheduler.shared_memory());
  const std::optional<SharedRace> race = scheduler.shared_shadow().write(scheduler.shared_memory(), offset, data, bytes,
                                                                         scheduler.thread_index(), site, issued);
  if (race) report(scheduler, scheduler.launch().kernel->access_sites[site], true, *race, true);
}

}  // namespace kiln::runtime::emu
