// expect-compile
// The positive control: the kernels of the other files here with their one
// mistake corrected must compile, so each rejection is the mistake's doing.
#include "kiln/kiln.hpp"

namespace kl = kiln;

template <int BM, int BN>
void bias_add(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> bias, kl::Ptr<kl::f32> out, kl::i32 stride) {
  auto rows = kl::program_id(0) * BM + kl::arange<BM>();
  auto cols = kl::arange<BN>();
  auto offsets = kl::expand_dims<1>(rows) * stride + kl::expand_dims<0>(cols);
  auto b = kl::load(bias + kl::arange<BN>());
  kl::store(out + offsets, kl::load(x + offsets) + b);
}

template <int BM, int BN, int BK>
void matmul_tile(kl::Ptr<kl::f32> a, kl::Ptr<kl::f32> b, kl::Ptr<kl::f32> c, kl::i32 k) {
  auto rm = kl::arange<BM>();
  auto rn = kl::arange<BN>();
  auto rk = kl::arange<BK>();
  auto a_tile = kl::load(a + kl::expand_dims<1>(rm) * k + kl::expand_dims<0>(rk));
  auto b_tile = kl::load(b + kl::expand_dims<1>(rk) * BN + kl::expand_dims<0>(rn));
  auto acc = kl::dot(a_tile, b_tile);
  kl::store(c + kl::expand_dims<1>(rm) * BN + kl::expand_dims<0>(rn), acc);
}

template <int ROWS, int COLS>
void row_sum(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto rows = kl::program_id(0) * ROWS + kl::arange<ROWS>();
  auto cols = kl::arange<COLS>();
  auto tile = kl::load(x + kl::expand_dims<1>(rows) * COLS + kl::expand_dims<0>(cols));
  kl::store(out + rows, kl::sum(tile, kl::axis<1>));
}

template <int ROWS, int COLS>
void row_scale(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::f32 scale) {
  auto rows = kl::program_id(0) * ROWS + kl::arange<ROWS>();
  auto cols = kl::arange<COLS>();
  auto offsets = kl::expand_dims<1>(rows) * COLS + kl::expand_dims<0>(cols);
  kl::store(out + offsets, kl::load(x + offsets) * scale);
}

template <int BLOCK>
void total(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  kl::Var acc = kl::full<kl::f32>(0.0);
  for (auto start : kl::range(0, n, BLOCK)) {
    auto offsets = start + kl::arange<BLOCK>();
    acc = acc + kl::sum(kl::load(x + offsets, offsets < n), kl::axis<0>);
  }
  kl::store(out, acc);
}

template <int BLOCK>
void gather(kl::Ptr<kl::f32> values, kl::Ptr<kl::i32> indices, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto index = kl::load(indices + offsets, mask);
  kl::store(out + offsets, kl::load(values + index, mask), mask);
}

template <int BLOCK>
void strided_copy(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 stride, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets * stride, mask), mask);
}

template <int BLOCK>
void exp_counts(kl::Ptr<kl::i32> counts, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::exp(kl::cast<kl::f32>(kl::load(counts + offsets, mask))), mask);
}

template <int BLOCK>
void truncate_mantissa(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto bits = kl::bitcast<kl::i32>(kl::load(x + offsets, mask));
  kl::store(out + offsets, kl::bitcast<kl::f32>(bits & static_cast<int>(0xFFFF0000u)), mask);
}

template <int B, int M, int N>
void batched_transpose(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto b = kl::expand_dims<1>(kl::expand_dims<1>(kl::arange<B>()));
  auto m = kl::expand_dims<0>(kl::expand_dims<1>(kl::arange<M>()));
  auto n = kl::expand_dims<0>(kl::expand_dims<0>(kl::arange<N>()));
  auto tile = kl::load(x + b * (M * N) + m * N + n);
  auto out_offsets = b * (M * N) + kl::expand_dims<0>(kl::expand_dims<1>(kl::arange<N>())) * M +
                     kl::expand_dims<0>(kl::expand_dims<0>(kl::arange<M>()));
  kl::store(out + out_offsets, kl::permute<0, 2, 1>(tile));
}

