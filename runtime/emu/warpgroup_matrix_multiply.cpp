// wgmma on the emu: the 128 threads of a warpgroup hand their accumulator
// registers (and A's fragment registers, when A comes from registers) to
// the last to arrive, which reads A (64 x 16) and B (16 x N) from shared
// memory through the matrix descriptors as the PTX ISA lays out the
// swizzled canonical tiles, multiplies and hands each thread its part of
// D (f16 or bf16 into f32; products summed exactly, rounded once to f32, as
// mma.sync on the emu). The instruction runs at once; the order of wgmma's
// fence, commit and wait around it is checked.
#include <array>
#include <cstring>
#include <string>

#include "cta_scheduler.hpp"
#include "hooks.hpp"
#include "kiln/ir/numeric.hpp"
#include "shared_access.hpp"

namespace kiln::runtime::emu {

namespace {

constexpr int kRows = 64;
constexpr int kDepth = 16;
constexpr int kMaxColumns = 256;
constexpr int kElementBytes = 2;

/// One thread's part of the instruction.
struct WgmmaThread {
  WgmmaShape shape;
  std::uint32_t site;
  const std::uint32_t* a_fragment;  // null: A through its descriptor
  std::uint64_t a_descriptor, b_descriptor;
  bool scale_d;
  float* accumulator;
};

/// A descriptor's fields (PTX ISA, "Matrix Descriptor Format").
struct Descriptor {
  std::uint64_t start, leading, stride;
  int swizzle_bytes;
  int base_offset;
};

Descriptor decode(std::uint64_t bits) {
  const int mode = static_cast<int>(bits >> 62);
  return {(bits & 0x3fff) << 4, (bits >> 16 & 0x3fff) << 4, (bits >> 32 & 0x3fff) << 4,
          mode == 1   ? 128
          : mode == 2 ? 64
          : mode == 3 ? 32
                      : 0,
          static_cast<int>(bits >> 49 & 7)};
}

std::string hex(std::uint64_t value) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), digits[value & 15]);
    value >>= 4;
  } while (value);
  return "0x" + text;
}

class OperandReader {
 public:
  OperandReader(CtaScheduler& scheduler, const char* operand, std::uint64_t bits, bool mn_major, std::uint32_t site)
      : scheduler_(scheduler),
        operand_(operand),
        descriptor_(decode(bits)),
        bits_(bits),
        mn_major_(mn_major),
        site_(site) {
    if (descriptor_.swizzle_bytes == 0 || descriptor_.base_offset != 0)
      scheduler_.fault([&] {
        return std::string("wgmma.mma_async: the descriptor of ") + operand_ + " (" + hex(bits_) +
               ") asks for a layout the emu does not run (no swizzle, or a base offset)";
      });
  }

  /// Element (mn, k): its canonical address (K-major: 8-row groups `stride`
  /// apart, rows of the swizzle width; MN-major: blocks of the swizzle width
  /// along MN `leading` apart, 8-row groups of K `stride` apart), swizzled by
  /// XORing address bits 7 and up into the 16-byte chunk bits. The read is
  /// checked as a shared load of the completing thread.
  std::uint16_t element(int mn, int k) const {
    const std::uint64_t width = static_cast<std::uint64_t>(descriptor_.swizzle_bytes);
    std::uint64_t address = descriptor_.start;
    if (mn_major_) {
      const std::uint64_t row_elements = width / kElementBytes;
      address += static_cast<std::uint64_t>(mn) / row_elements * descriptor_.leading +
                 static_cast<std::uint64_t>(mn) % row_elements * kElementBytes +
                 static_cast<std::uint64_t>(k / 8) * descriptor_.stride + static_cast<std::uint64_t>(k % 8) * width;
    } else {
      address += static_cast<std::uint64_t>(mn / 8) * descriptor_.stride + static_cast<std::uint64_t>(mn % 8) * width +
                 static_cast<std::uint64_t>(k) * kElementBytes;
    }
    address ^= (address >> 7 & (width / 16 - 1)) << 4;
    // The descriptor holds bits 4-17 of the shared address; the program's
    // shared memory starts on a 1024-byte boundary.
    const std::uint64_t base = reinterpret_cast<std::uintptr_t>(scheduler_.shared_memory()) & 0x3ffff;
    const std::byte* element = scheduler_.shared_memory() + ((address - base) & 0x3ffff);
    check_shared_access(element, kElementBytes, site_, nullptr);
    std::uint16_t bits;
    std::memcpy(&bits, element, sizeof bits);
    return bits;
  }

 private:
  CtaScheduler& scheduler_;
  const char* operand_;
  Descriptor descriptor_;
  std::uint64_t bits_;
  bool mn_major_;
  std::uint32_t site_;
};

float value_of(WgmmaInput input, std::uint16_t bits) {
  return input == WgmmaInput::bf16 ? static_cast<float>(kiln::bfloat16::from_bits(bits))
                                   : static_cast<float>(kiln::half::from_bits(bits));
}

