// Marking an access's bytes in the footprint bitmaps, by the pointer argument
// each element lies in.
#include "footprint.hpp"

#include "../src/footprint_counter.hpp"

namespace kiln::runtime::interp {

namespace {

/// The pointer argument holding [address, address + bytes): the access's
/// provenance, or for mixed provenance the argument whose range contains it
/// (-1 when none does: a run of elements across two arguments).
int argument_of(const Instr& ins, const Exec& ex, std::uint64_t address, std::uint64_t bytes) {
  return ins.source != kMixedSource ? ins.source : argument_holding(ex, address, bytes);
}

void mark(FootprintCounter& counter, int argument, std::uint64_t address, std::uint64_t bytes, Touch touch) {
  if (argument < 0) return;
  if (touch != Touch::write) counter.read(argument, address, bytes);
  if (touch != Touch::read) counter.written(argument, address, bytes);
}

}  // namespace

void count_footprint(const Instr& ins, const Exec& ex, const std::uint64_t* addresses, const std::uint8_t* mask,
                     std::int64_t mask_step, std::int64_t n, const Access& access, Touch touch) {
  if (access.active == 0) return;
  FootprintCounter& counter = *ex.footprints;
  const auto bytes = static_cast<std::uint64_t>(ir::dtype_bytes(ins.dtype));
  if (access.contiguous && access.active == access.last - access.first + 1) {
    const std::uint64_t first = addresses[access.first];
    const std::uint64_t span = static_cast<std::uint64_t>(access.active) * bytes;
    if (const int argument = argument_of(ins, ex, first, span); argument >= 0) {
      mark(counter, argument, first, span, touch);
      return;
    }
  }
  for (std::int64_t i = 0; i < n; ++i)
    if (!mask || mask[i * mask_step])
      mark(counter, argument_of(ins, ex, addresses[i], bytes), addresses[i], bytes, touch);
}

}  // namespace kiln::runtime::interp
