// The emu's in-flight cp.async copies of one thread (async_copies.hpp).
#include "async_copies.hpp"

namespace kiln::runtime::emu {

void AsyncCopies::issue(std::byte* destination, const std::byte* source, std::size_t copied, std::size_t bytes,
                        std::uint32_t site, std::uint32_t epoch) {
  std::vector<std::byte> data(bytes, std::byte{0});
  if (copied > 0) std::memcpy(data.data(), source, copied);
  copies_.push_back({destination, std::move(data), -1, site, epoch});
}

void AsyncCopies::commit() {
  for (Copy& copy : copies_)
    if (copy.group < 0) copy.group = committed_;
  ++committed_;
}

std::optional<std::uint32_t> AsyncCopies::site_in_flight_at(const std::byte* address) const {
  for (const Copy& copy : copies_)
    if (address >= copy.destination && address < copy.destination + copy.data.size()) return copy.site;
  return std::nullopt;
}

void AsyncCopies::clear() {
  copies_.clear();
  committed_ = 0;
}

}  // namespace kiln::runtime::emu
