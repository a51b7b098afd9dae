// Layer norm backward against its double reference: dx, dw and db for f32,
// f16 and bf16, over row lengths below, at, and past one column tile (and not
// multiples of it), odd row counts, row counts that are not multiples of the
// number of partial rows G or smaller than G, and inputs and gradients with a
// nonzero mean.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/layer_norm.hpp"
#include "kiln/kernels/layer_norm_backward.hpp"

namespace {

namespace kl = kiln;
namespace kk = kiln::kernels;
using kiln::test::expect_within;
using kiln::test::random_values;

constexpr double kEps = 1e-5;

// Buffers of one backward problem: x uniform in [2, 6], dy in [-0.5, 1.5],
// weight in [0.5, 1.5], and the rows' mean and rstd from the double reference
// rounded to f32 (what the forward stores).
template <class C>
struct Problem {
  std::int64_t rows, n;
  int groups;
  std::vector<C> dy, x, weight;
  std::vector<float> mean, rstd;
};

template <class C>
Problem<C> make_problem(std::int64_t rows, std::int64_t n, int groups, std::uint64_t seed) {
  Problem<C> p{rows,
               n,
               groups,
               random_values<C>(static_cast<std::size_t>(rows * n), seed, -0.5, 1.5),
               random_values<C>(static_cast<std::size_t>(rows * n), seed + 1, 2, 6),
               random_values<C>(static_cast<std::size_t>(n), seed + 2, 0.5, 1.5),
               {},
               {}};
  const auto forward = kk::layer_norm_reference(p.x, p.weight, p.weight, rows, n, kEps);
  for (std::int64_t r = 0; r < rows; ++r) {
    p.mean.push_back(static_cast<float>(forward.mean[r]));
    p.rstd.push_back(static_cast<float>(forward.rstd[r]));
  }
  return p;
}

// Runs `launch_rows` (the per-row kernel, given the problem's buffers) and the
// reduce kernel, and checks dx, dw and db within the derived bounds.
template <class C, class LaunchRows>
void check_backward(const Problem<C>& p, LaunchRows launch_rows) {
  auto dy = kl::Buffer<C>::from(p.dy);
  auto x = kl::Buffer<C>::from(p.x);
  auto weight = kl::Buffer<C>::from(p.weight);
  auto mean = kl::Buffer<float>::from(p.mean);
  auto rstd = kl::Buffer<float>::from(p.rstd);
  kl::Buffer<C> dx(p.x.size());
  kl::Buffer<float> dw(static_cast<std::size_t>(p.n)), db(static_cast<std::size_t>(p.n));
  // NaN-filled partials: a partial row the kernels forget to write shows up.
  const std::vector<float> poison(static_cast<std::size_t>(p.groups * p.n), std::numeric_limits<float>::quiet_NaN());
  auto partial_dw = kl::Buffer<float>::from(poison);
  auto partial_db = kl::Buffer<float>::from(poison);
  launch_rows(dy, x, weight, mean, rstd, dx, partial_dw, partial_db);
  const auto reduce_grid =
      static_cast<int>((p.n + kk::layer_norm_reduce_block_cols - 1) / kk::layer_norm_reduce_block_cols);
  kk::layer_norm_backward_reduce_kernel().launch(kl::Grid(reduce_grid), partial_dw, partial_db, dw, db, p.groups, p.n);
  const auto ref = kk::layer_norm_backward_reference(p.dy, p.x, p.weight, p.mean, p.rstd, p.rows, p.n);
  const auto bounds =
      kk::layer_norm_backward_error_bounds(p.dy, p.x, p.weight, p.mean, p.rstd, ref, p.rows, p.n, kl::dtype_v<C>);
  const std::string shape =
      "rows=" + std::to_string(p.rows) + " n=" + std::to_string(p.n) + " G=" + std::to_string(p.groups);
  expect_within(dx.to_host(), ref.dx, bounds.dx, ("dx " + shape).c_str());
  expect_within(dw.to_host(), ref.dw, bounds.dw, ("dw " + shape).c_str());
  expect_within(db.to_host(), ref.db, bounds.db, ("db " + shape).c_str());
}

template <class C>
class LayerNormBackward : public ::testing::Test {};
using NormTypes = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(LayerNormBackward, NormTypes, kiln::test::DTypeNames);

// The host's kernel choice: one register tile for n up to 4096, the tiled
// kernel (two 4096-wide tiles) for 5000; G dividing the rows or not, G larger
// than the row count (programs without rows write zero partials), and 2 * 80
// partial rows, more than the reduce kernel's 16-row tile.
TYPED_TEST(LayerNormBackward, MatchesReferenceWithTheChosenKernel) {
  using C = TypeParam;
  struct Shape {
    std::int64_t rows, n;
    int groups;
  };
  for (Shape s : {Shape{1, 1, 1}, Shape{7, 5, 3}, Shape{3, 5, 8}, Shape{8, 256, 4}, Shape{9, 1000, 4},
                  Shape{4, 5000, 3}, Shape{3, 5000, 5}, Shape{161, 40, 80}}) {
    const auto p = make_problem<C>(s.rows, s.n, s.groups, 31 + s.n + s.groups);
    check_backward(p, [&](auto&... buffers) {
      kk::with_layer_norm_backward_rows<C>(
          s.n, [&](auto kernel) { kernel.launch(kl::Grid(s.groups), buffers..., s.rows, s.n); });
    });
  }
}

// The whole backward as the host runs it, with G from the row count; a second
// run gives bit-identical dw and db (no atomics, a fixed order of additions).
TYPED_TEST(LayerNormBackward, LaunchWithChosenGroupsIsDeterministic) {
  using C = TypeParam;
  const std::int64_t rows = 75, n = 300;
  const int groups = kk::layer_norm_backward_groups(rows, 2);
  ASSERT_EQ(groups, 4);
  const auto p = make_problem<C>(rows, n, groups, 7);
  auto dy = kl::Buffer<C>::from(p.dy);
  auto x = kl::Buffer<C>::from(p.x);
  auto weight = kl::Buffer<C>::from(p.weight);
  auto mean = kl::Buffer<float>::from(p.mean);
  auto rstd = kl::Buffer<float>::from(p.rstd);
  kl::Buffer<C> dx(p.x.size());
  kl::Buffer<float> dw(n), db(n), partial_dw(groups * n), partial_db(groups * n);
  kk::layer_norm_backward_launch<C>(dy, x, weight, mean, rstd, dx, dw, db, partial_dw, partial_db, rows, n, groups);
  const auto ref = kk::layer_norm_backward_reference(p.dy, p.x, p.weight, p.mean, p.rstd, rows, n);
  const auto bounds =
      kk::layer_norm_backward_error_bounds(p.dy, p.x, p.weight, p.mean, p.rstd, ref, rows, n, kl::dtype_v<C>);
  expect_within(dx.to_host(), ref.dx, bounds.dx, "dx");
  expect_within(dw.to_host(), ref.dw, bounds.dw, "dw");
  expect_within(db.to_host(), ref.db, bounds.db, "db");
  const auto first_dw = dw.to_host(), first_db = db.to_host();
  kk::layer_norm_backward_launch<C>(dy, x, weight, mean, rstd, dx, dw, db, partial_dw, partial_db, rows, n, groups);
  kiln::test::expect_equal(dw.to_host(), first_dw, "dw of a second run");
  kiln::test::expect_equal(db.to_host(), first_db, "db of a second run");
}

// The tiled kernel with a 16-wide tile: rows of 1, 16, 37 and 100 columns in
// 1 to 7 tiles with a masked tail, G = 3 over 7 rows.
TYPED_TEST(LayerNormBackward, TiledKernelOverManyTiles) {
  using C = TypeParam;
  constexpr int kBlock = 16;
  auto kernel = kl::compile<kk::layer_norm_backward_rows_tiled<kl::Scalar<C>, kBlock>>();
  for (std::int64_t n : {1, 16, 37, 100}) {
    const std::int64_t rows = 7;
    const int groups = 3;
    const auto p = make_problem<C>(rows, n, groups, 3 + n);
    check_backward(p, [&](auto&... buffers) { kernel.launch(kl::Grid(groups), buffers..., rows, n); });
  }
}

}  // namespace