template <int BLOCK>
void column_sums(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto matrix = kl::reshape<16, 8>(kl::load(x + offsets));
  kl::store(out + kl::program_id(0) * 8 + kl::arange<8>(), kl::sum(matrix, kl::axis<0>));
}

template <int BLOCK>
void masked_copy(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask), mask);
}

template <class S = kl::traced>
struct ScaleArgs {
  kl::param<S, kl::Ptr<kl::f32>> x;
  kl::param<S, kl::i32> n;
};

template <int BLOCK>
void scale(ScaleArgs<> a) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < a.n;
  kl::store(a.x + offsets, kl::load(a.x + offsets, mask) * 2.f, mask);
}

template <int BM, int BN>
void copy_block(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 n) {
  auto block = kl::make_block_ptr<BM, BN>(x, {m, n}, {n, 1}, {0, 0});
  kl::store(kl::make_block_ptr<BM, BN>(out, {m, n}, {n, 1}, {0, 0}), kl::load(block));
}

template <int BM, int BK>
void sum_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 k) {
  kl::Var block = kl::make_block_ptr<BM, BK>(x, {m, k}, {k, 1}, {0, 0});
  kl::Var acc = kl::zeros<kl::f32, BM>();
  for ([[maybe_unused]] auto k0 : kl::range(0, k, BK)) {
    acc = acc + kl::sum(kl::load(block, {.boundary_check = {0, 1}}), kl::axis<1>);
    block = kl::advance(block, {0, BK});
  }
  kl::store(out + kl::arange<BM>(), acc);
}

template <int BM, int BN>
void transpose_block(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 m, kl::i32 n) {
  auto tile = kl::load(kl::make_block_ptr<BM, BN>(x, {m, n}, {n, 1}, {0, 0}), {.boundary_check = {0, 1}});
  kl::store(kl::make_block_ptr<BN, BM>(out, {n, m}, {m, 1}, {0, 0}), kl::trans(tile), {.boundary_check = {0, 1}});
}

template <int BLOCK>
void gather_runs(kl::Ptr<kl::f32> x, kl::Ptr<kl::i32> at, kl::Ptr<kl::f32> out) {
  auto i = kl::arange<BLOCK>();
  kl::store(out + i, kl::load(x + kl::multiple_of<2>(kl::max_contiguous<2>(kl::load(at + i)))));
}

void launch_all(kl::Buffer<float>& f, kl::Buffer<int>& i, kl::Buffer<float>& out) {
  kl::compile<bias_add<4, 8>>().launch({2}, f, f, out, 8);
  kl::compile<matmul_tile<16, 32, 8>>().launch({1}, f, f, out, 8);
  kl::compile<row_sum<4, 64>>().launch({3}, f, out);
  kl::compile<row_scale<4, 8>>().launch({2}, f, out, 0.5f);
  kl::compile<total<64>>().launch({1}, f, out, static_cast<int>(f.size()));
  kl::compile<gather<128>>().launch({4}, f, i, out, 500);
  kl::compile<strided_copy<128>>().launch({2}, f, out, 2, 256);
  kl::compile<exp_counts<128>>().launch({1}, i, out, 100);
  kl::compile<truncate_mantissa<128>>().launch({1}, f, out, 128);
  kl::compile<batched_transpose<2, 4, 8>>().launch({1}, f, out);
  kl::compile<column_sums<128>>().launch({2}, f, out);
  kl::compile<masked_copy<128>>().launch({1}, f, out, 100);
  kl::compile<scale<128>>().launch({4}, {.x = f, .n = 500});
  kl::compile<copy_block<8, 8>>().launch({1}, f, out, 8, 8);
  kl::compile<sum_rows<8, 16>>().launch({1}, f, out, 8, 40);
  kl::compile<transpose_block<8, 16>>().launch({1}, f, out, 8, 16);
  kl::compile<gather_runs<16>>().launch({1}, f, i, out);
}
