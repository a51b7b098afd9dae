// Correctness of block pointers (kl::make_block_ptr, kl::advance, loads and
// stores through them): a matmul whose A and B blocks advance along K in a
// kl::range loop, with a column-major A and sizes that are not multiples of
// the blocks; a window of a larger matrix loaded with NaN padding and written
// back with boundary checks; and an unchecked axis running past the end,
// which the bounds check reports.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "error/kernel_error.hpp"
#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::random_values;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;

// C = A @ B, one BM x BN block of C per program, A and B read through block
// pointers that advance by BK along K; C written through a checked block pointer.
template <class C, int BM, int BN, int BK>
void block_matmul(P<C> a, P<C> b, P<float> c, kl::i32 m, kl::i32 n, kl::i32 k, kl::i32 stride_am, kl::i32 stride_ak,
                  kl::i32 stride_bk, kl::i32 stride_bn) {
  auto row0 = kl::program_id(0) * BM, col0 = kl::program_id(1) * BN;
  kl::Var a_block = kl::make_block_ptr<BM, BK>(a, {m, k}, {stride_am, stride_ak}, {row0, 0});
  kl::Var b_block = kl::make_block_ptr<BK, BN>(b, {k, n}, {stride_bk, stride_bn}, {0, col0});
  kl::Var acc = kl::zeros<kl::f32, BM, BN>();
  for ([[maybe_unused]] auto k0 : kl::range(0, k, BK)) {
    acc = kl::dot(kl::load(a_block, {.boundary_check = {0, 1}}), kl::load(b_block, {.boundary_check = {0, 1}}), acc);
    a_block = kl::advance(a_block, {0, BK});
    b_block = kl::advance(b_block, {BK, 0});
  }
  kl::store(kl::make_block_ptr<BM, BN>(c, {m, n}, {n, 1}, {row0, col0}), acc, {.boundary_check = {0, 1}});
}

template <class C>
class BlockPointerMatmul : public ::testing::Test {};
using MatmulTypes = ::testing::Types<float, kl::half>;
TYPED_TEST_SUITE(BlockPointerMatmul, MatmulTypes, kiln::test::DTypeNames);

TYPED_TEST(BlockPointerMatmul, AdvancesAlongKWithMaskedTails) {
  using C = TypeParam;
  constexpr int BM = 16, BN = 16, BK = 16, m = 37, n = 29, k = 45;
  const auto a = random_values<C>(m * k, 71);  // row-major m x k
  const auto b = random_values<C>(k * n, 72);  // row-major k x n
  std::vector<C> a_columns(a.size());          // the same A, column-major
  for (int i = 0; i < m; ++i)
    for (int t = 0; t < k; ++t) a_columns[t * m + i] = a[i * k + t];
  auto ba = kl::Buffer<C>::from(a_columns), bb = kl::Buffer<C>::from(b);
  auto out = kl::Buffer<float>::from(random_values<float>(m * n, 73));
  kl::compile<block_matmul<C, BM, BN, BK>>().launch(kl::Grid(kl::cdiv(m, BM), kl::cdiv(n, BN)), ba, bb, out, m, n, k, 1,
                                                    m, n, 1);
  // Products of C values are exact in f32; each inner product of k terms is
  // within gamma_k (f32) of the exact value, plus the double reference's own.
  const kiln::test::InnerProducts want = kiln::test::inner_products(a, b, m, n, k, n, 1);
  std::vector<double> bound;
  for (double magnitude : want.magnitudes)
    bound.push_back((gamma_bound(k, 0x1p-24) + gamma_bound(k, 0x1p-53)) * magnitude);
  expect_within(out.to_host(), want.sums, bound, "block pointer matmul 37x29x45");
}

// The top-left rows x cols window of a matrix with row stride `stride`:
// each program loads its 8 x 8 block (NaN outside the window) into `blocks`
// and stores the block times 2 back into the window, boundary-checked.
void double_window(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> blocks, kl::i32 rows, kl::i32 cols, kl::i32 stride) {
  auto program = kl::program_id(0);
  auto window = kl::make_block_ptr<8, 8>(x, {rows, cols}, {stride, 1}, {program * 8, 0});
  auto v = kl::load(window, {.boundary_check = {0, 1}, .padding = kl::Padding::nan});
  kl::store(kl::make_block_ptr<8, 8>(blocks, {16, 8}, {8, 1}, {program * 8, 0}), v);
  kl::store(window, v * 2.0f, {.boundary_check = {1, 0}});
}

TEST(BlockPointer, CheckedAccessesStayInsideTheWindow) {
  constexpr int kStride = 12, kRows = 11, kCols = 6, kMatrixRows = 16;
  const auto host = random_values<float>(kMatrixRows * kStride, 74);
  auto x = kl::Buffer<float>::from(host);
  kl::Buffer<float> blocks(16 * 8);
  kl::compile<double_window>().launch(kl::Grid(2), x, blocks, kRows, kCols, kStride);
  const std::vector<float> got = x.to_host(), loaded = blocks.to_host();
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      const float want = r < kRows && c < kCols ? host[r * kStride + c] : NAN;
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(loaded[r * 8 + c])) << "padding at " << r << ", " << c;
      else EXPECT_EQ(loaded[r * 8 + c], want) << "loaded " << r << ", " << c;
    }
  for (int r = 0; r < kMatrixRows; ++r)
    for (int c = 0; c < kStride; ++c) {
      const bool inside = r < kRows && c < kCols;
      EXPECT_EQ(got[r * kStride + c], inside ? 2 * host[r * kStride + c] : host[r * kStride + c])
          << "element " << r << ", " << c;
    }
}

// clang-format off
int unchecked_line = 0;

// Loads an 8 x 8 block of a 5 x 8 matrix checking only the columns.
void unchecked_rows(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out) {
  auto block = kl::make_block_ptr<8, 8>(x, {5, 8}, {8, 1}, {0, 0});
  unchecked_line = __LINE__; auto v = kl::load(block, {.boundary_check = {1}});
  kl::store(kl::make_block_ptr<8, 8>(out, {8, 8}, {8, 1}, {0, 0}), v);
}
// clang-format on

TEST(BlockPointer, UncheckedAxisPastTheEndIsReported) {
  const auto kernel = kl::compile<unchecked_rows>();
  auto x = kl::Buffer<float>::from(random_values<float>(5 * 8, 75));
  kl::Buffer<float> out(8 * 8);
  const std::string message = kiln::test::kernel_error([&] { kernel.launch(kl::Grid(1), x, out); });
  // Rows 5..7 lie past the 40 elements; which of their offsets (40..63) is
  // named depends on the device's order of lanes.
  const std::string head =
      "kernel unchecked_rows: load out of bounds at block_pointer_test.cpp:" + std::to_string(unchecked_line) +
      ": element offset ";
  const std::string tail = " is past the end of parameter 1 (Ptr<f32>) (40 elements of f32)";
  ASSERT_EQ(message.substr(0, head.size()), head) << message;
  ASSERT_GT(message.size(), head.size() + tail.size()) << message;
  EXPECT_EQ(message.substr(message.size() - tail.size()), tail) << message;
  const int offset = std::stoi(message.substr(head.size()));
  EXPECT_TRUE(offset >= 40 && offset < 64) << message;
}

}  // namespace
