// wgmma on the emu: the 128 threads of a warpgroup hand their accumulator
// registers (and A's fragment registers, when A comes from registers) to
// the last to arrive, which reads A (64 x K) and B (K x N; K is 16 of f16
// and bf16, 32 of e4m3, e5m2 and s8) from shared memory through the matrix
// descriptors as the PTX ISA lays out the swizzled canonical tiles,
// multiplies and hands each thread its part of D (into f32, products summed
// exactly and rounded once, as mma.sync on the emu; s8 into s32, exactly,
// wrapping). The instruction runs at once; the order of wgmma's fence,
// commit and wait around it is checked, and its reads count until the
// wait_group that retires its group, which checks them again: a write to
// its operands since the last barrier before then is a race, as on a GPU,
// where an asynchronous wgmma may still be reading them.
#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "cta_scheduler.hpp"
#include "hooks.hpp"
#include "kiln/ir/numeric.hpp"
#include "shared_access.hpp"

namespace kiln::runtime::emu {

namespace {

constexpr int kRows = 64;
constexpr int kDepthBytes = 32;
constexpr int kMaxDepth = 32;
constexpr int kMaxColumns = 256;

int element_bytes(WgmmaInput input) { return input == WgmmaInput::f16 || input == WgmmaInput::bf16 ? 2 : 1; }

/// One thread's part of the instruction.
struct WgmmaThread {
  WgmmaShape shape;
  std::uint32_t site;
  const std::uint32_t* a_fragment;  // null: A through its descriptor
  std::uint64_t a_descriptor, b_descriptor;
  bool scale_d;
  void* accumulator;  // f32, or s32 for s8
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
  OperandReader(CtaScheduler& scheduler, const char* operand, std::uint64_t bits, bool mn_major, int element_bytes,
                std::uint32_t site)
      : scheduler_(scheduler),
        operand_(operand),
        descriptor_(decode(bits)),
        bits_(bits),
        mn_major_(mn_major),
        element_bytes_(element_bytes),
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
    const auto bytes = static_cast<std::uint64_t>(element_bytes_);
    std::uint64_t address = descriptor_.start;
    if (mn_major_) {
      const std::uint64_t row_elements = width / bytes;
      address += static_cast<std::uint64_t>(mn) / row_elements * descriptor_.leading +
                 static_cast<std::uint64_t>(mn) % row_elements * bytes +
                 static_cast<std::uint64_t>(k / 8) * descriptor_.stride + static_cast<std::uint64_t>(k % 8) * width;
    } else {
      address += static_cast<std::uint64_t>(mn / 8) * descriptor_.stride + static_cast<std::uint64_t>(mn % 8) * width +
                 static_cast<std::uint64_t>(k) * bytes;
    }
    address ^= (address >> 7 & (width / 16 - 1)) << 4;
    // The descriptor holds bits 4-17 of the shared address; the program's
    // shared memory starts on a 1024-byte boundary.
    const std::uint64_t base = reinterpret_cast<std::uintptr_t>(scheduler_.shared_memory()) & 0x3ffff;
    const std::byte* element = scheduler_.shared_memory() + ((address - base) & 0x3ffff);
    check_shared_access(element, element_bytes_, site_, nullptr);
    scheduler_.wgmma_state().uncommitted_reads.push_back({element, static_cast<std::uint64_t>(element_bytes_), site_});
    std::uint16_t bits = 0;
    std::memcpy(&bits, element, static_cast<std::size_t>(element_bytes_));
    return bits;
  }

