// Element types of the tile IR: names, sizes and classification.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ir {

enum class DType : std::uint8_t {
  i1,
  i8,
  i16,
  i32,
  i64,
  u8,
  u16,
  u32,
  u64,
  f16,
  bf16,
  f32,
  f64,
  f8e4m3,
  f8e5m2,
};

inline constexpr int kDTypeCount = 15;

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);

/// Bits of the value itself (i1 is 1).
constexpr int dtype_bits(DType t) {
  constexpr int kBits[kDTypeCount] = {1, 8, 16, 32, 64, 8, 16, 32, 64, 16, 16, 32, 64, 8, 8};
  return kBits[static_cast<int>(t)];
}
/// Bytes one element occupies in memory (i1 is stored as one byte).
constexpr int dtype_bytes(DType t) { return t == DType::i1 ? 1 : dtype_bits(t) / 8; }

constexpr bool is_float(DType t) { return t >= DType::f16 && t <= DType::f8e5m2; }
constexpr bool is_integer(DType t) { return t <= DType::u64; }
constexpr bool is_bool(DType t) { return t == DType::i1; }
constexpr bool is_signed_int(DType t) { return t >= DType::i8 && t <= DType::i64; }
constexpr bool is_unsigned_int(DType t) { return t >= DType::u8 && t <= DType::u64; }

/// C-like usual arithmetic conversion between two element types: floats win
/// (wider float wins), otherwise the wider integer wins, unsigned wins at equal
/// width, and i1 promotes to the other operand.
constexpr DType promote(DType a, DType b) {
  if (a == b) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    // f16 with bf16 has no common narrower type: use f32, as Triton does.
    if ((a == DType::f16 && b == DType::bf16) || (a == DType::bf16 && b == DType::f16)) return DType::f32;
    // Rank by precision and range: e5m2 < e4m3 < f16 < bf16 < f32 < f64.
    auto rank = [](DType t) {
      switch (t) {
        case DType::f8e5m2: return 0;
        case DType::f8e4m3: return 1;
        case DType::f16: return 2;
        case DType::bf16: return 3;
        case DType::f32: return 4;
        default: return 5;
      }
    };
    return rank(a) >= rank(b) ? a : b;
  }
  if (is_bool(a)) return b;
  if (is_bool(b)) return a;
  if (dtype_bits(a) != dtype_bits(b)) return dtype_bits(a) > dtype_bits(b) ? a : b;
  return is_unsigned_int(a) ? a : b;
}

}  // namespace kiln::ir
