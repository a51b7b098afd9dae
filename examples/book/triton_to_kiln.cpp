// Chapter 25, "Triton to kiln": the kiln side of every row of the chapter's
// tables, in eight kernels that run on random input and are checked against
// plain C++. A table cell is copied from the `row_…` region it names, and
// scripts/book_table.py checks that it still is.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kl = kiln;

// [book:rows]
// Each program takes BLOCK_M rows of an m x n matrix (n <= BLOCK_N) and
// computes, per row, its log-softmax, the running sum of its sigmoid (stored
// as f16) and its argmax.
// [book:row_signature]
template <int BLOCK_M, int BLOCK_N>
void rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> log_softmax, kl::Ptr<kl::f16> gate_sums, kl::Ptr<kl::i32> argmax,
          kl::i32 m, kl::i32 n) {
  // [/book:row_signature]
  // [book:row_index]
  auto row_ids = kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>();
  auto col_ids = kl::arange<BLOCK_N>();
  auto r = kl::expand_dims<1>(row_ids);  // BLOCK_M x 1
  auto c = kl::expand_dims<0>(col_ids);  // 1 x BLOCK_N
  auto mask = (r < m) & (c < n);         // BLOCK_M x BLOCK_N
  // [/book:row_index]
  // [book:row_softmax]
  auto v = kl::load(x + r * n + c, mask, {.other = -INFINITY});
  auto shifted = v - kl::max(v, kl::axis<1>, kl::keep_dims);
  auto lse = kl::log(kl::sum(kl::exp(shifted), kl::axis<1>, kl::keep_dims));
  kl::store(log_softmax + r * n + c, shifted - lse, mask);
  // [/book:row_softmax]
  // [book:row_static_print]
  kl::static_print("v", v);  // while tracing: "v tile<8x64xf32>"
  // [/book:row_static_print]
  // [book:row_gate]
  auto gate = kl::where(mask, kl::sigmoid(v), 0.0f);
  kl::store(gate_sums + r * n + c, kl::cast<kl::f16>(kl::cumsum(gate, kl::axis<1>)), mask);
  kl::store(argmax + row_ids, kl::argmax(v, kl::axis<1>), row_ids < m);
  // [/book:row_gate]
}
// [/book:rows]
// [book:row_names]
KILN_PARAMETERS(rows, "x", "log_softmax", "gate_sums", "argmax", "m", "n");
// [/book:row_names]

// C = A @ Bt^T for f16 A (m x k) and Bt (n x k), one program per block of C:
// A is read through a block pointer, Bt through a tile of pointers, and C is
// written through a block pointer. The column sums of C are added up across
// programs, and every program tries to write its number into `winner`:
// seen[program] is what it found there.
template <int BLOCK_M, int BLOCK_N, int BLOCK_K>
void matmul_bt(kl::Ptr<kl::f16> a, kl::Ptr<kl::f16> bt, kl::Ptr<kl::f32> c, kl::Ptr<kl::f32> col_sums,
               kl::Ptr<kl::i32> winner, kl::Ptr<kl::i32> seen, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto row0 = kl::program_id(0) * BLOCK_M, col0 = kl::program_id(1) * BLOCK_N;
  auto col_ids = col0 + kl::arange<BLOCK_N>();
  auto bt_rows = kl::expand_dims<1>(col_ids);  // row j of Bt is column j of B
  // [book:row_hints]
  auto row_length = kl::multiple_of<8>(k);  // rows of 8 halves: each starts 16-byte aligned
  // [/book:row_hints]
  // [book:row_block_ptr]
  kl::Var a_block = kl::make_block_ptr<BLOCK_M, BLOCK_K>(a, {m, k}, {k, 1}, {row0, 0});
  // [/book:row_block_ptr]
  // [book:row_loop]
  kl::Var acc = kl::zeros<kl::f32, BLOCK_M, BLOCK_N>();
  for (auto k0 : kl::range(0, k, BLOCK_K)) {
    auto ks = kl::expand_dims<0>(k0 + kl::arange<BLOCK_K>());
    auto a_tile = kl::load(a_block, {.boundary_check = {0, 1}});                                 // BLOCK_M x BLOCK_K
    auto bt_tile = kl::load(bt + bt_rows * row_length + ks, (bt_rows < n) & (ks < row_length));  // BLOCK_N x BLOCK_K
    acc = kl::dot(a_tile, kl::trans(bt_tile), acc);
    a_block = kl::advance(a_block, {0, BLOCK_K});
  }
  // [/book:row_loop]
  // [book:row_block_store]
  kl::store(kl::make_block_ptr<BLOCK_M, BLOCK_N>(c, {m, n}, {n, 1}, {row0, col0}), acc, {.boundary_check = {0, 1}});
  // [/book:row_block_store]
  // [book:row_atomics]
  kl::atomic_add(col_sums + col_ids, kl::sum(acc, kl::axis<0>), col_ids < n, {.order = kl::MemoryOrder::relaxed});
  auto program = kl::program_id(0) * kl::num_programs(1) + kl::program_id(1);
  kl::store(seen + program, kl::atomic_cas(winner, -1, program));
  // [/book:row_atomics]
}

