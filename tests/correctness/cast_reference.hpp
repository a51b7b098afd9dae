// Shared by the cast tests: the conversion kernel (casts to every dtype and
// bitcasts to each of the same width), a reference conversion written
// independently of kiln's own (long double arithmetic, not bit manipulation),
// inputs probing each conversion's edges, and the check. The reference works on
// dtypes at run time, so that only the kernels are instantiated per dtype pair.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace kiln::test::cast {

namespace kl = kiln;
using kiln::ir::DType;

constexpr int kBlock = 64;

template <class... T>
struct List {};

// Per source dtype: one cast to each dtype in Casts, one bitcast to each
// dtype of the same width in Bitcasts.
template <class From, class Casts, class Bitcasts>
struct Convert;
template <class From, class... C, class... B>
struct Convert<From, List<C...>, List<B...>> {
  static void kernel(kl::Ptr<kl::Scalar<From>> x, kl::i32 n, kl::Ptr<kl::Scalar<C>>... casts,
                     kl::Ptr<kl::Scalar<B>>... bitcasts) {
    auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
    auto mask = offs < n;
    auto v = kl::load(x + offs, mask);
    (kl::store(casts + offs, kl::cast<kl::Scalar<C>>(v), mask), ...);
    (kl::store(bitcasts + offs, kl::bitcast<kl::Scalar<B>>(v), mask), ...);
  }
};

using AllStorage =
    List<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t,
         std::uint64_t, kl::half, kl::bfloat16, float, double, kl::float8_e4m3, kl::float8_e5m2>;

// The dtypes of one bit width (i1 has none: it is stored in a byte but is 1 bit wide).
template <class T>
struct SameWidth {
  using type = List<>;
};
template <class T>
  requires(sizeof(T) == 1 && !std::is_same_v<T, bool>)
struct SameWidth<T> {
  using type = List<std::int8_t, std::uint8_t, kl::float8_e4m3, kl::float8_e5m2>;
};
template <class T>
  requires(sizeof(T) == 2)
struct SameWidth<T> {
  using type = List<std::int16_t, std::uint16_t, kl::half, kl::bfloat16>;
};
template <class T>
  requires(sizeof(T) == 4)
struct SameWidth<T> {
  using type = List<std::int32_t, std::uint32_t, float>;
};
template <class T>
  requires(sizeof(T) == 8)
struct SameWidth<T> {
  using type = List<std::int64_t, std::uint64_t, double>;
};

// ---- the reference, on dtypes known at run time ----

// An element's value: exact as long double for floats (x86-64 long double
// holds every dtype's values exactly), as a 128-bit integer for integers.
struct Number {
  bool is_float;
  long double f;
  __int128 i;
};

inline int bytes_of(DType d) { return kiln::ir::dtype_bytes(d); }

inline Number read(DType d, const unsigned char* p) {
  auto bits = [&]<class U>(U) {
    U u;
    std::memcpy(&u, p, sizeof(U));
    return u;
  };
  switch (d) {
    case DType::i1: return {false, 0, bits(std::uint8_t{}) != 0};
    case DType::i8: return {false, 0, std::bit_cast<std::int8_t>(bits(std::uint8_t{}))};
    case DType::i16: return {false, 0, std::bit_cast<std::int16_t>(bits(std::uint16_t{}))};
    case DType::i32: return {false, 0, std::bit_cast<std::int32_t>(bits(std::uint32_t{}))};
    case DType::i64: return {false, 0, std::bit_cast<std::int64_t>(bits(std::uint64_t{}))};
    case DType::u8: return {false, 0, bits(std::uint8_t{})};
    case DType::u16: return {false, 0, bits(std::uint16_t{})};
    case DType::u32: return {false, 0, bits(std::uint32_t{})};
    case DType::u64: return {false, 0, bits(std::uint64_t{})};
    case DType::f16: return {true, static_cast<float>(kl::half::from_bits(bits(std::uint16_t{}))), 0};
    case DType::bf16: return {true, static_cast<float>(kl::bfloat16::from_bits(bits(std::uint16_t{}))), 0};
    case DType::f32: return {true, std::bit_cast<float>(bits(std::uint32_t{})), 0};
    case DType::f64: return {true, std::bit_cast<double>(bits(std::uint64_t{})), 0};
    case DType::f8e4m3: return {true, static_cast<float>(kl::float8_e4m3::from_bits(bits(std::uint8_t{}))), 0};
    case DType::f8e5m2: return {true, static_cast<float>(kl::float8_e5m2::from_bits(bits(std::uint8_t{}))), 0};
  }
  return {};
}

// A float format: precision p (bits including the implicit one), smallest
// normal exponent, largest finite value, and whether a conversion to it
// saturates (the fp8 formats: OPS.md's cast row).
struct Format {
  int precision;
  int min_exponent;
  long double max_finite;
  bool saturates;
};

inline Format format_of(DType d) {
  switch (d) {
    case DType::f16: return {11, -14, 65504.0L, false};
    case DType::bf16: return {8, -126, 0x1.fep127L, false};
    case DType::f32: return {24, -126, std::numeric_limits<float>::max(), false};
    case DType::f64: return {53, -1022, std::numeric_limits<double>::max(), false};
    case DType::f8e4m3: return {4, -6, 448.0L, true};
    default: return {3, -14, 57344.0L, true};
  }
}

// Round to nearest even into float format f: scale so that one unit in the
// last place of the result is 1, round to an integer (nearbyint rounds half to
// even), scale back; below the smallest normal the unit stays fixed
// (subnormals). In a saturating format an infinity, or a value that rounds
// past the largest finite one, gives that largest value with its sign; in the
// others overflow gives infinity. NaN stays NaN.
inline long double round_to_format(long double x, Format f) {
  const long double nan = std::numeric_limits<long double>::quiet_NaN();
  if (std::isnan(x)) return nan;
  if (std::isinf(x)) return f.saturates ? std::copysign(f.max_finite, x) : x;
  if (x == 0) return x;
  int e = 0;
  std::frexp(x, &e);  // |x| = m * 2^e with m in [0.5, 1): the leading bit has exponent e - 1
  const int unit = std::max(e - 1, f.min_exponent) - (f.precision - 1);
  const long double r = std::ldexp(std::nearbyint(std::ldexp(x, -unit)), unit);
  if (std::fabs(r) > f.max_finite) return std::copysign(f.saturates ? f.max_finite : INFINITY, x);
  return r == 0 ? std::copysign(0.0L, x) : r;
}

// Writes a value already representable in float dtype d (so the encoding
// does not round).
inline void write_float(DType d, long double v, unsigned char* p) {
  auto put = [&](auto u) { std::memcpy(p, &u, sizeof(u)); };
  const float f = static_cast<float>(v);
  switch (d) {
    case DType::f16: put(kl::half(f).bits); break;
    case DType::bf16: put(kl::bfloat16(f).bits); break;
    case DType::f32: put(f); break;
    case DType::f64: put(static_cast<double>(v)); break;
    case DType::f8e4m3: put(kl::float8_e4m3(f).bits); break;
    default: put(kl::float8_e5m2(f).bits); break;
  }
}

// The reference cast of one element, following OPS.md's cast row: ->i1 is
// != 0 (NaN gives 1); float->float and int->float round to nearest even;
// float->int truncates toward zero and saturates, NaN gives 0; int->int keeps
// the low bits of the source value, extended by the source's signedness.
inline void reference_cast(DType from, const unsigned char* in, DType to, unsigned char* out) {
  const Number x = read(from, in);
  const int bytes = bytes_of(to);
  if (to == DType::i1) {
    *out = (x.is_float ? x.f != 0 : x.i != 0) ? 1 : 0;
  } else if (kiln::ir::is_float(to)) {
    write_float(to, round_to_format(x.is_float ? x.f : static_cast<long double>(x.i), format_of(to)), out);
  } else {
    __int128 v = x.i;
    if (x.is_float) {
      const int bits = 8 * bytes;
      const bool is_signed = kiln::ir::is_signed_int(to);
      const __int128 lo = is_signed ? -(static_cast<__int128>(1) << (bits - 1)) : 0;
      const __int128 hi = (static_cast<__int128>(1) << (is_signed ? bits - 1 : bits)) - 1;
      const long double t = std::trunc(x.f);
      v = std::isnan(x.f) ? 0 : t <= lo ? lo : t >= hi ? hi : static_cast<__int128>(t);
    }
    const auto low = static_cast<unsigned __int128>(v);
    std::memcpy(out, &low, bytes);  // little-endian: the low bytes
  }
}

