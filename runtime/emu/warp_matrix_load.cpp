// ldmatrix on the emu: every lane of the warp supplies the shared-memory
// address of one 16-byte row of an 8 x 8 matrix of 16-bit elements; the last
// lane to arrive hands each lane its two elements of each matrix (PTX ISA,
// "ldmatrix"): without .trans lane l gets row l / 4, elements 2 (l % 4) and
// 2 (l % 4) + 1; with .trans element l / 4 of rows 2 (l % 4) and
// 2 (l % 4) + 1. A row address not 16-byte aligned is a fault, as on the
// GPU (the shared-access check before each ldmatrix has checked its bounds).
#include <cstring>
#include <sstream>

#include "cta_scheduler.hpp"
#include "hooks.hpp"

namespace kiln::runtime::emu {

namespace {

constexpr std::size_t kRowBytes = 16;

/// One lane's part of the operation.
struct LoadLane {
  const std::byte* row;
  std::uint32_t* results;
  int matrices;
  bool transposed;
};

std::uint16_t element_at(const std::byte* row, int element) {
  std::uint16_t bits;
  std::memcpy(&bits, row + 2 * element, sizeof bits);
  return bits;
}

void deliver(const std::array<void*, 32>& lanes) {
  const auto& first = *static_cast<const LoadLane*>(lanes[0]);
  for (int lane = 0; lane < 32; ++lane) {
    const auto& mine = *static_cast<const LoadLane*>(lanes[static_cast<std::size_t>(lane)]);
    for (int matrix = 0; matrix < first.matrices; ++matrix) {
      auto row = [&](int r) {
        return static_cast<const LoadLane*>(lanes[static_cast<std::size_t>(8 * matrix + r)])->row;
      };
      const int pair = 2 * (lane % 4);
      std::uint16_t low, high;
      if (first.transposed) {
        low = element_at(row(pair), lane / 4);
        high = element_at(row(pair + 1), lane / 4);
      } else {
        low = element_at(row(lane / 4), pair);
        high = element_at(row(lane / 4), pair + 1);
      }
      mine.results[matrix] = static_cast<std::uint32_t>(low) | (static_cast<std::uint32_t>(high) << 16);
    }
  }
}

}  // namespace

void warp_matrix_load(const void* row, int matrices, bool transposed, std::uint32_t* results) {
  CtaScheduler& scheduler = CtaScheduler::current();
  const auto* address = static_cast<const std::byte*>(row);
  const std::byte* shared = scheduler.shared_memory();
  // Lanes past the matrices' rows supply addresses the instruction ignores.
  const bool used = scheduler.thread_index() % 32 < 8 * matrices;
  if (used && (address - shared) % kRowBytes != 0)
    scheduler.fault([&] {
      std::ostringstream message;
      message << "kernel " << scheduler.launch().kernel->name << ": ldmatrix: thread " << scheduler.thread_index()
              << " supplies shared-memory offset " << (address - shared) << ", not a 16-byte aligned row";
      return message.str();
    });
  LoadLane lane{used ? address : shared, results, matrices, transposed};
  scheduler.warp_exchange(&lane, &deliver);
}

}  // namespace kiln::runtime::emu
