// Chapter 20, "Numerics: tolerances from unit roundoff and reduction length":
// the unit roundoff of each float dtype, error bounds for sums and dot
// products, f16 data summed in f16 and in f32, the accuracy of the math
// functions, fp8 saturation, and a bound that catches a real bug. Every kernel
// whose bits depend on the device runs on both `cpu` and `emu`, so the program
// prints the same lines whichever device is the default.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:unit_roundoff]
/// The unit roundoff of a host float type, read off its encoding: the gap
/// from 1 to the next larger value is one ulp at 1, which is 2u.
template <class T>
double unit_roundoff_of() {
  if constexpr (std::is_same_v<T, float>) return (std::nextafter(1.0f, 2.0f) - 1.0f) / 2.0;
  else return (float(T::from_bits(T(1.0f).bits + 1)) - 1.0f) / 2.0;
}
// [/book:unit_roundoff]

// [book:round_trip]
// Each f32 input rounded to a narrower dtype and back: one rounding, nothing else.
template <int BLOCK>
void round_trip(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> f16, kl::Ptr<kl::f32> bf16, kl::Ptr<kl::f32> e4m3,
                kl::Ptr<kl::f32> e5m2) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto v = kl::load(x + offsets);
  kl::store(f16 + offsets, kl::cast<kl::f32>(kl::cast<kl::f16>(v)));
  kl::store(bf16 + offsets, kl::cast<kl::f32>(kl::cast<kl::bf16>(v)));
  kl::store(e4m3 + offsets, kl::cast<kl::f32>(kl::cast<kl::f8e4m3>(v)));
  kl::store(e5m2 + offsets, kl::cast<kl::f32>(kl::cast<kl::f8e5m2>(v)));
}
// [/book:round_trip]

// [book:row_sum]
template <int BLOCK>
void row_sum(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> sums, kl::i32 n) {
  auto cols = kl::arange<BLOCK>();
  auto v = kl::load(x + kl::program_id(0) * n + cols, cols < n);
  kl::store(sums + kl::program_id(0), kl::sum(v, kl::axis<0>));
}
// [/book:row_sum]

// [book:row_sum_bug]
template <int BLOCK>
void row_sum_off_by_one(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> sums, kl::i32 n) {
  auto cols = kl::arange<BLOCK>();
  auto v = kl::load(x + kl::program_id(0) * n + cols, cols < n - 1);  // the bug: the last element is dropped
  kl::store(sums + kl::program_id(0), kl::sum(v, kl::axis<0>));
}
// [/book:row_sum_bug]

// [book:f16_sums]
template <int BLOCK>
void f16_sums(kl::Ptr<kl::f16> x, kl::Ptr<kl::f32> f32_sums, kl::Ptr<kl::f16> f16_sums, kl::Ptr<kl::f16> rounded) {
  auto v = kl::load(x + kl::program_id(0) * BLOCK + kl::arange<BLOCK>());
  auto wide = kl::sum(v, kl::axis<0>);                                             // f16 data, f32 partial sums
  auto narrow = kl::reduce(v, kl::axis<0>, [](auto a, auto b) { return a + b; });  // every partial sum in f16
  kl::store(f32_sums + kl::program_id(0), wide);
  kl::store(f16_sums + kl::program_id(0), narrow);
  kl::store(rounded + kl::program_id(0), kl::cast<kl::f16>(wide));  // f32 sums, rounded to f16 once at the end
}
// [/book:f16_sums]

// [book:dot]
template <int M, int N, int K, kl::Precision P>
void dot_f32(kl::Ptr<kl::f32> a, kl::Ptr<kl::f32> b, kl::Ptr<kl::f32> c) {
  auto rows = kl::expand_dims<1>(kl::arange<M>());
  auto cols = kl::expand_dims<0>(kl::arange<N>());
  auto ks = kl::arange<K>();
  auto a_tile = kl::load(a + rows * K + kl::expand_dims<0>(ks));
  auto b_tile = kl::load(b + kl::expand_dims<1>(ks) * N + cols);
  kl::store(c + rows * N + cols, kl::dot(a_tile, b_tile, kl::zeros<kl::f32, M, N>(), {.precision = P}));
}
// [/book:dot]

