// The fused matmul kernel against its double reference: f32, f16 and bf16
// inputs; shapes with odd M, N and K, smaller than a tile, and K not a
// multiple of BLOCK_K; each epilogue (none, bias, bias + GELU in both forms,
// dropout with and without them, a cast to another output dtype); a padded
// C and a B given transposed through its strides; the configurations the
// library launches (kMatmulSm80, kMatmulSm90a) with tails in M, N and K;
// and the grouped program ordering, which must visit every tile once,
// group by group.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/matmul.hpp"

namespace {

namespace kl = kiln;
using kiln::kernels::Epilogue;
using kiln::kernels::Gelu;
using kiln::kernels::MatmulConfig;
using kiln::kernels::MatmulProblem;
using kiln::test::expect_equal;
using kiln::test::expect_within;
using kiln::test::random_values;

/// Small tiles, so that the shapes below span several: 4 warps, 3 stages.
constexpr MatmulConfig kSmallTiles{
    .block_m = 16, .block_n = 16, .block_k = 16, .group_m = 2, .num_warps = 4, .num_stages = 3};
constexpr std::int64_t kSeed = 0x1234'5678'9ABC'DEF1;
constexpr std::uint32_t kOffset = 4242;
constexpr float kP = 0.25f;

struct Layout {
  int c_padding = 0;          // extra elements at the end of each row of C
  bool b_transposed = false;  // B stored as [n, k] and read through strides
};

/// Runs the fused kernel with EPILOGUE in configuration G on seeded inputs
/// of shape m x n x k and checks every element of C against the reference's
/// bound (and that the padding of C is untouched).
template <class C, class Out, Epilogue EPILOGUE, MatmulConfig G = kSmallTiles>
void check_matmul(int m, int n, int k, Layout layout = {}) {
  const std::string what = "matmul " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  const auto a = random_values<C>(static_cast<std::size_t>(m) * k, 11 + m);
  const auto b = random_values<C>(static_cast<std::size_t>(k) * n, 12 + n);
  const auto bias = random_values<C>(static_cast<std::size_t>(n), 13 + k);
  std::vector<C> b_stored = b;
  if (layout.b_transposed)
    for (int t = 0; t < k; ++t)
      for (int j = 0; j < n; ++j)
        b_stored[static_cast<std::size_t>(j) * k + t] = b[static_cast<std::size_t>(t) * n + j];
  const int ldc = n + layout.c_padding;
  const Out sentinel = kiln::test::from_double<Out>(1234.0);
  auto ba = kl::Buffer<C>::from(a), bb = kl::Buffer<C>::from(b_stored), bbias = kl::Buffer<C>::from(bias);
  auto bc = kl::Buffer<Out>::from(std::vector<Out>(static_cast<std::size_t>(m) * ldc, sentinel));
  const int stride_bk = layout.b_transposed ? 1 : n, stride_bn = layout.b_transposed ? k : 1;
  const int grid = kl::cdiv(m, G.block_m) * kl::cdiv(n, G.block_n);
  kl::compile<
      kiln::kernels::matmul<kl::Scalar<C>, kl::Scalar<Out>, G.block_m, G.block_n, G.block_k, G.group_m, EPILOGUE>>(
      G.compile_options())
      .launch(kl::Grid(grid), ba, bb, bc, bbias, m, n, k, k, 1, stride_bk, stride_bn, ldc, 1, kP, kSeed, kOffset);

  MatmulProblem problem{.m = m,
                        .n = n,
                        .k = k,
                        .epilogue = EPILOGUE,
                        .p = kP,
                        .seed = static_cast<std::uint64_t>(kSeed),
                        .offset = kOffset,
                        .out_dtype = kl::dtype_v<Out>};
  const auto ref = kiln::kernels::matmul_reference(a, b, bias, problem);
  const auto stored = bc.to_host();
  std::vector<Out> got, padding;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < ldc; ++j) (j < n ? got : padding).push_back(stored[static_cast<std::size_t>(i) * ldc + j]);
  expect_within(got, ref.values, ref.bounds, what.c_str());
  expect_equal(padding, std::vector<Out>(padding.size(), sentinel), (what + ", padding of C").c_str());
  if constexpr (EPILOGUE.dropout) {
    // The test must see dropout: some elements dropped, most kept.
    const auto dropped = std::count(ref.bounds.begin(), ref.bounds.end(), 0.0);
    if (m * n >= 64) {
      EXPECT_GT(dropped, 0) << what;
      EXPECT_LT(dropped, m * n / 2) << what;
    }
  }
}

// The shapes of every case: odd sizes spanning several tiles with the last
// group of tile rows shorter than GROUP_M (37 rows: 3 tile rows), sizes below
// one tile, K not a multiple of BLOCK_K, exact multiples, and K = 1.
const std::array<std::array<int, 3>, 5> kShapes = {{{37, 29, 45}, {5, 3, 7}, {32, 48, 33}, {16, 32, 64}, {20, 17, 1}}};

