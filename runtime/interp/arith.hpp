// Elementwise operations on one element's compute value, for every dtype
// they are defined on (`valid<E>`); shared by the elementwise routines and
// the specialised reduce/scan loops, which may regroup the ops that are
// exactly associative and commutative (`associative<E>`).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "element.hpp"
#include "kiln/ir/rounding.hpp"
#include "kiln/ir/special_functions.hpp"

namespace kiln::runtime::interp::ops {

template <class E>
using C = typename E::C;

template <class E>
constexpr bool arithmetic = !E::is_pointer;
template <class E>
constexpr bool integral = !E::is_pointer && !E::is_float;
template <class E>
constexpr bool floating = E::is_float;

/// Integer arithmetic in the wrapping unsigned type, back to `C<E>`.
template <class E>
Wide<C<E>> wide(C<E> v) {
  return static_cast<Wide<C<E>>>(v);
}

struct Add {
  template <class E> static constexpr bool valid = arithmetic<E>;
  template <class E> static constexpr bool associative = !E::is_float;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    if constexpr (E::is_float) return a + b;
    else return static_cast<C<E>>(wide<E>(a) + wide<E>(b));
  }
};
struct Sub {
  template <class E> static constexpr bool valid = arithmetic<E>;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    if constexpr (E::is_float) return a - b;
    else return static_cast<C<E>>(wide<E>(a) - wide<E>(b));
  }
};
struct Mul {
  template <class E> static constexpr bool valid = arithmetic<E>;
  template <class E> static constexpr bool associative = !E::is_float;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    if constexpr (E::is_float) return a * b;
    else return static_cast<C<E>>(wide<E>(a) * wide<E>(b));
  }
};
/// Floats only; integer division checks its divisor first (elementwise.cpp).
struct FloatDiv {
  template <class E> static constexpr bool valid = floating<E>;
  template <class E> static C<E> apply(C<E> a, C<E> b) { return a / b; }
};
struct FloatRem {
  template <class E> static constexpr bool valid = floating<E>;
  template <class E> static C<E> apply(C<E> a, C<E> b) { return std::fmod(a, b); }
};
/// Truncating division with a non-zero divisor; INT_MIN / -1 wraps.
struct IntDiv {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    if constexpr (E::is_signed)
      if (b == -1) return static_cast<C<E>>(0 - wide<E>(a));
    return static_cast<C<E>>(a / b);
  }
};
struct IntRem {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    if constexpr (E::is_signed)
      if (b == -1) return 0;
    return static_cast<C<E>>(a % b);
  }
};
/// Bitwise and/or of two floats' representations.
template <class T>
T float_bits(T a, T b, bool use_and) {
  using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  const U x = std::bit_cast<U>(a), y = std::bit_cast<U>(b);
  return std::bit_cast<T>(use_and ? x & y : x | y);
}

/// IEEE 754-2019 maximum/minimum: NaN if either is NaN, and +0 > -0 (equal
/// operands combine their sign bits), so the result does not depend on the
/// operand order. Written without branches so that tile loops vectorise.
struct Maximum {
  template <class E> static constexpr bool valid = arithmetic<E>;
  template <class E> static constexpr bool associative = true;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    if constexpr (E::is_float) {
      const C<E> larger = a > b ? a : b;
      const C<E> tie = float_bits(a, b, true);
      const C<E> either = a + b;
      const C<E> ordered = a == b ? tie : larger;
      return (a != a) | (b != b) ? either : ordered;
    } else {
      return a > b ? a : b;
    }
  }
};
struct Minimum {
  template <class E> static constexpr bool valid = arithmetic<E>;
  template <class E> static constexpr bool associative = true;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    if constexpr (E::is_float) {
      const C<E> smaller = a < b ? a : b;
      const C<E> tie = float_bits(a, b, false);
      const C<E> either = a + b;
      const C<E> ordered = a == b ? tie : smaller;
      return (a != a) | (b != b) ? either : ordered;
    } else {
      return a < b ? a : b;
    }
  }
};
struct And {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static constexpr bool associative = true;
  template <class E> static C<E> apply(C<E> a, C<E> b) { return static_cast<C<E>>(a & b); }
};
struct Or {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static constexpr bool associative = true;
  template <class E> static C<E> apply(C<E> a, C<E> b) { return static_cast<C<E>>(a | b); }
};
struct Xor {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static constexpr bool associative = true;
  template <class E> static C<E> apply(C<E> a, C<E> b) { return static_cast<C<E>>(a ^ b); }
};
/// Amounts are unsigned; at or past the width the result is 0 (PTX clamps).
struct Shl {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    const auto amount = static_cast<std::make_unsigned_t<C<E>>>(b);
    if (amount >= static_cast<unsigned>(E::bits)) return 0;
    return static_cast<C<E>>(wide<E>(a) << amount);
  }
};
/// Arithmetic for signed types (sign fill past the width), logical otherwise.
struct Shr {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    const auto amount = static_cast<std::make_unsigned_t<C<E>>>(b);
    if constexpr (E::is_signed) {
      if (amount >= static_cast<unsigned>(E::bits)) return a < 0 ? -1 : 0;
      return static_cast<C<E>>(a >> amount);
    } else {
      if (amount >= static_cast<unsigned>(E::bits)) return 0;
      return static_cast<C<E>>(a >> amount);
    }
  }
};
/// High half of the full unsigned product. Defined on unsigned types only:
/// signed tiles run the unsigned routine (the same bits), because GCC 12
/// vectorises a signed 16-bit instantiation with the signed multiply-high.
struct Umulhi {
  template <class E> static constexpr bool valid = integral<E> && !E::is_signed;
  template <class E> static C<E> apply(C<E> a, C<E> b) {
    using U = std::make_unsigned_t<C<E>>;
    if constexpr (E::is_bool) {
      return 0;
    } else if constexpr (sizeof(U) == 8) {
      const unsigned __int128 p = static_cast<unsigned __int128>(static_cast<U>(a)) * static_cast<U>(b);
      return static_cast<C<E>>(static_cast<U>(p >> 64));
    } else {
      const std::uint64_t p = static_cast<std::uint64_t>(static_cast<U>(a)) * static_cast<U>(b);
      return static_cast<C<E>>(static_cast<U>(p >> E::bits));
    }
  }
};