inline std::string show(DType d, const unsigned char* p) {
  const Number x = read(d, p);
  std::ostringstream s;
  s.precision(21);
  if (x.is_float) s << x.f;
  else if (x.i < 0) s << "-" << static_cast<std::uint64_t>(-x.i);
  else s << static_cast<std::uint64_t>(x.i);
  std::uint64_t raw = 0;
  std::memcpy(&raw, p, bytes_of(d));
  s << " (bits 0x" << std::hex << raw << ")";
  return s.str();
}

// Element i of `got` must equal element i of `want` bit for bit, except that
// any NaN matches any NaN.
inline void expect_same_elements(DType to, const std::vector<unsigned char>& got,
                                 const std::vector<unsigned char>& want, const std::vector<unsigned char>& input,
                                 DType from, const std::string& what) {
  const int bytes = bytes_of(to);
  const std::size_t n = got.size() / bytes;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* g = &got[i * bytes];
    const unsigned char* w = &want[i * bytes];
    const bool both_nan = kiln::ir::is_float(to) && std::isnan(read(to, g).f) && std::isnan(read(to, w).f);
    if (!both_nan && std::memcmp(g, w, bytes) != 0 && bad++ == 0) first = i;
  }
  if (bad != 0)
    ADD_FAILURE() << what << ": " << bad << " of " << n << " elements differ; first at index " << first << ": input "
                  << show(from, &input[first * bytes_of(from)]) << ", got " << show(to, &got[first * bytes])
                  << ", want " << show(to, &want[first * bytes]);
}

// ---- inputs ----

// Values that probe each conversion's edges, then random values across scales.
template <class T>
std::vector<T> cast_inputs(std::size_t n, std::uint64_t seed) {
  std::vector<T> out;
  std::mt19937_64 rng(seed);
  if constexpr (std::is_same_v<T, bool>) {
    out = kiln::test::random_values<bool>(n, seed);
  } else if constexpr (std::is_integral_v<T>) {
    const long double edges[] = {0,           1,           -1,          127,      128,         -128,
                                 -129,        255,         256,         32767,    32768,       -32769,
                                 65535,       65536,       2049,        2051,     257,         259,
                                 65519,       65520,       16777217,    16777219, 0x1p31L,     -0x1p31L - 1,
                                 0x1p32L - 1, 0x1p53L + 1, 0x1p63L - 1, -0x1p63L, 0x1p64L - 1, 0x1p63L + 0x1p40L + 1};
    for (long double e : edges)
      if (e >= std::numeric_limits<T>::min() && e <= std::numeric_limits<T>::max()) out.push_back(static_cast<T>(e));
    out.push_back(std::numeric_limits<T>::min());
    out.push_back(std::numeric_limits<T>::max());
    const auto wide = kiln::test::random_values<T>(n, seed, -1e30, 1e30);
    const auto small = kiln::test::random_values<T>(n, seed + 1, -300, 300);
    for (std::size_t i = 0; out.size() < n; ++i) out.push_back(i % 2 ? wide[i] : small[i]);
  } else {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // Ties and near-ties for each narrower float, some placed beyond what a
    // first rounding to f32 keeps: a double rounding through f32 gets them wrong.
    const double edges[] = {0.0,
                            -0.0,
                            inf,
                            -inf,
                            nan,
                            0.5,
                            -0.5,
                            1.5,
                            -1.5,
                            2.5,
                            -2.5,
                            -0.99,
                            0.99,
                            127.5,
                            128,
                            -128.5,
                            -129,
                            255.9,
                            256,
                            -300.7,
                            448,
                            464,
                            465,
                            65504,
                            65519,
                            65520,
                            57344,
                            61440,
                            1e5,
                            -1e5,
                            0x1p31,
                            -0x1p31 - 1000,
                            0x1p32,
                            0x1p63,
                            -0x1p63,
                            0x1p64,
                            1e30,
                            -1e30,
                            1e-5,
                            6e-8,
                            -3e-8,
                            1e-40,
                            1e-310,
                            1 + 0x1p-11 + 0x1p-40,
                            1 + 0x1p-8 + 0x1p-40,
                            1 + 0x1p-4 + 0x1p-40,
                            1 + 0x1p-3 + 0x1p-40,
                            1 + 0x1p-24 + 0x1p-50,
                            -(1 + 0x1p-11)};
    for (double e : edges) out.push_back(kiln::test::from_double<T>(e));
    // Random magnitudes 2^-20 … 2^top (top at most 70, within the type's range), and small fractions.
    const int top = std::min(70, static_cast<int>(std::log2(kiln::test::max_finite<T>())));
    std::uniform_int_distribution<int> exponent(-20, top);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_real_distribution<double> small(-300.0, 300.0);
    for (std::size_t i = 0; out.size() < n; ++i) {
      const double sign = rng() % 2 ? -1.0 : 1.0;
      out.push_back(kiln::test::from_double<T>(i % 2 ? sign * std::ldexp(mantissa(rng), exponent(rng)) : small(rng)));
    }
  }
  return out;
}

