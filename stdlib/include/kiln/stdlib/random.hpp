// Counter-based random numbers (Philox 4x32, 10 rounds), the same scheme and
// constants as Triton's, so a (seed, offset) pair gives the same numbers.
#pragma once

#include <tuple>

#include "kiln/dsl/math.hpp"
#include "kiln/dsl/shape_ops.hpp"

namespace kiln {

namespace detail {
inline constexpr std::uint32_t kPhiloxKeyA = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxKeyB = 0xBB67AE85u;
inline constexpr std::uint32_t kPhiloxRoundA = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxRoundB = 0xCD9E8D57u;
}  // namespace detail

/// Ten Philox rounds on counters (c0, c1, c2, c3) with the key taken from the
/// 64-bit seed; returns the four 32-bit outputs.
template <Numeric Seed, Numeric C>
auto philox(const Seed& seed, const C& c0, const C& c1, const C& c2, const C& c3,
            std::source_location loc = std::source_location::current()) {
  static_assert(dtype_of<C> == ir::DType::u32, "kiln: philox counters are u32");
  using U = plain_t<C>;
  auto seed64 = cast<u64>(seed, loc);
  auto k0 = cast<u32>(seed64 & 0xFFFFFFFFull, loc);
  auto k1 = cast<u32>((seed64 >> 32) & 0xFFFFFFFFull, loc);
  U x0 = c0, x1 = c1, x2 = c2, x3 = c3;
  for (int round = 0; round < 10; ++round) {
    U prev0 = x0, prev2 = x2;
    x0 = U(((umulhi(prev2, detail::kPhiloxRoundB, loc) ^ x1) ^ k0).value());
    x2 = U(((umulhi(prev0, detail::kPhiloxRoundA, loc) ^ x3) ^ k1).value());
    x1 = U((prev2 * detail::kPhiloxRoundB).value());
    x3 = U((prev0 * detail::kPhiloxRoundA).value());
    k0 = k0 + detail::kPhiloxKeyA;
    k1 = k1 + detail::kPhiloxKeyB;
  }
  return std::tuple<U, U, U, U>(x0, x1, x2, x3);
}

/// Four streams of random u32s for each offset (offsets are i32 or u32).
template <Numeric Seed, Numeric Offset>
auto randint4x(const Seed& seed, const Offset& offset, std::source_location loc = std::source_location::current()) {
  auto c0 = cast<u32>(offset, loc);
  auto zero = c0 * 0u;
  return philox(seed, c0, zero, zero, zero, loc);
}

/// One random u32 for each offset.
template <Numeric Seed, Numeric Offset>
auto randint(const Seed& seed, const Offset& offset, std::source_location loc = std::source_location::current()) {
  return std::get<0>(randint4x(seed, offset, loc));
}

/// u32 random bits to a float uniform in [0, 1).
template <Numeric X>
auto uint_to_uniform_float(const X& x, std::source_location loc = std::source_location::current()) {
  static_assert(dtype_of<X> == ir::DType::u32, "kiln: uint_to_uniform_float takes u32");
  auto s = bitcast<i32>(x, loc);
  auto folded = where(s < 0, -s - 1, s, loc);
  return cast<f32>(folded, loc) * 4.6566127342e-10f;
}

/// A uniform float in [0, 1) for each offset.
template <Numeric Seed, Numeric Offset>
auto rand(const Seed& seed, const Offset& offset, std::source_location loc = std::source_location::current()) {
  return uint_to_uniform_float(randint(seed, offset, loc), loc);
}

/// A standard normal float for each offset (Box–Muller on two streams).
template <Numeric Seed, Numeric Offset>
auto randn(const Seed& seed, const Offset& offset, std::source_location loc = std::source_location::current()) {
  auto [i1, i2, i3, i4] = randint4x(seed, offset, loc);
  auto u1 = maximum(uint_to_uniform_float(i1, loc), 1.0e-7f, loc);
  auto u2 = uint_to_uniform_float(i2, loc);
  auto r = sqrt(log(u1, loc) * -2.0f, loc);
  return r * cos(u2 * 6.283185307179586f, loc);
}

}  // namespace kiln