// Rotates each pair (x[2i], x[2i + 1]) by the angle i * theta; with DROPOUT,
// then zeroes each element with probability p and scales the others by
// 1 / (1 - p). The programs walk the pairs in a grid-stride loop.
template <int BLOCK, bool DROPOUT>
void rotate_pairs(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 pairs, kl::f32 theta, kl::f32 p, kl::i32 seed) {
  // [book:row_static]
  static_assert(BLOCK >= 16, "rotate_pairs: BLOCK must be at least 16");
  for (auto start : kl::range(kl::program_id(0) * BLOCK, pairs, kl::num_programs(0) * BLOCK)) {
    // [/book:row_static]
    auto i = start + kl::arange<BLOCK>();
    // [book:row_pairs]
    auto offsets = kl::reshape<2 * BLOCK>(kl::join(2 * i, 2 * i + 1));  // 2i, 2i + 1, 2i', 2i' + 1, ...
    auto mask = offsets < 2 * pairs;
    auto [even, odd] = kl::split(kl::reshape<BLOCK, 2>(kl::load(x + offsets, mask)));
    auto angle = kl::cast<kl::f32>(i) * theta;
    auto c = kl::cos(angle), s = kl::sin(angle);
    auto y = kl::reshape<2 * BLOCK>(kl::join(kl::fma(even, c, -odd * s), kl::fma(even, s, odd * c)));
    if constexpr (DROPOUT) y = kl::where(kl::rand(seed, offsets) >= p, y / (1.0f - p), 0.0f);
    // [/book:row_pairs]
    // [book:row_contiguous]
    auto pair_offsets = kl::multiple_of<2>(kl::max_contiguous<2>(offsets));  // pairs from even offsets
    // [/book:row_contiguous]
    kl::store(out + pair_offsets, y, mask);
  }
}

// One program per row of BLOCK positive numbers: reverses the row in place,
// stores its running maximum and its product, and finds for each element by
// binary search how many of the N_EDGES sorted `edges` are at most it.
template <int BLOCK, int N_EDGES>
void flip_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> running_max, kl::Ptr<kl::f32> product, kl::Ptr<kl::f32> edges,
               kl::Ptr<kl::i32> bucket) {
  auto row = kl::program_id(0);
  auto cols = kl::arange<BLOCK>();
  auto v = kl::load(x + row * BLOCK + cols);
  // [book:row_debug]
  kl::device_assert(v > 0.0f, "x must be positive");
  kl::debug_barrier();  // every element of the row is loaded before any is overwritten
  kl::store(x + row * BLOCK + (BLOCK - 1) - cols, v);
  kl::if_(row == 0, [&] { kl::device_print("programs", kl::num_programs(0)); });
  auto maxima = kl::associative_scan(v, kl::axis<0>, [](auto a, auto b) { return kl::maximum(a, b); });
  auto p = kl::reduce(v, kl::axis<0>, [](auto a, auto b) { return a * b; });
  // [/book:row_debug]
  kl::store(running_max + row * BLOCK + cols, maxima);
  kl::store(product + row, p);
  // [book:row_while]
  kl::Var lo = kl::zeros<kl::i32, BLOCK>();
  kl::Var hi = kl::full<kl::i32, BLOCK>(N_EDGES);
  kl::while_([&] { return kl::max(hi - lo) > 0; },
             [&] {
               auto mid = (lo + hi) / 2;
               // Where lo == hi the search is over: mid may be N_EDGES, and right must be false.
               auto right = kl::load(edges + mid, lo < hi, {.other = INFINITY}) <= v;
               lo = kl::where(right, mid + 1, lo);
               hi = kl::where(right, hi, mid);
             });
  // [/book:row_while]
  kl::store(bucket + row * BLOCK + cols, lo);
}

