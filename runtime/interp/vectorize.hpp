// Included first by the interpreter's loop-heavy files. GCC's default -O2
// cost model vectorises only loops whose trip count is a known multiple of
// the vector width, which a tile loop over `n` elements never is; the dynamic
// model vectorises them with a scalar epilogue. No-trapping-math lets float
// compares become vector selects (the interpreter never reads FP exception
// flags; results and rounding are unchanged). Coming before every other
// include, the pragma covers the whole translation unit, so inlining is
// unaffected.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif
