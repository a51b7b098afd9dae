// Chapter 11, "Matmul with bias, GELU and dropout": C = dropout(gelu(A @ B +
// bias)) for f16 A, B and bias, in one kernel whose epilogue is a structural
// template parameter and whose programs walk the tiles of C in groups of tile
// rows; the same result from the unfused sequence of three kernels (matmul
// into f32, bias + GELU, a standalone dropout), both checked element by
// element against a double-precision reference with a bound derived from
// the dtypes and K, and the memory traffic of both.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:epilogue]
/// What the kernel does to the f32 accumulator before its one store. A
/// structural type: a value of it can be a template parameter.
struct Epilogue {
  bool bias = false;     // + bias[column]
  bool gelu = false;     // GELU (the erf form), after the bias
  bool dropout = false;  // dropout, after GELU
};
// [/book:epilogue]

// [book:grouped]
/// The (tile row, tile column) of C that program `pid` computes. The first
/// GROUP_M tile rows form a group, numbered down its rows one column after the
/// other, then the next GROUP_M rows; the last group is shorter when GROUP_M
/// does not divide the number of tile rows.
template <int GROUP_M>
std::pair<kl::i32, kl::i32> grouped_tile(const kl::i32& pid, const kl::i32& tiles_m, const kl::i32& tiles_n) {
  auto programs_per_group = tiles_n * GROUP_M;
  auto first_row = pid / programs_per_group * GROUP_M;
  auto rows_in_group = kl::minimum(tiles_m - first_row, GROUP_M);
  auto within = pid % programs_per_group;
  return {first_row + within % rows_in_group, within / rows_in_group};
}
// [/book:grouped]

// [book:dropout]
/// Dropout of f32 values `y`: element i is kept when the uniform number that
/// Philox draws from (seed, offsets[i]) is at least p, and then scaled by
/// 1 / (1 - p); the others become 0. Nothing is stored between the two uses.
template <kl::Numeric Y, kl::Numeric Offsets>
auto apply_dropout(const Y& y, const kl::i64& seed, const Offsets& offsets, const kl::f32& p) {
  auto kept = kl::rand(seed, offsets) >= p;
  return kl::where(kept, y * (1.0f / (1.0f - p)), 0.0f);
}
// [/book:dropout]

// [book:kernel]
template <class Out, int BLOCK_M, int BLOCK_N, int BLOCK_K, int GROUP_M, Epilogue EPILOGUE>
void matmul(kl::Ptr<kl::f16> a, kl::Ptr<kl::f16> b, kl::Ptr<kl::f16> bias, kl::Ptr<Out> c, kl::i32 m, kl::i32 n,
            kl::i32 k, kl::f32 p, kl::i64 seed) {
  auto [tile_m, tile_n] = grouped_tile<GROUP_M>(kl::program_id(0), kl::cdiv(m, BLOCK_M), kl::cdiv(n, BLOCK_N));
  auto rows = kl::expand_dims<1>(tile_m * BLOCK_M + kl::arange<BLOCK_M>());  // BLOCK_M x 1
  auto cols = kl::expand_dims<0>(tile_n * BLOCK_N + kl::arange<BLOCK_N>());  // 1 x BLOCK_N
  kl::Var acc = kl::zeros<kl::f32, BLOCK_M, BLOCK_N>();
  for (auto k0 : kl::range(0, k, BLOCK_K)) {
    auto k_across = kl::expand_dims<0>(k0 + kl::arange<BLOCK_K>());
    auto k_down = kl::expand_dims<1>(k0 + kl::arange<BLOCK_K>());
    auto a_tile = kl::load(a + rows * k + k_across, (rows < m) & (k_across < k));
    auto b_tile = kl::load(b + k_down * n + cols, (k_down < k) & (cols < n));
    acc = kl::dot(a_tile, b_tile, acc);
  }
  // [/book:kernel]
  // [book:apply]
  kl::Tile<kl::f32, BLOCK_M, BLOCK_N> y = acc;  // the epilogue works on the f32 sums, in registers
  if constexpr (EPILOGUE.bias) y = y + kl::cast<kl::f32>(kl::load(bias + cols, cols < n));
  if constexpr (EPILOGUE.gelu) y = kl::gelu(y);
  if constexpr (EPILOGUE.dropout) y = apply_dropout(y, seed, rows * n + cols, p);  // the offset of (i, j) is i n + j
  kl::store(c + rows * n + cols, kl::cast<Out>(y), (rows < m) & (cols < n));       // C's only trip to memory
}
// [/book:apply]

// [book:unfused]
/// The second kernel of the unfused sequence: out = gelu(x + bias) for the f32 product x.
template <int BLOCK_M, int BLOCK_N>
void bias_gelu(kl::Ptr<kl::f32> x, kl::Ptr<kl::f16> bias, kl::Ptr<kl::f16> out, kl::i32 m, kl::i32 n) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK_N + kl::arange<BLOCK_N>());
  auto mask = (rows < m) & (cols < n);
  auto y = kl::load(x + rows * n + cols, mask) + kl::cast<kl::f32>(kl::load(bias + cols, cols < n));
  kl::store(out + rows * n + cols, kl::cast<kl::f16>(kl::gelu(y)), mask);
}

/// The third: a standalone dropout over `size` elements; element i draws with offset i.
template <int BLOCK>
void dropout(kl::Ptr<kl::f16> x, kl::Ptr<kl::f16> out, kl::i32 size, kl::f32 p, kl::i64 seed) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < size;
  auto y = apply_dropout(kl::cast<kl::f32>(kl::load(x + offsets, mask)), seed, offsets, p);
  kl::store(out + offsets, kl::cast<kl::f16>(y), mask);
}
// [/book:unfused]

// [book:order]
/// Writes, at each tile of C, the number of the program that computes it.
template <int GROUP_M>
void tile_order(kl::Ptr<kl::i32> order, kl::i32 tiles_m, kl::i32 tiles_n) {
  auto [tile_m, tile_n] = grouped_tile<GROUP_M>(kl::program_id(0), tiles_m, tiles_n);
  kl::store(order + tile_m * tiles_n + tile_n, kl::program_id(0));
}
// [/book:order]

// [book:philox]
/// Whether dropout keeps the element with this offset, computed on the host:
/// Philox4x32-10 on the counter (offset, 0, 0, 0) with the seed as its key,
/// the first output turned into a float in [0, 1) as the kernel does.
bool kept_on_host(std::uint64_t seed, std::uint32_t offset, float p) {
  std::array<std::uint32_t, 4> c{offset, 0, 0, 0};
  std::uint32_t key0 = static_cast<std::uint32_t>(seed), key1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t product0 = std::uint64_t{0xD2511F53u} * c[0], product2 = std::uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<std::uint32_t>(product2 >> 32) ^ c[1] ^ key0, static_cast<std::uint32_t>(product2),
         static_cast<std::uint32_t>(product0 >> 32) ^ c[3] ^ key1, static_cast<std::uint32_t>(product0)};
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  const auto bits = std::bit_cast<std::int32_t>(c[0]);
  return static_cast<float>(bits < 0 ? ~bits : bits) * 4.6566127342e-10f >= p;
}
// [/book:philox]

// [book:reference]
/// dropout(gelu(A @ B + bias)) in double, and per element how far a correct
/// kernel's f16 result may be from it. `f16_roundings` is 1 for the fused
/// kernel and 2 for the unfused sequence, which also rounds GELU's output.
struct Reference {
  std::vector<double> value, bound;
};
Reference reference(const std::vector<kl::half>& a, const std::vector<kl::half>& b, const std::vector<kl::half>& bias,
                    int m, int n, int k, float p, std::uint64_t seed, int f16_roundings) {
  const double u = std::numeric_limits<float>::epsilon() / 2, u_f16 = 0x1p-11;
  const double f16_underflow = 0x1p-25;  // half the spacing of f16's subnormals
  auto gamma = [u](double roundings) { return roundings * u / (1 - roundings * u); };
  const double scale = 1 / (1 - double{p});
  Reference r{std::vector<double>(m * n), std::vector<double>(m * n)};
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double x = float(bias[j]), magnitude = std::abs(x);
      for (int t = 0; t < k; ++t) {
        const double term = double{float(a[i * k + t])} * float(b[t * n + j]);  // exact in f32 too
        x += term;
        magnitude += std::abs(term);
      }
      double error = gamma(2 * (k + 1)) * magnitude;  // k + 1 additions, 2u each for tensor cores
      double y = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
      error = 1.13 * error + 8 * u * std::abs(x);  // |gelu'| <= 1.13; GELU's own f32 arithmetic
      if (f16_roundings == 2) error += u_f16 * (std::abs(y) + error) + f16_underflow;
      if (!kept_on_host(seed, static_cast<std::uint32_t>(i * n + j), p)) continue;  // exactly 0, bound 0
      y *= scale;
      error = scale * error + gamma(3) * (std::abs(y) + scale * error);  // 1 / (1 - p) in f32, and the product
      r.value[i * n + j] = y;
      r.bound[i * n + j] = error + u_f16 * (std::abs(y) + error) + f16_underflow;  // the store's rounding to f16
    }
  return r;
}
// [/book:reference]

/// The elements of `got` farther from the reference than their bounds.
int outside(const std::vector<kl::half>& got, const Reference& want) {
  int count = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(float(got[i]) - want.value[i]) <= want.bound[i])) ++count;  // false for NaN too
  return count;
}

int main() {
  // [book:inputs]
  constexpr int kM = 360, kN = 150, kK = 300;  // a multiple of none of the tile sizes
  constexpr float kP = 0.1f;                   // dropout probability
  constexpr std::uint64_t kSeed = 2024;
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> narrow(-0.5f, 0.5f), unit(-1.0f, 1.0f);
  std::vector<kl::half> a(kM * kK), b(kK * kN), bias(kN);
  for (auto& e : a) e = kl::half(narrow(random));
  for (auto& e : b) e = kl::half(narrow(random));
  for (auto& e : bias) e = kl::half(unit(random));
  // [/book:inputs]

  // [book:fused_launch]
  constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kGroupM = 4, kDropoutBlock = 1024;
  constexpr Epilogue kAll{.bias = true, .gelu = true, .dropout = true};
  const int tiles_m = kl::cdiv(kM, kBlockM), tiles_n = kl::cdiv(kN, kBlockN);  // 6 x 3 tiles of C
  auto a_buffer = kl::Buffer<kl::half>::from(a), b_buffer = kl::Buffer<kl::half>::from(b);
  auto bias_buffer = kl::Buffer<kl::half>::from(bias);
  kl::Buffer<kl::half> fused(kM * kN);
  const auto seed = static_cast<std::int64_t>(kSeed);
  kl::compile<matmul<kl::f16, kBlockM, kBlockN, kBlockK, kGroupM, kAll>>().launch(
      kl::Grid(tiles_m * tiles_n), a_buffer, b_buffer, bias_buffer, fused, kM, kN, kK, kP, seed);
  // [/book:fused_launch]

  // [book:unfused_launch]
  kl::Buffer<float> product(kM * kN);
  kl::Buffer<kl::half> activated(kM * kN), unfused(kM * kN);
  kl::compile<matmul<kl::f32, kBlockM, kBlockN, kBlockK, kGroupM, Epilogue{}>>().launch(
      kl::Grid(tiles_m * tiles_n), a_buffer, b_buffer, bias_buffer, product, kM, kN, kK, kP, seed);
  kl::compile<bias_gelu<kBlockM, kBlockN>>().launch(kl::Grid(tiles_m, tiles_n), product, bias_buffer, activated, kM,
                                                    kN);
  kl::compile<dropout<kDropoutBlock>>().launch(kl::Grid(kl::cdiv(kM * kN, kDropoutBlock)), activated, unfused, kM * kN,
                                               kP, seed);
  // [/book:unfused_launch]

  kl::Buffer<int> order(tiles_m * tiles_n);
  kl::compile<tile_order<kGroupM>>().launch(kl::Grid(tiles_m * tiles_n), order, tiles_m, tiles_n);
  const std::vector<int> program_of_tile = order.to_host();

  // [book:check]
  const Reference want_fused = reference(a, b, bias, kM, kN, kK, kP, kSeed, 1);
  const Reference want_unfused = reference(a, b, bias, kM, kN, kK, kP, kSeed, 2);
  int dropped = 0;
  for (int i = 0; i < kM * kN; ++i) dropped += kept_on_host(kSeed, i, kP) ? 0 : 1;
  const int fused_outside = outside(fused.to_host(), want_fused);
  const int unfused_outside = outside(unfused.to_host(), want_unfused);
  // [/book:check]

  // [book:traffic]
  // Bytes each sequence moves, counting A, B and the bias once (as the tiles would be shared in L2).
  const double inputs = (double{kM} * kK + double{kK} * kN + kN) * sizeof(kl::half), mn = double{kM} * kN;
  const double fused_bytes = inputs + mn * sizeof(kl::half);    // C written once
  const double unfused_bytes = inputs + 2 * mn * sizeof(float)  // the f32 product written, then read
                               + 2 * mn * sizeof(kl::half)      // GELU's output written, then read
                               + mn * sizeof(kl::half);         // C written
  // [/book:traffic]

  std::printf("C = dropout(gelu(A @ B + bias)): %d x %d, K = %d; A, B, bias and C f16; p = %.1f\n", kM, kN, kK, kP);
  std::printf("%d programs, one per %d x %d tile of C, in groups of %d tile rows; the program of each tile:\n",
              tiles_m * tiles_n, kBlockM, kBlockN, kGroupM);
  for (int r = 0; r < tiles_m; ++r) {
    for (int c = 0; c < tiles_n; ++c) std::printf("%4d", program_of_tile[r * tiles_n + c]);
    std::printf("\n");
  }
  std::printf("dropout zeroes %d of %d elements\n", dropped, kM * kN);
  std::printf("fused, 1 launch: elements outside their bound: %d\n", fused_outside);
  std::printf("unfused, 3 launches: elements outside their bound: %d\n", unfused_outside);
  std::printf("memory traffic: fused %.0f bytes, unfused %.0f bytes\n", fused_bytes, unfused_bytes);
  return fused_outside == 0 && unfused_outside == 0 ? 0 : 1;
}
