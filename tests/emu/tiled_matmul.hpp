// A tiled matmul for the emu's tensor-core tests: run on a device with
// random inputs, every element checked against a double reference within
// the inner-product bound, and the PTX the same program compiles to for a
// GPU architecture, for the test to look into.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/lowering/compile.hpp"

namespace kiln::emu_test {

template <class T>
using P = Ptr<Scalar<T>>;

// C = A @ B (M x K by K x N, f32 out). A is row-major, or K x M (column-major
// A, loaded along M) when A_ALONG_M; B is row-major, or N x K when B_ALONG_K.
template <class T, int BM, int BN, int BK, bool A_ALONG_M, bool B_ALONG_K>
void tiled_matmul(P<T> a, P<T> b, P<float> c, i32 m, i32 n, i32 k) {
  auto rows = expand_dims<1>(program_id(0) * BM + arange<BM>());
  auto cols = expand_dims<0>(program_id(1) * BN + arange<BN>());
  auto k_across = expand_dims<0>(arange<BK>());
  auto k_down = expand_dims<1>(arange<BK>());
  Var acc = zeros<Scalar<float>, BM, BN>();
  for (auto k0 : range(0, k, BK)) {
    auto a_offsets = [&] {
      if constexpr (A_ALONG_M) return (k0 + k_across) * m + rows;
      else return rows * k + (k0 + k_across);
    }();
    auto b_offsets = [&] {
      if constexpr (B_ALONG_K) return cols * k + (k0 + k_down);
      else return (k0 + k_down) * n + cols;
    }();
    auto ta = load(a + a_offsets, (rows < m) & (k0 + k_across < k));
    auto tb = load(b + b_offsets, (k0 + k_down < k) & (cols < n));
    acc = dot(ta, tb, acc);
  }
  store(c + rows * n + cols, acc, (rows < m) & (cols < n));
}

template <class T>
std::vector<T> random_inputs(std::size_t count, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> values(-2.0f, 2.0f);
  std::vector<T> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(T(values(engine)));
  return out;
}

struct MatmulCase {
  int m, n, k, num_warps, num_stages;
};

inline std::string describe(const MatmulCase& c, const char* dtype) {
  return std::string(dtype) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + ", " +
         std::to_string(c.num_warps) + " warps, " + std::to_string(c.num_stages) + " stages";
}

/// Runs tiled_matmul on `device` and checks every element: each sum of k
/// products of 16- or 8-bit floats is exact in double, and an f32
/// accumulation (in any order) is off by at most gamma_k x sum |a b|.
/// Returns the PTX of the launched program for `arch`.
template <class T, int BM, int BN, int BK, bool A_ALONG_M = false, bool B_ALONG_K = false>
std::string expect_matmul_products(const Device& device, const MatmulCase& c, const std::string& what,
                                   const char* arch) {
  const auto a = random_inputs<T>(static_cast<std::size_t>(c.m) * c.k, 5 + c.m);
  const auto b = random_inputs<T>(static_cast<std::size_t>(c.k) * c.n, 6 + c.n);
  // a[i][kk] and b[kk][j] in the layouts the kernel reads.
  auto a_at = [&](int i, int kk) { return static_cast<double>(A_ALONG_M ? a[kk * c.m + i] : a[i * c.k + kk]); };
  auto b_at = [&](int kk, int j) { return static_cast<double>(B_ALONG_K ? b[j * c.k + kk] : b[kk * c.n + j]); };
  auto ba = Buffer<T>::from(a, device), bb = Buffer<T>::from(b, device);
  auto out = Buffer<float>::from(std::vector<float>(static_cast<std::size_t>(c.m) * c.n, 0.5f), device);
  CompileOptions options;
  options.num_warps = c.num_warps;
  options.num_stages = c.num_stages;
  const auto compiled = compile<tiled_matmul<T, BM, BN, BK, A_ALONG_M, B_ALONG_K>>(options);
  compiled.launch(Grid(cdiv(c.m, BM), cdiv(c.n, BN)), ba, bb, out, c.m, c.n, c.k);

  const std::vector<float> got = out.to_host();
  const double gamma = c.k * 0x1p-24 / (1 - c.k * 0x1p-24);
  int wrong = 0;
  for (int i = 0; i < c.m && wrong < 5; ++i)
    for (int j = 0; j < c.n && wrong < 5; ++j) {
      double sum = 0, magnitude = 0;
      for (int kk = 0; kk < c.k; ++kk) {
        sum += a_at(i, kk) * b_at(kk, j);
        magnitude += std::abs(a_at(i, kk) * b_at(kk, j));
      }
      const double error = std::abs(got[static_cast<std::size_t>(i * c.n + j)] - sum);
      if (error > gamma * magnitude + 0x1p-24 * std::abs(sum)) {
        ++wrong;
        ADD_FAILURE() << what << ": c[" << i << "][" << j << "] is " << got[static_cast<std::size_t>(i * c.n + j)]
                      << ", want " << sum << " within " << gamma * magnitude;
      }
    }
  return lowering::compile_for_gpu(compiled.program_for(ba, bb, out, c.m, c.n, c.k)->optimized(),
                                   {.arch = arch, .num_warps = c.num_warps})
      .ptx;
}

}  // namespace kiln::emu_test