// Polar coordinates of points (x, y), NaN where a coordinate is missing:
// the angle in whole degrees (ties to even), and the distance from the
// origin raised to `power`; -1 for both where a coordinate is NaN.
template <int BLOCK>
void polar(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> y, kl::Ptr<kl::f32> degrees, kl::Ptr<kl::f32> scaled, kl::i32 n,
           kl::f32 power) {
  // [book:row_return]
  kl::return_if(kl::program_id(0) * BLOCK >= n);  // the whole block lies past the end
  // [/book:row_return]
  auto i = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = i < n;
  auto px = kl::load(x + i, mask), py = kl::load(y + i, mask);
  // [book:row_polar]
  auto angle = kl::rint(kl::div_rn(kl::atan2(py, px) * 180.0f, 3.14159265f));
  auto radius_power = kl::pow(px * px + py * py, power / 2);
  auto missing = kl::isnan(px) | kl::isnan(py);
  // [/book:row_polar]
  kl::store(degrees + i, kl::where(missing, -1.0f, angle), mask);
  kl::store(scaled + i, kl::where(missing, -1.0f, radius_power), mask);
}

// One program per row of an m x n matrix, any n: the row's Euclidean norm,
// BLOCK columns at a time, in a loop unrolled by 4.
template <int BLOCK>
void row_norms(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> norms, kl::i32 n) {
  auto row = kl::program_id(0);
  kl::Var squares = kl::zeros<kl::f32, BLOCK>();
  // [book:row_unroll]
  for (auto c0 : kl::range(0, n, BLOCK, {.unroll = 4})) {
    // [/book:row_unroll]
    auto c = c0 + kl::arange<BLOCK>();
    auto v = kl::load(x + row * n + c, c < n);
    squares = squares + v * v;
  }
  kl::store(norms + row, kl::sqrt(kl::sum(squares)));
}

// tanh through the GPU's approximate instruction, std::tanh (its host
// reference) on the cpu and emu devices.
float host_tanh(float v) { return std::tanh(v); }

template <int BLOCK>
void fast_tanh(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto i = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = i < n;
  auto v = kl::load(x + i, mask);
  // [book:row_inline_asm]
  auto t = kl::inline_asm_elementwise<kl::f32>("tanh.approx.f32 $0, $1;", "=f,f", kl::asm_args(v), host_tanh);
  // [/book:row_inline_asm]
  kl::store(out + i, t, mask);
}

// Normal quantiles of uniform numbers and Poisson log-probabilities of
// counts, through two of libdevice's special functions.
template <int BLOCK>
void quantiles(kl::Ptr<kl::f32> uniforms, kl::Ptr<kl::f32> counts, kl::Ptr<kl::f32> normal, kl::Ptr<kl::f32> log_pmf,
               kl::f32 rate, kl::i32 n) {
  auto i = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = i < n;
  auto u = kl::load(uniforms + i, mask), k = kl::load(counts + i, mask);
  // [book:row_libdevice]
  auto z = 1.41421356f * kl::erfinv(2.0f * u - 1.0f);
  auto log_p = k * kl::log(rate) - rate - kl::lgamma(k + 1.0f);
  // [/book:row_libdevice]
  kl::store(normal + i, z, mask);
  kl::store(log_pmf + i, log_p, mask);
}

