// The pieces of matmul's unfused sequence: a plain matmul writing f32
// (matmul with an empty epilogue), then `bias_gelu` below over the f32
// product, then the standalone `dropout` kernel over the result. Each piece
// reads and writes C in global memory, the traffic the fused kernel saves.
#pragma once

#include <bit>

#include "kiln/kernels/matmul.hpp"

namespace kiln::kernels {

/// The matmul of the unfused sequence: A @ B into f32, no epilogue.
template <class T, int BLOCK_M, int BLOCK_N, int BLOCK_K, int GROUP_M>
inline constexpr auto plain_matmul = matmul<T, kl::f32, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, Epilogue{}>;

/// out = gelu(x + bias) (the parts EPILOGUE names) for an f32 matrix x
/// [m, n] with row stride stride_xm, written as Out with row stride
/// stride_om; one BLOCK_M x BLOCK_N tile per program of a 2-D grid.
template <class T, class Out, int BLOCK_M, int BLOCK_N, Epilogue EPILOGUE>
void bias_gelu(kl::Ptr<kl::f32> x, kl::Ptr<T> bias, kl::Ptr<Out> out, kl::i32 m, kl::i32 n, kl::i32 stride_xm,
               kl::i32 stride_om) {
  static_assert(std::has_single_bit(unsigned{BLOCK_M}) && std::has_single_bit(unsigned{BLOCK_N}),
                "bias_gelu: BLOCK_M and BLOCK_N must be powers of two");
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BLOCK_M + kl::arange<BLOCK_M>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BLOCK_N + kl::arange<BLOCK_N>());
  auto mask = (rows < m) & (cols < n);
  auto values = kl::load(x + rows * stride_xm + cols, mask);
  kl::store(out + rows * stride_om + cols, kl::cast<Out>(apply_bias_gelu<EPILOGUE>(values, bias, cols, n)), mask);
}

}  // namespace kiln::kernels

KILN_PARAMETERS(kiln::kernels::bias_gelu, "x", "bias", "out", "m", "n", "stride_xm", "stride_om");
