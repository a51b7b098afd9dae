// The emu's in-flight cp.async copies of one thread (async_copies.hpp).
#include "async_copies.hpp"

#include <algorithm>
#include <cstring>

namespace kiln::runtime::emu {

void AsyncCopies::issue(std::byte* destination, const std::byte* source, std::size_t copied, std::size_t bytes) {
  std::vector<std::byte> data(bytes, std::byte{0});
  if (copied > 0) std::memcpy(data.data(), source, copied);
  copies_.push_back({destination, std::move(data), -1});
}

void AsyncCopies::commit() {
  for (Copy& copy : copies_)
    if (copy.group < 0) copy.group = committed_;
  ++committed_;
}

void AsyncCopies::wait(int pending_groups) {
  const int complete_below = committed_ - pending_groups;
  auto done = [&](const Copy& copy) { return copy.group >= 0 && copy.group < complete_below; };
  for (const Copy& copy : copies_)
    if (done(copy)) std::memcpy(copy.destination, copy.data.data(), copy.data.size());
  std::erase_if(copies_, done);
}

void AsyncCopies::clear() {
  copies_.clear();
  committed_ = 0;
}

}  // namespace kiln::runtime::emu
