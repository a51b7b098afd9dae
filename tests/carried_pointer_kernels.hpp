// Matmul kernels in the style of Triton's tutorial, shared by the carried-
// pointer pipelining tests (correctness, codegen, unit): the K loop loads
// through pointer tiles carried in kl::Var and advanced by BLOCK_K * stride
// each iteration, with masks on the K tail and `other` +0; rows and columns
// past M and N wrap around (% m, % n) as the tutorial's do, and only the
// store is masked there.
#pragma once

#include "kiln/kiln.hpp"

namespace kiln::test::carried {

namespace kl = kiln;

/// C (f32) = A @ B for strided A (m x k) and B (k x n) of dtype In, the dot
/// at precision PR, the K loop pipelined at the kernel's num_stages.
template <class In, int BM, int BN, int BK, kl::Precision PR = kl::Precision::ieee>
void tutorial_matmul(kl::Ptr<In> a, kl::Ptr<In> b, kl::Ptr<kl::f32> c, kl::i32 m, kl::i32 n, kl::i32 k,
                     kl::i32 stride_am, kl::i32 stride_ak, kl::i32 stride_bk, kl::i32 stride_bn, kl::i32 stride_cm) {
  auto offs_am = (kl::program_id(0) * BM + kl::arange<BM>()) % m;
  auto offs_bn = (kl::program_id(1) * BN + kl::arange<BN>()) % n;
  auto offs_k = kl::arange<BK>();
  kl::Var a_ptrs = a + (kl::expand_dims<1>(offs_am) * stride_am + kl::expand_dims<0>(offs_k) * stride_ak);
  kl::Var b_ptrs = b + (kl::expand_dims<1>(offs_k) * stride_bk + kl::expand_dims<0>(offs_bn) * stride_bn);
  kl::Var acc = kl::zeros<kl::f32, BM, BN>();
  for (auto kk : kl::range(0, kl::cdiv(k, BK))) {
    auto a_tile = kl::load(a_ptrs, kl::expand_dims<0>(offs_k) < k - kk * BK, {.other = 0.0});
    auto b_tile = kl::load(b_ptrs, kl::expand_dims<1>(offs_k) < k - kk * BK, {.other = 0.0});
    acc = kl::dot(a_tile, b_tile, acc, {.precision = PR});
    a_ptrs = a_ptrs + BK * stride_ak;
    b_ptrs = b_ptrs + BK * stride_bk;
  }
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BN + kl::arange<BN>());
  kl::store(c + (rows * stride_cm + cols), acc, (rows < m) & (cols < n));
}

/// The same loop with the K offset carried too (a scalar advanced by BK, the
/// masks computed from it): the mask reads a carried value as well.
template <class In, int BM, int BN, int BK>
void carried_offset_matmul(kl::Ptr<In> a, kl::Ptr<In> b, kl::Ptr<kl::f32> c, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto offs_am = (kl::program_id(0) * BM + kl::arange<BM>()) % m;
  auto offs_bn = (kl::program_id(1) * BN + kl::arange<BN>()) % n;
  auto offs_k = kl::arange<BK>();
  kl::Var a_ptrs = a + (kl::expand_dims<1>(offs_am) * k + kl::expand_dims<0>(offs_k));
  kl::Var b_ptrs = b + (kl::expand_dims<1>(offs_k) * n + kl::expand_dims<0>(offs_bn));
  kl::Var k_left = k;
  kl::Var acc = kl::zeros<kl::f32, BM, BN>();
  for (auto kk : kl::range(0, kl::cdiv(k, BK))) {
    (void)kk;
    auto a_tile = kl::load(a_ptrs, kl::expand_dims<0>(offs_k) < k_left, {.other = 0.0});
    auto b_tile = kl::load(b_ptrs, kl::expand_dims<1>(offs_k) < k_left, {.other = 0.0});
    acc = kl::dot(a_tile, b_tile, acc);
    a_ptrs = a_ptrs + BK;
    b_ptrs = b_ptrs + BK * n;
    k_left = k_left - BK;
  }
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BN + kl::arange<BN>());
  kl::store(c + (rows * n + cols), acc, (rows < m) & (cols < n));
}

}  // namespace kiln::test::carried