template <class C, class Out, Epilogue EPILOGUE>
void check_shapes() {
  for (const auto& [m, n, k] : kShapes) check_matmul<C, Out, EPILOGUE>(m, n, k);
}

template <class C>
class Matmul : public ::testing::Test {};
using InputTypes = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(Matmul, InputTypes, kiln::test::DTypeNames);

TYPED_TEST(Matmul, NoEpilogue) { check_shapes<TypeParam, TypeParam, Epilogue{}>(); }

TYPED_TEST(Matmul, Bias) { check_shapes<TypeParam, TypeParam, Epilogue{.bias = true}>(); }

TYPED_TEST(Matmul, BiasGeluErf) { check_shapes<TypeParam, TypeParam, Epilogue{.bias = true, .gelu = Gelu::erf}>(); }

TYPED_TEST(Matmul, BiasGeluTanh) { check_shapes<TypeParam, TypeParam, Epilogue{.bias = true, .gelu = Gelu::tanh}>(); }

TYPED_TEST(Matmul, Dropout) { check_shapes<TypeParam, TypeParam, Epilogue{.dropout = true}>(); }

TYPED_TEST(Matmul, BiasGeluErfDropout) {
  check_shapes<TypeParam, TypeParam, Epilogue{.bias = true, .gelu = Gelu::erf, .dropout = true}>();
}

// The cast epilogue: f32 inputs to f16 output, narrow inputs to f32 output.
TYPED_TEST(Matmul, BiasGeluTanhDropoutCast) {
  using Out = std::conditional_t<std::is_same_v<TypeParam, float>, kl::half, float>;
  check_shapes<TypeParam, Out, Epilogue{.bias = true, .gelu = Gelu::tanh, .dropout = true}>();
}

TYPED_TEST(Matmul, PaddedCAndTransposedB) {
  constexpr Epilogue epilogue{.bias = true, .gelu = Gelu::erf, .dropout = true};
  check_matmul<TypeParam, TypeParam, epilogue>(37, 29, 45, {.c_padding = 5});
  check_matmul<TypeParam, TypeParam, epilogue>(37, 29, 45, {.b_transposed = true});
}

// The library's configurations: 2 x 2 tiles of sm_90a's 128 x 128 with
// tails in M and N, and K = 100 (a full BLOCK_K of 64 then a tail; sm_80's
// 32: three and a tail), every epilogue step on.
TYPED_TEST(Matmul, TheLibrarysConfigurations) {
  constexpr Epilogue epilogue{.bias = true, .gelu = Gelu::erf, .dropout = true};
  check_matmul<TypeParam, TypeParam, epilogue, kiln::kernels::kMatmulSm80>(200, 136, 100);
  check_matmul<TypeParam, TypeParam, epilogue, kiln::kernels::kMatmulSm90a>(200, 136, 100);
}

// Program pid records the tile grouped_tile gives it.
template <int GROUP_M>
void tile_order(kl::Ptr<kl::i32> tile_rows, kl::Ptr<kl::i32> tile_cols, kl::i32 tiles_m, kl::i32 tiles_n) {
  auto pid = kl::program_id(0);
  auto [row, col] = kiln::kernels::grouped_tile<GROUP_M>(pid, tiles_m, tiles_n);
  kl::store(tile_rows + pid, row);
  kl::store(tile_cols + pid, col);
}

TEST(GroupedOrdering, VisitsEveryTileOnceGroupByGroup) {
  constexpr int group_m = 3;
  // 7 tile rows: two full groups of 3 and a last group of 1; and a grid
  // smaller than one group.
  for (const auto [tiles_m, tiles_n] : {std::array<int, 2>{7, 5}, std::array<int, 2>{2, 4}, std::array<int, 2>{1, 1}}) {
    const int programs = tiles_m * tiles_n;
    kl::Buffer<std::int32_t> rows(programs), cols(programs);
    kl::compile<tile_order<group_m>>().launch(kl::Grid(programs), rows, cols, tiles_m, tiles_n);
    const auto r = rows.to_host(), c = cols.to_host();
    std::vector<int> visits(programs, 0);
    for (int pid = 0; pid < programs; ++pid) {
      ASSERT_TRUE(r[pid] >= 0 && r[pid] < tiles_m && c[pid] >= 0 && c[pid] < tiles_n)
          << "program " << pid << " got tile (" << r[pid] << ", " << c[pid] << ")";
      ++visits[r[pid] * tiles_n + c[pid]];
      // The programs of group g cover the tile rows [g * GROUP_M, (g + 1) * GROUP_M).
      EXPECT_EQ(r[pid] / group_m, pid / (group_m * tiles_n)) << "program " << pid;
      // Within a group, consecutive programs walk down a column first.
      if (pid > 0 && r[pid] / group_m == r[pid - 1] / group_m && c[pid] == c[pid - 1]) {
        EXPECT_EQ(r[pid], r[pid - 1] + 1) << "program " << pid;
      }
    }
    EXPECT_EQ(visits, std::vector<int>(programs, 1)) << tiles_m << " x " << tiles_n << " tiles";
  }
}

}  // namespace