// [book:math]
template <int BLOCK>
void math(kl::Ptr<kl::f32> wide, kl::Ptr<kl::f32> positive, kl::Ptr<kl::f32> small, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto i = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto w = kl::load(wide + i), p = kl::load(positive + i), s = kl::load(small + i);
  kl::store(out + i, kl::exp(w));  // the results of function f are out[f * n + i]
  kl::store(out + n + i, kl::exp(s));
  kl::store(out + 2 * n + i, kl::log(p));
  kl::store(out + 3 * n + i, kl::sqrt(p));
  kl::store(out + 4 * n + i, kl::sin(s));
  kl::store(out + 5 * n + i, kl::tanh(s));
  kl::store(out + 6 * n + i, kl::erf(s));
}
// [/book:math]

// [book:fp8]
template <int BLOCK>
void to_fp8(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> e4m3, kl::Ptr<kl::f32> e5m2) {
  auto i = kl::arange<BLOCK>();
  auto v = kl::load(x + i);
  kl::store(e4m3 + i, kl::cast<kl::f32>(kl::cast<kl::f8e4m3>(v)));
  kl::store(e5m2 + i, kl::cast<kl::f32>(kl::cast<kl::f8e5m2>(v)));
}
// [/book:fp8]

// [book:ulp]
/// The spacing of the floats at |r|: one ulp of an f32 result near r.
double ulp_at(double r) {
  const float f = std::max(std::abs(static_cast<float>(r)), std::numeric_limits<float>::min());
  return std::nextafter(f, INFINITY) - f;
}
// [/book:ulp]

const kl::Device kDevices[] = {kl::Device::cpu(), kl::Device::emu()};
const char* const kNames[] = {"cpu", "emu"};

// One rounding to each narrow dtype: the largest error in u, and how often rtol = 1e-5 fails.
bool unit_roundoffs(std::mt19937& random) {
  // [book:roundoff_inputs]
  constexpr int kBlock = 1024, kPrograms = 64, kN = kBlock * kPrograms;
  std::uniform_real_distribution<float> exponent(-1.0f, 6.0f);  // magnitudes 0.5 to 64: normal in every dtype
  std::vector<float> x(kN);
  for (int i = 0; i < kN; ++i) x[i] = (i % 2 == 0 ? 1.0f : -1.0f) * std::exp2(exponent(random));
  // [/book:roundoff_inputs]
  auto in = kl::Buffer<float>::from(x);
  kl::Buffer<float> f16(kN), bf16(kN), e4m3(kN), e5m2(kN);
  kl::compile<round_trip<kBlock>>().launch(kl::Grid(kPrograms), in, f16, bf16, e4m3, e5m2);
  // [book:roundoff_check]
  const double u[] = {unit_roundoff_of<float>(), unit_roundoff_of<kl::half>(), unit_roundoff_of<kl::bfloat16>(),
                      unit_roundoff_of<kl::float8_e4m3>(), unit_roundoff_of<kl::float8_e5m2>()};
  const std::vector<float> rounded[] = {x, f16.to_host(), bf16.to_host(), e4m3.to_host(), e5m2.to_host()};
  const char* dtypes[] = {"f32", "f16", "bf16", "f8e4m3", "f8e5m2"};
  bool ok = true;
  std::printf("dtype   unit roundoff u      largest error of one rounding   outside rtol = 1e-5\n");
  for (int d = 0; d < 5; ++d) {
    double worst = 0;
    int outside = 0;
    for (int i = 0; i < kN; ++i) {
      const double error = std::abs(double{rounded[d][i]} - x[i]) / std::abs(x[i]);
      worst = std::max(worst, error);
      outside += error <= 1e-5 ? 0 : 1;
    }
    ok = ok && worst <= u[d];
    if (d == 0) std::printf("%-7s 2^%d = %.2e   (the inputs are f32)\n", dtypes[d], std::ilogb(u[d]), u[d]);
    else
      std::printf("%-7s 2^%d = %.2e   %.3f u                         %5.1f%%\n", dtypes[d], std::ilogb(u[d]), u[d],
                  worst / u[d], 100.0 * outside / kN);
  }
  // [/book:roundoff_check]
  return ok;
}