void multiply(const std::array<void*, kThreadsPerWarpgroup>& threads) {
  CtaScheduler& scheduler = CtaScheduler::current();
  const auto& first = *static_cast<const WgmmaThread*>(threads[0]);
  for (void* data : threads) {
    const auto& mine = *static_cast<const WgmmaThread*>(data);
    if ((mine.a_fragment == nullptr) != (first.a_fragment == nullptr) || mine.a_descriptor != first.a_descriptor ||
        mine.b_descriptor != first.b_descriptor || mine.shape.n != first.shape.n ||
        mine.shape.input != first.shape.input || mine.shape.a_mn_major != first.shape.a_mn_major ||
        mine.shape.b_mn_major != first.shape.b_mn_major || mine.scale_d != first.scale_d)
      scheduler.fault([&] {
        return "wgmma.mma_async: the threads of a warpgroup name different operands (descriptors " +
               hex(first.a_descriptor) + ", " + hex(first.b_descriptor) + " and " + hex(mine.a_descriptor) + ", " +
               hex(mine.b_descriptor) + ")";
      });
  }
  const WgmmaShape shape = first.shape;
  // On the fiber's stack, not the heap: a fault while reading (a race, a
  // read out of bounds) abandons this frame without unwinding it.
  std::array<double, kRows * kDepth> a{};
  std::array<double, kDepth * kMaxColumns> b{};
  if (first.a_fragment) {
    // Register r of thread (warp, lane) holds row 16 warp + lane / 4 + 8 (r & 1),
    // columns 2 (lane % 4) + 8 (r >> 1) + {0, 1}, the first in the low half.
    for (int thread = 0; thread < kThreadsPerWarpgroup; ++thread) {
      const auto& mine = *static_cast<const WgmmaThread*>(threads[static_cast<std::size_t>(thread)]);
      const int warp = thread / 32, lane = thread % 32;
      for (int r = 0; r < 4; ++r)
        for (int half = 0; half < 2; ++half) {
          const int row = 16 * warp + lane / 4 + 8 * (r & 1), column = 2 * (lane % 4) + 8 * (r >> 1) + half;
          a[static_cast<std::size_t>(row * kDepth + column)] =
              value_of(shape.input, static_cast<std::uint16_t>(mine.a_fragment[r] >> (16 * half)));
        }
    }
  } else {
    const OperandReader a_reader(scheduler, "A", first.a_descriptor, shape.a_mn_major, first.site);
    for (int m = 0; m < kRows; ++m)
      for (int k = 0; k < kDepth; ++k)
        a[static_cast<std::size_t>(m * kDepth + k)] = value_of(shape.input, a_reader.element(m, k));
  }
  const OperandReader b_reader(scheduler, "B", first.b_descriptor, shape.b_mn_major, first.site);
  for (int k = 0; k < kDepth; ++k)
    for (int n = 0; n < shape.n; ++n)
      b[static_cast<std::size_t>(k * shape.n + n)] = value_of(shape.input, b_reader.element(n, k));
  for (int thread = 0; thread < kThreadsPerWarpgroup; ++thread) {
    const auto& mine = *static_cast<const WgmmaThread*>(threads[static_cast<std::size_t>(thread)]);
    const int warp = thread / 32, lane = thread % 32;
    // Register i: row 16 warp + lane / 4 + 8 ((i >> 1) & 1), column 8 (i >> 2) + 2 (lane % 4) + (i & 1).
    for (int i = 0; i < shape.n / 2; ++i) {
      const int row = 16 * warp + lane / 4 + 8 * (i >> 1 & 1), column = 8 * (i >> 2) + 2 * (lane % 4) + (i & 1);
      double sum = mine.scale_d ? mine.accumulator[i] : 0.0;
      for (int k = 0; k < kDepth; ++k)
        sum += a[static_cast<std::size_t>(row * kDepth + k)] * b[static_cast<std::size_t>(k * shape.n + column)];
      mine.accumulator[i] = static_cast<float>(sum);
    }
  }
}

}  // namespace

void warpgroup_matrix_multiply(WgmmaShape shape, const std::uint32_t* a_fragment, std::uint64_t a_descriptor,
                               std::uint64_t b_descriptor, bool scale_d, float* accumulator, std::uint32_t site) {
  CtaScheduler& scheduler = CtaScheduler::current();
  CtaScheduler::WgmmaState& state = scheduler.wgmma_state();
  if (!state.fenced)
    scheduler.fault([] { return std::string("wgmma.mma_async without a wgmma.fence before it since the last wait"); });
  ++state.uncommitted;
  WgmmaThread thread{shape, site, a_fragment, a_descriptor, b_descriptor, scale_d, accumulator};
  scheduler.warpgroup_exchange(&thread, &multiply);
}

void warpgroup_fence() { CtaScheduler::current().wgmma_state().fenced = true; }

void warpgroup_commit() { CtaScheduler::current().wgmma_state().uncommitted = 0; }

void warpgroup_wait(int pending_groups) {
  CtaScheduler& scheduler = CtaScheduler::current();
  CtaScheduler::WgmmaState& state = scheduler.wgmma_state();
  if (pending_groups < 0 || pending_groups > 7)
    scheduler.fault([&] { return "wgmma.wait_group " + std::to_string(pending_groups) + ": not 0 … 7"; });
  if (state.uncommitted > 0)
    scheduler.fault([&] {
      return "wgmma.wait_group with " + std::to_string(state.uncommitted) +
             " wgmma.mma_async not committed to a group, whose results it does not wait for";
    });
  state.fenced = false;
}

}  // namespace kiln::runtime::emu