 private:
  CtaScheduler& scheduler_;
  const char* operand_;
  Descriptor descriptor_;
  std::uint64_t bits_;
  bool mn_major_;
  int element_bytes_;
  std::uint32_t site_;
};

/// An input element's value (exact in a float for every input type).
float value_of(WgmmaInput input, std::uint16_t bits) {
  const auto byte = static_cast<std::uint8_t>(bits);
  switch (input) {
    case WgmmaInput::f16: return static_cast<float>(kiln::half::from_bits(bits));
    case WgmmaInput::bf16: return static_cast<float>(kiln::bfloat16::from_bits(bits));
    case WgmmaInput::e4m3: return static_cast<float>(kiln::float8_e4m3::from_bits(byte));
    case WgmmaInput::e5m2: return static_cast<float>(kiln::float8_e5m2::from_bits(byte));
    case WgmmaInput::s8: return static_cast<float>(static_cast<std::int8_t>(byte));
  }
  return 0;
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
  const int bytes = element_bytes(shape.input), depth = kDepthBytes / bytes;
  // On the fiber's stack, not the heap: a fault while reading (a race, a
  // read out of bounds) abandons this frame without unwinding it.
  std::array<float, kRows * kMaxDepth> a{};
  std::array<float, kMaxDepth * kMaxColumns> b{};
  if (first.a_fragment) {
    // 16-bit inputs (matrix_assembly.cpp refuses 8-bit A registers): register
    // r of thread (warp, lane) holds row 16 warp + lane / 4 + 8 (r & 1),
    // columns 2 (lane % 4) + 8 (r >> 1) + {0, 1}, the first in the low half.
    for (int thread = 0; thread < kThreadsPerWarpgroup; ++thread) {
      const auto& mine = *static_cast<const WgmmaThread*>(threads[static_cast<std::size_t>(thread)]);
      const int warp = thread / 32, lane = thread % 32;
      for (int r = 0; r < 4; ++r)
        for (int half = 0; half < 2; ++half) {
          const int row = 16 * warp + lane / 4 + 8 * (r & 1), column = 2 * (lane % 4) + 8 * (r >> 1) + half;
          a[static_cast<std::size_t>(row * depth + column)] =
              value_of(shape.input, static_cast<std::uint16_t>(mine.a_fragment[r] >> (16 * half)));
        }
    }
  } else {
    const OperandReader a_reader(scheduler, "A", first.a_descriptor, shape.a_mn_major, bytes, first.site);
    for (int m = 0; m < kRows; ++m)
      for (int k = 0; k < depth; ++k)
        a[static_cast<std::size_t>(m * depth + k)] = value_of(shape.input, a_reader.element(m, k));
  }
  const OperandReader b_reader(scheduler, "B", first.b_descriptor, shape.b_mn_major, bytes, first.site);
  for (int k = 0; k < depth; ++k)
    for (int n = 0; n < shape.n; ++n)
      b[static_cast<std::size_t>(k * shape.n + n)] = value_of(shape.input, b_reader.element(n, k));
  for (int thread = 0; thread < kThreadsPerWarpgroup; ++thread) {
    const auto& mine = *static_cast<const WgmmaThread*>(threads[static_cast<std::size_t>(thread)]);
    const int warp = thread / 32, lane = thread % 32;
    // Register i: row 16 warp + lane / 4 + 8 ((i >> 1) & 1), column 8 (i >> 2) + 2 (lane % 4) + (i & 1).
    for (int i = 0; i < shape.n / 2; ++i) {
      const int row = 16 * warp + lane / 4 + 8 * (i >> 1 & 1), column = 8 * (i >> 2) + 2 * (lane % 4) + (i & 1);
      double sum = 0;
      for (int k = 0; k < depth; ++k)
        sum += static_cast<double>(a[static_cast<std::size_t>(row * depth + k)]) *
               b[static_cast<std::size_t>(k * shape.n + column)];
      if (shape.input == WgmmaInput::s8) {
        // At most 32 products of 2^14 each: exact in a double, and in an int64.
        auto* d = static_cast<std::int32_t*>(mine.accumulator) + i;
        const std::int64_t total = static_cast<std::int64_t>(sum) + (mine.scale_d ? *d : 0);
        *d = static_cast<std::int32_t>(static_cast<std::uint32_t>(total));
      } else {
        auto* d = static_cast<float*>(mine.accumulator) + i;
        *d = static_cast<float>(sum + (mine.scale_d ? *d : 0.0));
      }
    }
  }
}

}  // namespace

void warpgroup_matrix_multiply(WgmmaShape shape, const std::uint32_t* a_fragment, std::uint64_t a_descriptor,
                               std::uint64_t b_descriptor, bool scale_d, void* accumulator, std::uint32_t site) {
  CtaScheduler& scheduler = CtaScheduler::current();
  CtaScheduler::WgmmaState& state = scheduler.wgmma_state();
  if (!state.fenced)
    scheduler.fault([] { return std::string("wgmma.mma_async without a wgmma.fence before it since the last wait"); });
  ++state.uncommitted;
  WgmmaThread thread{shape, site, a_fragment, a_descriptor, b_descriptor, scale_d, accumulator};
  scheduler.warpgroup_exchange(&thread, &multiply);
}

void warpgroup_fence() { CtaScheduler::current().wgmma_state().fenced = true; }

void warpgroup_commit() {
  CtaScheduler::WgmmaState& state = CtaScheduler::current().wgmma_state();
  state.uncommitted = 0;
  state.committed_reads.push_back(std::move(state.uncommitted_reads));
  state.uncommitted_reads.clear();
}

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
  while (state.committed_reads.size() > static_cast<std::size_t>(pending_groups)) {
    for (const CtaScheduler::WgmmaRead& read : state.committed_reads.front())
      check_shared_access(read.address, read.bytes, read.site, nullptr);
    state.committed_reads.pop_front();
  }
}

}  // namespace kiln::runtime::emu