// Row sums of f32 data on both devices, against the bound gamma(n - 1) * sum |x|; then an off-by-one bug.
bool sums(std::mt19937& random) {
  // [book:sum_inputs]
  constexpr int kRows = 64, kCols = 4096;
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);  // random signs: the sums cancel
  std::vector<float> x(kRows * kCols);
  for (float& e : x) e = uniform(random);
  std::vector<double> exact(kRows), magnitude(kRows);  // sum x and sum |x|, in double
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) {
      exact[r] += x[r * kCols + c];
      magnitude[r] += std::abs(x[r * kCols + c]);
    }
  // [/book:sum_inputs]
  // [book:sum_bound]
  const double u = unit_roundoff_of<float>();
  const double gamma = (kCols - 1) * u / (1 - (kCols - 1) * u);  // n - 1 roundings, in any order
  // Row r may differ from its exact sum by gamma * magnitude[r]; the double reference's own error is ~1e-9 of that.
  // [/book:sum_bound]
  bool ok = true;
  std::vector<float> got[2];
  std::printf("\nrow sums of %d f32 values in [-1, 1], %d rows; bound %.0f u * sum|x|\n", kCols, kRows, gamma / u);
  // [book:sum_devices]
  for (int d = 0; d < 2; ++d) {
    auto in = kl::Buffer<float>::from(x, kDevices[d]);
    kl::Buffer<float> out(kRows, kDevices[d]);
    kl::compile<row_sum<kCols>>().launch(kl::Grid(kRows), in, out, kCols);
    got[d] = out.to_host();
    double worst = 0;
    int outside = 0, outside_rtol = 0;
    for (int r = 0; r < kRows; ++r) {
      const double error = std::abs(got[d][r] - exact[r]);
      worst = std::max(worst, error / (u * magnitude[r]));
      outside += error <= gamma * magnitude[r] ? 0 : 1;
      outside_rtol += error <= 1e-5 * std::abs(exact[r]) ? 0 : 1;  // relative to the result: wrong
    }
    ok = ok && outside == 0;
    std::printf("%s: largest error %.2f u * sum|x|; rows outside the bound %d, outside rtol = 1e-5 of the sum %d\n",
                kNames[d], worst, outside, outside_rtol);
  }
  // [/book:sum_devices]
  // [book:sum_compare]
  int differ = 0;
  double most_ulps = 0, least_ratio = INFINITY, most_ratio = 0;
  for (int r = 0; r < kRows; ++r) {
    differ += got[0][r] != got[1][r] ? 1 : 0;
    most_ulps = std::max(most_ulps, std::abs(double{got[0][r]} - got[1][r]) / ulp_at(exact[r]));
    least_ratio = std::min(least_ratio, magnitude[r] / std::abs(exact[r]));
    most_ratio = std::max(most_ratio, magnitude[r] / std::abs(exact[r]));
  }
  std::printf("sum|x| / |sum x| ranges from %.0f to %.0f\n", least_ratio, most_ratio);
  std::printf("cpu and emu sums differ in %d of %d rows, by up to %.0f ulp of the sum\n", differ, kRows, most_ulps);
  // [/book:sum_compare]
  // [book:sum_bug]
  auto in = kl::Buffer<float>::from(x);
  kl::Buffer<float> out(kRows);
  kl::compile<row_sum_off_by_one<kCols>>().launch(kl::Grid(kRows), in, out, kCols);
  const std::vector<float> buggy = out.to_host();
  int caught = 0;
  for (int r = 0; r < kRows; ++r) caught += std::abs(buggy[r] - exact[r]) <= gamma * magnitude[r] ? 0 : 1;
  std::printf("the off-by-one kernel: %d of %d rows outside the bound\n", caught, kRows);
  // [/book:sum_bug]
  return ok && caught > 0;
}