std::mt19937 random_engine(2024);
std::vector<float> uniform(std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> distribution(lo, hi);
  std::vector<float> v(n);
  for (float& e : v) e = distribution(random_engine);
  return v;
}

std::vector<kl::half> halves(const std::vector<float>& v) { return std::vector<kl::half>(v.begin(), v.end()); }

int failures = 0;
void report(const std::string& what, int outside) {
  std::printf("%s: %s\n", what.c_str(), outside == 0 ? "ok" : "FAILED");
  failures += outside != 0;
}

int main() {
  const double u = std::numeric_limits<float>::epsilon() / 2, u16 = 1.0 / 2048;  // unit roundoff of f32, f16
  {  // rows: 37 rows of 50, 8 rows per program
    constexpr int kM = 37, kN = 50, kBlockM = 8, kBlockN = 64;
    const std::vector<float> host = uniform(kM * kN, -4, 4);
    // [book:row_buffers]
    auto x = kl::Buffer<float>::from(host);
    kl::Buffer<float> log_softmax(kM * kN);
    kl::Buffer<kl::half> gate_sums(kM * kN);
    kl::Buffer<int> argmax(kM);
    // [/book:row_buffers]
    // [book:row_launch]
    kl::CompileOptions options;
    options.num_warps = 2;
    auto kernel = kl::compile<rows<kBlockM, kBlockN>>(options);
    kernel.launch(kl::Grid(kl::cdiv(kM, kBlockM)), x, log_softmax, gate_sums, argmax, kM, kN);
    const std::vector<float> result = log_softmax.to_host();
    // [/book:row_launch]
    const std::vector<kl::half> sums = gate_sums.to_host();
    const std::vector<int> index = argmax.to_host();
    int outside = 0;
    for (int i = 0; i < kM; ++i) {
      const float* row = &host[i * kN];
      const double max = *std::max_element(row, row + kN);
      double total = 0, running = 0;
      for (int j = 0; j < kN; ++j) total += std::exp(row[j] - max);
      for (int j = 0; j < kN; ++j) {
        // exp, log and sigmoid within a few ulps, sums of j + 1 or n terms: u * (n + 20) covers all of it.
        const double want = row[j] - max - std::log(total);
        outside += !(std::abs(result[i * kN + j] - want) <= u * (kN + 20) * (1 + std::abs(want)));
        running += 1 / (1 + std::exp(-double{row[j]}));
        outside += !(std::abs(float(sums[i * kN + j]) - running) <= (u * (j + 20) + u16) * running);
      }
      outside += index[i] != std::max_element(row, row + kN) - row;
    }
    report("rows: log-softmax, running sums of the sigmoid and argmax of 37 rows of 50", outside);
  }
  {  // matmul_bt: C = A @ B^T, 50 x 40 with k = 72, in blocks of 32 x 32
    constexpr int kM = 50, kN = 40, kK = 72, kBlock = 32;
    const std::vector<kl::half> a = halves(uniform(kM * kK, -1, 1)), bt = halves(uniform(kN * kK, -1, 1));
    auto a_buffer = kl::Buffer<kl::half>::from(a), bt_buffer = kl::Buffer<kl::half>::from(bt);
    kl::Buffer<float> c(kM * kN), col_sums(kN);
    auto winner = kl::Buffer<int>::from(std::vector<int>{-1});
    kl::Buffer<int> seen(4);
    // [book:row_grid]
    kl::CompileOptions options;
    options.num_stages = 2;
    const kl::Grid grid(kl::cdiv(kM, kBlock), kl::cdiv(kN, kBlock));
    kl::compile<matmul_bt<kBlock, kBlock, kBlock>>(options).launch(grid, a_buffer, bt_buffer, c, col_sums, winner, seen,
                                                                   kM, kN, kK);
    // [/book:row_grid]
    const std::vector<float> product = c.to_host(), sums = col_sums.to_host();
    int outside = 0;
    std::vector<double> want_sums(kN), magnitude_sums(kN);
    for (int i = 0; i < kM; ++i)
      for (int j = 0; j < kN; ++j) {
        double want = 0, magnitude = 0;
        for (int t = 0; t < kK; ++t) {
          const double term = double{float(a[i * kK + t])} * double{float(bt[j * kK + t])};
          want += term;
          magnitude += std::abs(term);
        }
        // 2u per addition allows for tensor cores that truncate (chapter 9).
        outside += !(std::abs(product[i * kN + j] - want) <= 2 * u * kK * magnitude);
        want_sums[j] += want;
        magnitude_sums[j] += magnitude;
      }
    for (int j = 0; j < kN; ++j)
      outside += !(std::abs(sums[j] - want_sums[j]) <= 2 * u * (kK + kM) * magnitude_sums[j]);
    report("matmul_bt: C = A @ B^T, 50 x 40 with k = 72, and the column sums of C", outside);
    const std::vector<int> found = seen.to_host();
    const auto count = [&](int value) { return static_cast<int>(std::count(found.begin(), found.end(), value)); };
    report("matmul_bt: " + std::to_string(count(-1)) + " of 4 programs found winner at -1, the others its number",
           (count(-1) != 1) + (count(winner.to_host()[0]) != 3));
  }
  {  // rotate_pairs: 1000 pairs, 4 programs of 128 pairs in a grid-stride loop
    constexpr int kPairs = 1000, kBlock = 128;
    const float theta = 0.01f, p = 0.25f;
    const std::vector<float> host = uniform(2 * kPairs, -1, 1);
    auto x = kl::Buffer<float>::from(host);
    kl::Buffer<float> rotated(2 * kPairs), dropped(2 * kPairs);
    // [book:row_options]
    kl::CompileOptions options;
    options.specialize = false;
    kl::compile<rotate_pairs<kBlock, false>>(options).launch(4, x, rotated, kPairs, theta, p, 7);
    // [/book:row_options]
    kl::compile<rotate_pairs<kBlock, true>>().launch(4, x, dropped, kPairs, theta, p, 7);
    const std::vector<float> y = rotated.to_host(), z = dropped.to_host();
    int outside = 0, zeros = 0;
    for (int i = 0; i < kPairs; ++i) {
      const double angle = float(i) * theta, e = host[2 * i], o = host[2 * i + 1];
      // cos and sin within a few ulps, a product, an fma: 8u of |e| + |o| per element.
      const double tolerance = 8 * u * (std::abs(e) + std::abs(o));
      outside += !(std::abs(y[2 * i] - (e * std::cos(angle) - o * std::sin(angle))) <= tolerance);
      outside += !(std::abs(y[2 * i + 1] - (e * std::sin(angle) + o * std::cos(angle))) <= tolerance);
    }
    for (int i = 0; i < 2 * kPairs; ++i) {  // each element dropped, or kept and scaled with two more roundings
      zeros += z[i] == 0;
      outside += z[i] != 0 && !(std::abs(z[i] - y[i] / (1 - double{p})) <= 3 * u * std::abs(z[i]));
    }
    outside += std::abs(zeros - 2 * kPairs * p) > 5 * std::sqrt(2 * kPairs * p * (1 - p));  // 5 standard deviations
    report("rotate_pairs: 1000 pairs rotated, then " + std::to_string(zeros) + " of 2000 elements dropped", outside);
  }
  {  // flip_rows: 8 rows of 16
    constexpr int kRows = 8, kBlock = 16, kEdges = 16;
    const std::vector<float> host = uniform(kRows * kBlock, 0.5f, 1.5f);
    std::vector<float> edges = uniform(kEdges, 0.5f, 1.5f);
    std::sort(edges.begin(), edges.end());
    auto x = kl::Buffer<float>::from(host), edges_buffer = kl::Buffer<float>::from(edges);
    kl::Buffer<float> running_max(kRows * kBlock), product(kRows);
    kl::Buffer<int> bucket(kRows * kBlock);
    kl::compile<flip_rows<kBlock, kEdges>>().launch(kRows, x, running_max, product, edges_buffer, bucket);
    const std::vector<float> flipped = x.to_host(), maxima = running_max.to_host(), products = product.to_host();
    const std::vector<int> buckets = bucket.to_host();
    int outside = 0;
    for (int r = 0; r < kRows; ++r) {
      const float* row = &host[r * kBlock];
      double want = 1;
      for (int j = 0; j < kBlock; ++j) {
        outside += flipped[r * kBlock + j] != row[kBlock - 1 - j];
        outside += maxima[r * kBlock + j] != *std::max_element(row, row + j + 1);
        outside += buckets[r * kBlock + j] != std::upper_bound(edges.begin(), edges.end(), row[j]) - edges.begin();
        want *= row[j];
      }
      outside += !(std::abs(products[r] - want) <= u * kBlock * want);  // 15 roundings, each relative
    }
    report("flip_rows: 8 rows reversed in place, running maxima, products and buckets", outside);
  }
  {  // polar: 300 points in [-2, 2]^2, every tenth missing a coordinate
    constexpr int kPoints = 300, kBlock = 128;
    const float power = 1.5f;
    std::vector<float> px = uniform(kPoints, -2, 2), py = uniform(kPoints, -2, 2);
    for (int i = 0; i < kPoints; i += 10) (i % 20 == 0 ? px : py)[i] = NAN;
    auto x = kl::Buffer<float>::from(px), y = kl::Buffer<float>::from(py);
    kl::Buffer<float> degrees(kPoints), scaled(kPoints);
    // [book:row_autotune]
    const auto tuned = kl::autotune(kl::config<polar<kBlock>>({.num_warps = 4}, kBlock),
                                    kl::config<polar<kBlock / 2>>({.num_warps = 2}, kBlock / 2))
                           .key<4>();
    tuned.launch([&](int block) { return kl::Grid(kl::cdiv(kPoints, block)); }, x, y, degrees, scaled, kPoints, power);
    // [/book:row_autotune]
    const std::vector<float> angles = degrees.to_host(), powers = scaled.to_host();
    int outside = 0;
    for (int i = 0; i < kPoints; ++i) {
      if (std::isnan(px[i]) || std::isnan(py[i])) {
        outside += angles[i] != -1 || powers[i] != -1;
        continue;
      }
      // atan2 within 3 ulps, two roundings and the rounded pi move the angle by under 1e-4 degrees: only an
      // angle within 1e-3 of a tie may round either way. pow within 4 ulps (8u), of a square sum within 2u
      // (to the power 3/4: 1.5u): 12u.
      const double exact = std::atan2(double{py[i]}, double{px[i]}) * 180 / 3.14159265358979323846;
      const bool near_tie = std::abs(std::abs(exact - std::trunc(exact)) - 0.5) < 1e-3;
      outside += !near_tie && angles[i] != std::nearbyint(exact);
      const double r2 = double{px[i]} * px[i] + double{py[i]} * py[i];
      outside += !(std::abs(powers[i] - std::pow(r2, power / 2.0)) <= 12 * u * std::pow(r2, power / 2.0));
    }
    report("polar: 300 points to whole degrees and radius^1.5, 30 of them missing a coordinate", outside);
    // [book:row_bench]
    const kl::BenchResult timed = kl::do_bench(x.device(), [&] {
      tuned.launch([&](int block) { return kl::Grid(kl::cdiv(kPoints, block)); }, x, y, degrees, scaled, kPoints,
                   power);
    });
    const double median_ms = timed.median_ms(), p20_ms = timed.quantile_ms(0.2), p80_ms = timed.quantile_ms(0.8);
    // [/book:row_bench]
    report("polar: do_bench timed " + std::to_string(kPoints) + " points",
           !(0 < p20_ms && p20_ms <= median_ms && median_ms <= p80_ms) || degrees.to_host() != angles);
  }
  {  // row_norms: 5 rows of 1100, 18 blocks of 64 each: 4 turns of the unrolled loop, then 2 blocks
    constexpr int kM = 5, kN = 1100, kBlock = 64;
    const std::vector<float> host = uniform(kM * kN, -1, 1);
    auto x = kl::Buffer<float>::from(host);
    kl::Buffer<float> norms(kM);
    kl::compile<row_norms<kBlock>>().launch(kM, x, norms, kN);
    const std::vector<float> got = norms.to_host();
    int outside = 0;
    for (int i = 0; i < kM; ++i) {
      double squares = 0;
      for (int j = 0; j < kN; ++j) squares += double{host[i * kN + j]} * host[i * kN + j];
      // Positive terms: each lane sums 18 squares, then the lanes are summed (64), then the square root.
      const double want = std::sqrt(squares);
      outside += !(std::abs(got[i] - want) <= u * (kN / kBlock + kBlock + 4) * want);
    }
    report("row_norms: norms of 5 rows of 1100 in a loop unrolled by 4", outside);
  }
  {  // fast_tanh: 1000 elements, 4 programs of 256
    constexpr int kN = 1000, kBlock = 256;
    const std::vector<float> host = uniform(kN, -5, 5);
    auto x = kl::Buffer<float>::from(host);
    kl::Buffer<float> out(kN);
    kl::compile<fast_tanh<kBlock>>().launch(kl::cdiv(kN, kBlock), x, out, kN);
    const std::vector<float> got = out.to_host();
    int outside = 0;
    // std::tanh itself on cpu and emu; tanh.approx.f32 on a GPU, within 2^-10.98 relative.
    for (int i = 0; i < kN; ++i)
      outside += !(std::abs(got[i] - std::tanh(host[i])) <= 0x1p-10 * std::abs(std::tanh(host[i])));
    report("fast_tanh: tanh of 1000 elements by inline PTX or its host reference", outside);
  }
  {  // quantiles: 1000 uniforms in (0, 1) and counts 0 to 20, 4 programs of 256
    constexpr int kN = 1000, kBlock = 256;
    const float rate = 4.5f;
    const std::vector<float> uniforms = uniform(kN, 0.001f, 0.999f);
    std::vector<float> counts = uniform(kN, 0, 21);
    for (float& k : counts) k = std::floor(k);
    auto u_buffer = kl::Buffer<float>::from(uniforms), k_buffer = kl::Buffer<float>::from(counts);
    kl::Buffer<float> normal(kN), log_pmf(kN);
    kl::compile<quantiles<kBlock>>().launch(kl::cdiv(kN, kBlock), u_buffer, k_buffer, normal, log_pmf, rate, kN);
    const std::vector<float> z = normal.to_host(), log_p = log_pmf.to_host();
    int outside = 0;
    for (int i = 0; i < kN; ++i) {
      // z is a quantile if erf(z / sqrt 2) gives back 2u - 1: erfinv within 2 ulps and the two roundings of the
      // scaling move erf by at most 1.13 * 4u |z / sqrt 2| (erf's slope is at most 2 / sqrt pi), 2u - 1 rounded
      // in f32 by at most u.
      const double y = 2.0 * uniforms[i] - 1;
      outside += !(std::abs(std::erf(z[i] / std::sqrt(2.0)) - y) <= 6 * u * std::abs(z[i]) + u);
      // log to within 2^-21 (2 ulps at 1.5), lgamma within 7 ulps, three more roundings: 16u of the terms.
      const double k = counts[i], terms = k * std::log(double{rate}) + rate + std::lgamma(k + 1);
      outside += !(std::abs(log_p[i] - (k * std::log(double{rate}) - rate - std::lgamma(k + 1))) <= 16 * u * terms);
    }
    report("quantiles: normal quantiles of 1000 uniforms and Poisson log-probabilities of their counts", outside);
  }
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