/// The number of one bits, and of zero bits above the highest one (the
/// width for 0), of the value's bits.
struct Popc {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static C<E> apply(C<E> a) {
    if constexpr (E::is_bool) return a;
    else return static_cast<C<E>>(std::popcount(static_cast<std::make_unsigned_t<C<E>>>(a)));
  }
};
struct Clz {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static C<E> apply(C<E> a) {
    if constexpr (E::is_bool) return !a;
    else return static_cast<C<E>>(std::countl_zero(static_cast<std::make_unsigned_t<C<E>>>(a)));
  }
};

struct Neg {
  template <class E> static constexpr bool valid = arithmetic<E>;
  template <class E> static C<E> apply(C<E> a) {
    if constexpr (E::is_float) return -a;
    else return static_cast<C<E>>(0 - wide<E>(a));
  }
};
struct Not {
  template <class E> static constexpr bool valid = integral<E>;
  template <class E> static C<E> apply(C<E> a) { return static_cast<C<E>>(~a); }
};
struct Abs {
  template <class E> static constexpr bool valid = arithmetic<E>;
  template <class E> static C<E> apply(C<E> a) {
    if constexpr (E::is_float) return std::fabs(a);
    else if constexpr (E::is_signed) return a < 0 ? static_cast<C<E>>(0 - wide<E>(a)) : a;
    else return a;
  }
};

/// +0 for a result below the least normal number of its type, as PTX's
/// `.ftz` flushes it (fast_exp, fast_exp2); other values as they are.
template <class F>
F flush_subnormal(F x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? F(0) : x;
}

#define KILN_MATH(Name, expr)                                     \
  struct Name {                                                   \
    template <class E> static constexpr bool valid = floating<E>; \
    template <class E> static C<E> apply(C<E> x) { return expr; } \
  };
KILN_MATH(Exp, std::exp(x))
KILN_MATH(Exp2, std::exp2(x))
KILN_MATH(FastExp, flush_subnormal(std::exp(x)))
KILN_MATH(FastExp2, flush_subnormal(std::exp2(x)))
KILN_MATH(Log, std::log(x))
KILN_MATH(Log2, std::log2(x))
KILN_MATH(Log1p, std::log1p(x))
KILN_MATH(Sqrt, std::sqrt(x))
KILN_MATH(Rsqrt, 1 / std::sqrt(x))
KILN_MATH(Sin, std::sin(x))
KILN_MATH(Cos, std::cos(x))
KILN_MATH(Tanh, std::tanh(x))
KILN_MATH(Erf, std::erf(x))
KILN_MATH(Floor, std::floor(x))
KILN_MATH(Ceil, std::ceil(x))
KILN_MATH(Expm1, std::expm1(x))
KILN_MATH(Tan, std::tan(x))
KILN_MATH(Atan, std::atan(x))
KILN_MATH(Asin, std::asin(x))
KILN_MATH(Acos, std::acos(x))
KILN_MATH(Sinh, std::sinh(x))
KILN_MATH(Cosh, std::cosh(x))
KILN_MATH(Trunc, std::trunc(x))
KILN_MATH(Round, std::round(x))
// Ties to even: nearbyint in the default rounding mode, round to nearest.
KILN_MATH(Rint, std::nearbyint(x))
KILN_MATH(Asinh, std::asinh(x))
KILN_MATH(Acosh, std::acosh(x))
KILN_MATH(Atanh, std::atanh(x))
KILN_MATH(Log10, std::log10(x))
KILN_MATH(Exp10, std::pow(C<E>(10), x))
KILN_MATH(Cbrt, std::cbrt(x))
KILN_MATH(Erfc, std::erfc(x))
KILN_MATH(Erfinv, static_cast<C<E>>(ir::erfinv(x)))
KILN_MATH(Lgamma, ir::log_gamma(x))
#undef KILN_MATH

#define KILN_MATH2(Name, expr)                                            \
  struct Name {                                                           \
    template <class E> static constexpr bool valid = floating<E>;         \
    template <class E> static C<E> apply(C<E> x, C<E> y) { return expr; } \
  };
KILN_MATH2(Pow, std::pow(x, y))
KILN_MATH2(Atan2, std::atan2(x, y))
KILN_MATH2(Hypot, std::hypot(x, y))
KILN_MATH2(Copysign, std::copysign(x, y))
#undef KILN_MATH2

/// One rounding into f16 and bf16 (computed in f32): rounded to odd into f32
/// first, so that storing rounds as fma.rn.f16/bf16 does. fp8 rounds twice,
/// as the code generator's f32 fma does.
struct Fma {
  template <class E> static constexpr bool valid = floating<E>;
  template <class E> static C<E> apply(C<E> a, C<E> b, C<E> c) {
    if constexpr (std::is_same_v<typename E::S, half> || std::is_same_v<typename E::S, bfloat16>)
      return fused_multiply_add_to_odd(a, b, c);
    else return std::fma(a, b, c);
  }
};

}  // namespace kiln::runtime::interp::ops