// f16 data summed with f32 and with f16 partial sums, on both devices.
bool f16_accumulation(std::mt19937& random) {
  // [book:f16_inputs]
  constexpr int kRows = 64, kCols = 8192;
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);  // positive: sum|x| = sum x, no cancellation
  std::vector<kl::half> x(kRows * kCols);
  for (auto& e : x) e = kl::half(uniform(random));
  std::vector<double> exact(kRows);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) exact[r] += float(x[r * kCols + c]);
  // [/book:f16_inputs]
  const double u32 = unit_roundoff_of<float>(), u16 = unit_roundoff_of<kl::half>();
  // [book:f16_bounds]
  const double f32_bound = (kCols - 1) * u32 / (1 - (kCols - 1) * u32);  // relative: the terms are positive
  const double rounded_bound = f32_bound + u16;                          // and one rounding to f16 at the end
  const double f16_nu = (kCols - 1) * u16;  // >= 1: gamma(n - 1) for f16 partial sums bounds nothing
  // [/book:f16_bounds]
  std::printf("\nsums of %d f16 values in [0, 1), %d rows; (n - 1) u for f16 partial sums = %.1f\n", kCols, kRows,
              f16_nu);
  std::printf(
      "     largest relative error: f32 partial sums (bound %.1e)   f16 partial sums   f32, stored as f16"
      " (bound %.1e)\n",
      f32_bound, rounded_bound);
  bool ok = true;
  for (int d = 0; d < 2; ++d) {
    auto in = kl::Buffer<kl::half>::from(x, kDevices[d]);
    kl::Buffer<float> wide(kRows, kDevices[d]);
    kl::Buffer<kl::half> narrow(kRows, kDevices[d]), rounded(kRows, kDevices[d]);
    kl::compile<f16_sums<kCols>>().launch(kl::Grid(kRows), in, wide, narrow, rounded);
    const std::vector<float> w = wide.to_host();
    const std::vector<kl::half> n = narrow.to_host(), h = rounded.to_host();
    double worst[3] = {0, 0, 0};
    for (int r = 0; r < kRows; ++r) {
      worst[0] = std::max(worst[0], std::abs(w[r] - exact[r]) / exact[r]);
      worst[1] = std::max(worst[1], std::abs(float(n[r]) - exact[r]) / exact[r]);
      worst[2] = std::max(worst[2], std::abs(float(h[r]) - exact[r]) / exact[r]);
    }
    ok = ok && worst[0] <= f32_bound && worst[2] <= rounded_bound && worst[1] > f32_bound;
    std::printf("%s  %.1e                                  %.1e            %.1e\n", kNames[d], worst[0], worst[1],
                worst[2]);
  }
  return ok;
}

