// RMS norm forward against its double reference: y and the row rstds, for
// f32, f16 and bf16, over row lengths below, at, and past one column tile (and
// not multiples of it), odd row counts, and inputs with a nonzero mean (so that
// confusing mean(x^2) with the variance would fail).
#include <cstdint>
#include <string>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/rms_norm.hpp"

namespace {

namespace kl = kiln;
namespace kk = kiln::kernels;
using kiln::test::expect_within;
using kiln::test::random_values;

constexpr float kEps = 1e-5f;

// Runs `launch` (which fills y and rstd) on x uniform in [-1, 5] and weight in
// [-1.5, 1.5], and checks both against the reference within rms_norm_error_bounds.
template <class C, class Launch>
void check_rms_norm(std::int64_t rows, std::int64_t n, Launch launch) {
  const auto x_host = random_values<C>(static_cast<std::size_t>(rows * n), 17 + n, -1, 5);
  const auto weight_host = random_values<C>(static_cast<std::size_t>(n), 18 + n, -1.5, 1.5);
  auto x = kl::Buffer<C>::from(x_host);
  auto weight = kl::Buffer<C>::from(weight_host);
  kl::Buffer<C> y(x_host.size());
  kl::Buffer<float> rstd(static_cast<std::size_t>(rows));
  launch(x, weight, y, rstd);
  const auto ref = kk::rms_norm_reference(x_host, weight_host, rows, n, kEps);
  const auto bounds = kk::rms_norm_error_bounds(ref, n, kl::dtype_v<C>);
  const std::string shape = "rows=" + std::to_string(rows) + " n=" + std::to_string(n);
  expect_within(y.to_host(), ref.y, bounds.y, ("y " + shape).c_str());
  expect_within(rstd.to_host(), ref.rstd, bounds.rstd, ("rstd " + shape).c_str());
}

template <class C>
class RmsNorm : public ::testing::Test {};
using NormTypes = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(RmsNorm, NormTypes, kiln::test::DTypeNames);

// The host's tile choice: one tile for n up to 4096 (1, 5 and 1000 leave most
// of it masked, 1024 fills it), two 4096-wide tiles for 5000.
TYPED_TEST(RmsNorm, MatchesReferenceWithTheChosenTile) {
  using C = TypeParam;
  struct Shape {
    std::int64_t rows, n;
  };
  for (Shape s : {Shape{1, 1}, Shape{7, 5}, Shape{3, 1024}, Shape{5, 1000}, Shape{3, 5000}}) {
    check_rms_norm<C>(s.rows, s.n,
                      [&](auto&... buffers) { kk::rms_norm_forward_launch<C>(buffers..., s.rows, s.n, kEps); });
  }
}

// A 16-wide tile walks rows of 17, 37 and 100 in 2 to 7 tiles with a masked tail.
TYPED_TEST(RmsNorm, SumsSquaresOverManyTiles) {
  using C = TypeParam;
  constexpr int kBlock = 16;
  auto kernel = kl::compile<kk::rms_norm_forward<kl::Scalar<C>, kBlock>>();
  for (std::int64_t n : {1, 16, 17, 37, 100}) {
    const std::int64_t rows = 9;
    check_rms_norm<C>(rows, n,
                      [&](auto&... buffers) { kernel.launch(kl::Grid(static_cast<int>(rows)), buffers..., n, kEps); });
  }
}

}  // namespace
