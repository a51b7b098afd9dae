// mma.sync on the emu: the warp's 32 lanes hand their fragments to the last
// to arrive, which assembles A (16 x K), B (K x 8) and C (16 x 8) from the
// PTX ISA's fragment layouts, multiplies and hands each lane its part of D:
// f16, bf16, tf32, e4m3 and e5m2 into f32, and s8 into s32.
#include <array>
#include <bit>
#include <cstring>

#include "cta_scheduler.hpp"
#include "hooks.hpp"
#include "kiln/ir/numeric.hpp"

namespace kiln::runtime::emu {

namespace {

constexpr int kRows = 16;
constexpr int kColumns = 8;

/// One lane's part of the operation.
struct MmaLane {
  MmaInput input;
  const std::uint32_t* a;
  const std::uint32_t* b;
  const float* c;
  float* d;
};

float bfloat16_value(std::uint32_t bits) { return kiln::bfloat16::from_bits(static_cast<std::uint16_t>(bits)); }
float half_value(std::uint32_t bits) { return kiln::half::from_bits(static_cast<std::uint16_t>(bits)); }
/// tf32 keeps the sign, exponent and 10 mantissa bits of an f32 register.
float tf32_value(std::uint32_t bits) { return std::bit_cast<float>(bits & 0xffffe000u); }

/// The two 16-bit elements of a register, low half first.
std::array<float, 2> pair_of(MmaInput input, std::uint32_t bits) {
  if (input == MmaInput::bf16) return {bfloat16_value(bits), bfloat16_value(bits >> 16)};
  return {half_value(bits), half_value(bits >> 16)};
}

/// Scatters a lane's 8-bit m16n8k32 fragments (s8, e4m3, e5m2; each
/// register's lowest byte first) into A (16 x 32) and B (32 x 8), each
/// element through `value`: register r of A holds row g + 8 (r & 1), columns
/// 4t + 16 (r >> 1) + {0..3}; register r of B holds rows 4t + 16 r + {0..3}
/// of column g.
template <class T, class Value>
void scatter_8_bit(int lane, const std::uint32_t* a_registers, const std::uint32_t* b_registers, T (&a)[kRows][32],
                   T (&b)[32][kColumns], Value value) {
  const int group = lane / 4, thread_in_group = lane % 4;
  for (int r = 0; r < 4; ++r)
    for (int e = 0; e < 4; ++e)
      a[group + 8 * (r & 1)][4 * thread_in_group + 16 * (r >> 1) + e] =
          value(static_cast<std::uint8_t>(a_registers[r] >> (8 * e)));
  for (int r = 0; r < 2; ++r)
    for (int e = 0; e < 4; ++e)
      b[4 * thread_in_group + 16 * r + e][group] = value(static_cast<std::uint8_t>(b_registers[r] >> (8 * e)));
}

void multiply(const std::array<void*, 32>& lanes) {
  const MmaInput input = static_cast<const MmaLane*>(lanes[0])->input;
  const bool fp8 = input == MmaInput::e4m3 || input == MmaInput::e5m2;
  const int depth = input == MmaInput::tf32 ? 8 : fp8 ? 32 : 16;
  double a[kRows][32] = {}, b[32][kColumns] = {}, c[kRows][kColumns] = {};
  for (int lane = 0; lane < 32; ++lane) {
    const auto& mine = *static_cast<const MmaLane*>(lanes[static_cast<std::size_t>(lane)]);
    const int group = lane / 4, thread_in_group = lane % 4;
    if (fp8) {
      scatter_8_bit(lane, mine.a, mine.b, a, b, [input](std::uint8_t bits) {
        return input == MmaInput::e5m2 ? static_cast<double>(kiln::float8_e5m2::from_bits(bits))
                                       : static_cast<double>(kiln::float8_e4m3::from_bits(bits));
      });
    } else if (input == MmaInput::tf32) {
      // a0: (g, t), a1: (g + 8, t), a2: (g, t + 4), a3: (g + 8, t + 4); b0: (t, g), b1: (t + 4, g).
      for (int r = 0; r < 4; ++r) a[group + 8 * (r & 1)][thread_in_group + 4 * (r >> 1)] = tf32_value(mine.a[r]);
      for (int r = 0; r < 2; ++r) b[thread_in_group + 4 * r][group] = tf32_value(mine.b[r]);
    } else {
      // Register r of A holds row g + 8 (r & 1), columns 2t + 8 (r >> 1) + {0, 1};
      // register r of B holds rows 2t + 8 r + {0, 1} of column g.
      for (int r = 0; r < 4; ++r) {
        const auto pair = pair_of(input, mine.a[r]);
        for (int e = 0; e < 2; ++e)
          a[group + 8 * (r & 1)][2 * thread_in_group + 8 * (r >> 1) + e] = pair[static_cast<std::size_t>(e)];
      }
      for (int r = 0; r < 2; ++r) {
        const auto pair = pair_of(input, mine.b[r]);
        for (int e = 0; e < 2; ++e) b[2 * thread_in_group + 8 * r + e][group] = pair[static_cast<std::size_t>(e)];
      }
    }
    // C and D: element i at row g + 8 (i >> 1), column 2t + (i & 1).
    for (int i = 0; i < 4; ++i) c[group + 8 * (i >> 1)][2 * thread_in_group + (i & 1)] = mine.c[i];
  }
  for (int lane = 0; lane < 32; ++lane) {
    const auto& mine = *static_cast<const MmaLane*>(lanes[static_cast<std::size_t>(lane)]);
    const int group = lane / 4, thread_in_group = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = group + 8 * (i >> 1), column = 2 * thread_in_group + (i & 1);
      double sum = c[row][column];
      for (int k = 0; k < depth; ++k) sum += a[row][k] * b[k][column];
      mine.d[i] = static_cast<float>(sum);
    }
  }
}

/// One lane's part of an integer operation: 8-bit A (4 registers) and B (2),
/// s32 C and D.
struct IntegerMmaLane {
  const std::uint32_t* a;
  const std::uint32_t* b;
  const std::int32_t* c;
  std::int32_t* d;
};

void multiply_integers(const std::array<void*, 32>& lanes) {
  constexpr int kDepth = 32;
  std::int32_t a[kRows][kDepth] = {}, b[kDepth][kColumns] = {}, c[kRows][kColumns] = {};
  for (int lane = 0; lane < 32; ++lane) {
    const auto& mine = *static_cast<const IntegerMmaLane*>(lanes[static_cast<std::size_t>(lane)]);
    const int group = lane / 4, thread_in_group = lane % 4;
    scatter_8_bit(lane, mine.a, mine.b, a, b,
                  [](std::uint8_t bits) { return static_cast<std::int32_t>(static_cast<std::int8_t>(bits)); });
    for (int i = 0; i < 4; ++i) c[group + 8 * (i >> 1)][2 * thread_in_group + (i & 1)] = mine.c[i];
  }
  for (int lane = 0; lane < 32; ++lane) {
    const auto& mine = *static_cast<const IntegerMmaLane*>(lanes[static_cast<std::size_t>(lane)]);
    const int group = lane / 4, thread_in_group = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = group + 8 * (i >> 1), column = 2 * thread_in_group + (i & 1);
      // Wrapping s32 arithmetic, as mma.sync without .satfinite.
      std::uint32_t sum = static_cast<std::uint32_t>(c[row][column]);
      for (int k = 0; k < kDepth; ++k) sum += static_cast<std::uint32_t>(a[row][k] * b[k][column]);
      mine.d[i] = static_cast<std::int32_t>(sum);
    }
  }
}

}  // namespace

void warp_integer_matrix_multiply(const std::uint32_t* a, const std::uint32_t* b, const std::int32_t* c,
                                  std::int32_t* d) {
  IntegerMmaLane lane{a, b, c, d};
  CtaScheduler::current().warp_exchange(&lane, &multiply_integers);
}

void warp_matrix_multiply(MmaInput input, const std::uint32_t* a, const std::uint32_t* b, const float* c, float* d) {
  MmaLane lane{input, a, b, c, d};
  CtaScheduler::current().warp_exchange(&lane, &multiply);
}

}  // namespace kiln::runtime::emu