// A K = 256 dot product of f32 inputs at each precision, against its own bound.
bool dots(std::mt19937& random) {
  constexpr int kM = 16, kN = 16, kK = 256;
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(kM * kK), b(kK * kN);
  for (float& e : a) e = uniform(random);
  for (float& e : b) e = uniform(random);
  std::vector<double> exact(kM * kN), magnitude(kM * kN);  // sum a b and sum |a b|
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j)
      for (int t = 0; t < kK; ++t) {
        const double p = double{a[i * kK + t]} * b[t * kN + j];
        exact[i * kN + j] += p;
        magnitude[i * kN + j] += std::abs(p);
      }
  // [book:dot_bounds]
  const double u = unit_roundoff_of<float>(), u_tf32 = 0x1p-11;  // tf32 keeps 10 of f32's 23 mantissa bits
  auto gamma = [u](double n) { return n * u / (1 - n * u); };
  const double bound[] = {
      gamma(kK),                            // ieee: K fused multiply-adds, one rounding each
      2 * u_tf32 + gamma(kK),               // tf32: each input rounded once, products exact in f32
      4 * u_tf32 * u_tf32 + gamma(3 * kK),  // tf32x3: the dropped tail products, then 3K additions
  };
  // [/book:dot_bounds]
  const char* precisions[] = {"ieee", "tf32", "tf32x3"};
  std::printf("\ndot products of length %d, f32 inputs in [-1, 1]: largest error in u * sum|a b|\n", kK);
  double worst[3][2] = {};
  for (int d = 0; d < 2; ++d) {
    auto a_buffer = kl::Buffer<float>::from(a, kDevices[d]);
    auto b_buffer = kl::Buffer<float>::from(b, kDevices[d]);
    kl::Buffer<float> c[3] = {kl::Buffer<float>(kM * kN, kDevices[d]), kl::Buffer<float>(kM * kN, kDevices[d]),
                              kl::Buffer<float>(kM * kN, kDevices[d])};
    kl::compile<dot_f32<kM, kN, kK, kl::Precision::ieee>>().launch(kl::Grid(1), a_buffer, b_buffer, c[0]);
    kl::compile<dot_f32<kM, kN, kK, kl::Precision::tf32>>().launch(kl::Grid(1), a_buffer, b_buffer, c[1]);
    kl::compile<dot_f32<kM, kN, kK, kl::Precision::tf32x3>>().launch(kl::Grid(1), a_buffer, b_buffer, c[2]);
    for (int p = 0; p < 3; ++p) {
      const std::vector<float> got = c[p].to_host();
      for (int i = 0; i < kM * kN; ++i)
        worst[p][d] = std::max(worst[p][d], std::abs(got[i] - exact[i]) / (u * magnitude[i]));
    }
  }
  bool ok = true;
  for (int p = 0; p < 3; ++p) {
    ok = ok && worst[p][0] * u <= bound[p] && worst[p][1] * u <= bound[p];
    std::printf("%-7s bound %5.0f u   cpu %7.2f u   emu %7.2f u\n", precisions[p], bound[p] / u, worst[p][0],
                worst[p][1]);
  }
  return ok && worst[1][0] * u > bound[0];  // tf32 is outside the ieee bound
}