// ---- running ----

template <class T>
std::vector<unsigned char> bytes(const kl::Buffer<T>& b) {
  const auto elements = b.to_host();
  std::vector<unsigned char> out(b.bytes());
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> stores bits, not bools
    for (std::size_t i = 0; i < elements.size(); ++i) out[i] = elements[i] ? 1 : 0;
  } else {
    std::memcpy(out.data(), elements.data(), b.bytes());
  }
  return out;
}

template <class From, class... C, class... B>
void run_conversions(List<C...>, List<B...>, const std::vector<From>& x) {
  const int n = static_cast<int>(x.size());
  std::tuple<kl::Buffer<C>...> casts{kl::Buffer<C>(x.size())...};
  std::tuple<kl::Buffer<B>...> bitcasts{kl::Buffer<B>(x.size())...};
  const auto input = kiln::test::to_buffer(x);
  std::apply(
      [&](auto&... c) {
        std::apply(
            [&](auto&... b) {
              kl::compile<Convert<From, List<C...>, List<B...>>::kernel>().launch(kl::Grid(kl::cdiv(n, kBlock)), input,
                                                                                  n, c..., b...);
            },
            bitcasts);
      },
      casts);
  const DType from = kl::dtype_v<From>;
  const auto in = bytes(input);
  auto check = [&](DType to, std::vector<unsigned char> got, bool is_bitcast) {
    std::vector<unsigned char> want(got.size());
    for (int i = 0; i < n; ++i) {
      if (is_bitcast) std::memcpy(&want[i * bytes_of(to)], &in[i * bytes_of(from)], bytes_of(to));
      else reference_cast(from, &in[i * bytes_of(from)], to, &want[i * bytes_of(to)]);
    }
    const std::string what = std::string(is_bitcast ? "bitcast " : "cast ") + std::string(kiln::ir::dtype_name(from)) +
                             " -> " + std::string(kiln::ir::dtype_name(to));
    expect_same_elements(to, got, want, in, from, what);
  };
  std::apply([&](auto&... c) { (check(kl::dtype_v<C>, bytes(c), false), ...); }, casts);
  std::apply([&](auto&... b) { (check(kl::dtype_v<B>, bytes(b), true), ...); }, bitcasts);
}

/// Casts values of From to every dtype and bitcasts them to each dtype of the
/// same width on the cpu device, and checks every output against the reference.
/// The inputs are cast_inputs plus whole-width random bit patterns (NaN
/// payloads, subnormals) for all but i1.
template <class From>
void check_conversions_from() {
  auto x = cast_inputs<From>(555, 71);
  if constexpr (!std::is_same_v<From, bool>) {
    using Bits =
        std::conditional_t<sizeof(From) == 1, std::uint8_t,
                           std::conditional_t<sizeof(From) == 2, std::uint16_t,
                                              std::conditional_t<sizeof(From) == 4, std::uint32_t, std::uint64_t>>>;
    for (Bits b : kiln::test::random_values<Bits>(200, 72, 0, 1e30)) x.push_back(std::bit_cast<From>(b));
  }
  run_conversions(AllStorage{}, typename SameWidth<From>::type{}, x);
}

}  // namespace kiln::test::cast