// The math functions in f32, against double, in ulps, on both devices.
bool math_functions(std::mt19937& random) {
  constexpr int kBlock = 1024, kPrograms = 16, kN = kBlock * kPrograms;
  std::uniform_real_distribution<float> wide(-80.0f, 80.0f), positive(0.0f, 100.0f), small(-4.0f, 4.0f);
  std::vector<float> w(kN), p(kN), s(kN);
  for (int i = 0; i < kN; ++i) {
    w[i] = wide(random);
    p[i] = positive(random);
    s[i] = small(random);
  }
  if (p[0] == 0) p[0] = 1;  // log(0) is -inf: no ulps to count
  struct Function {
    const char* name;
    const std::vector<float>* x;
    double (*reference)(double);
    double ulps;      // the GPU code's error, in ulps
    double relative;  // and a further relative error per unit of |x|: exp rounds x * log2(e), and log2(e) itself
  };
  // [book:math_bounds]
  const Function functions[] = {
      {"exp on [-80, 80]", &w, [](double v) { return std::exp(v); }, 2, 1.25 * 0x1p-24},
      {"exp on [-4, 4]", &s, [](double v) { return std::exp(v); }, 2, 1.25 * 0x1p-24},
      {"log on (0, 100]", &p, [](double v) { return std::log(v); }, 4, 0},
      {"sqrt on (0, 100]", &p, [](double v) { return std::sqrt(v); }, 0.5, 0},
      {"sin on [-4, 4]", &s, [](double v) { return std::sin(v); }, 2, 0},
      {"tanh on [-4, 4]", &s, [](double v) { return std::tanh(v); }, 2, 0},
      {"erf on [-4, 4]", &s, [](double v) { return std::erf(v); }, 2, 0},
  };
  // [/book:math_bounds]
  double worst[7][2] = {};
  bool ok = true;
  for (int d = 0; d < 2; ++d) {
    auto wb = kl::Buffer<float>::from(w, kDevices[d]);
    auto pb = kl::Buffer<float>::from(p, kDevices[d]);
    auto sb = kl::Buffer<float>::from(s, kDevices[d]);
    kl::Buffer<float> out(7 * kN, kDevices[d]);
    kl::compile<math<kBlock>>().launch(kl::Grid(kPrograms), wb, pb, sb, out, kN);
    const std::vector<float> got = out.to_host();
    for (int f = 0; f < 7; ++f)
      for (int i = 0; i < kN; ++i) {
        const double x = (*functions[f].x)[i], want = functions[f].reference(x);
        const double ulps = std::abs(got[f * kN + i] - want) / ulp_at(want);
        worst[f][d] = std::max(worst[f][d], ulps);
        const double allowed = functions[f].ulps + functions[f].relative * std::abs(x) * std::abs(want) / ulp_at(want);
        ok = ok && ulps <= allowed;
      }
  }
  std::printf("\nmath functions in f32: largest error against double, in ulps, rounded up\n");
  for (int f = 0; f < 7; ++f)
    std::printf("%-17s cpu %3.0f   emu %3.0f\n", functions[f].name, std::ceil(worst[f][0]), std::ceil(worst[f][1]));
  return ok;
}

// What f32 values become in each fp8 format, on both devices.
bool fp8_range() {
  // [book:fp8_values]
  const std::vector<float> x = {0.3f,     240.0f,   448.0f, 464.0f,  465.0f,   1000.0f,  57344.0f, 61439.0f,
                                61440.0f, INFINITY, NAN,    0x1p-9f, 0x1p-10f, 0x1p-16f, 0x1p-17f, -1000.0f};
  // [/book:fp8_values]
  std::vector<float> got[2][2];
  for (int d = 0; d < 2; ++d) {
    auto in = kl::Buffer<float>::from(x, kDevices[d]);
    kl::Buffer<float> e4m3(x.size(), kDevices[d]), e5m2(x.size(), kDevices[d]);
    kl::compile<to_fp8<16>>().launch(kl::Grid(1), in, e4m3, e5m2);
    got[d][0] = e4m3.to_host();
    got[d][1] = e5m2.to_host();
  }
  bool same = true;
  for (int f = 0; f < 2; ++f)
    for (std::size_t i = 0; i < x.size(); ++i)
      same = same && (got[0][f][i] == got[1][f][i] || (std::isnan(got[0][f][i]) && std::isnan(got[1][f][i])));
  std::printf("\nf32 value    as f8e4m3    as f8e5m2\n");
  for (std::size_t i = 0; i < x.size(); ++i) std::printf("%-12g %-12g %g\n", x[i], got[0][0][i], got[0][1][i]);
  std::printf("cpu and emu agree on every value: %s\n", same ? "yes" : "NO");
  // Overflow and infinity saturate at the largest finite value (448, 57344); NaN stays NaN.
  return same && got[0][0][4] == 448.0f && got[0][0][9] == 448.0f && got[0][0][15] == -448.0f &&
         got[0][1][8] == 57344.0f && got[0][1][9] == 57344.0f && std::isnan(got[0][0][10]) && std::isnan(got[0][1][10]);
}

int main() {
  std::mt19937 random(2024);
  bool ok = unit_roundoffs(random);
  ok = sums(random) && ok;
  ok = f16_accumulation(random) && ok;
  ok = dots(random) && ok;
  ok = math_functions(random) && ok;
  ok = fp8_range() && ok;
  std::printf("\nevery check: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
