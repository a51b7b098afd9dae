// Correctness of the program model: program_id and num_programs over 1-D,
// 2-D and 3-D grids, arange<N>() and arange<N>(start) over masked tails, and
// cdiv on literals, scalars and tiles of every integer dtype.
#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;
using kiln::test::random_values;

// Each program writes its ids and the grid size at its row-major position.
void grid_ids(kl::Ptr<kl::i32> out) {
  auto px = kl::program_id(0), py = kl::program_id(1), pz = kl::program_id(2);
  auto nx = kl::num_programs(0), ny = kl::num_programs(1), nz = kl::num_programs(2);
  auto base = ((pz * ny + py) * nx + px) * 6;
  kl::store(out + base, px);
  kl::store(out + (base + 1), py);
  kl::store(out + (base + 2), pz);
  kl::store(out + (base + 3), nx);
  kl::store(out + (base + 4), ny);
  kl::store(out + (base + 5), nz);
}

class ProgramModel : public ::testing::TestWithParam<kl::Grid> {};

TEST_P(ProgramModel, ProgramIdAndNumProgramsCoverTheGrid) {
  const kl::Grid g = GetParam();
  const std::size_t programs = static_cast<std::size_t>(g.x) * g.y * g.z;
  // Random contents, so that an element no program writes is noticed.
  auto out = kiln::test::to_buffer(random_values<std::int32_t>(programs * 6, 11, -1000, -1));
  kl::compile<grid_ids>().launch(g, out);
  std::vector<std::int32_t> want(programs * 6);
  for (int z = 0; z < g.z; ++z)
    for (int y = 0; y < g.y; ++y)
      for (int x = 0; x < g.x; ++x) {
        const std::size_t base = ((static_cast<std::size_t>(z) * g.y + y) * g.x + x) * 6;
        for (int k = 0; k < 6; ++k) want[base + k] = std::vector<int>{x, y, z, g.x, g.y, g.z}[k];
      }
  expect_equal(out.to_host(), want, "program_id/num_programs");
}

INSTANTIATE_TEST_SUITE_P(Grids, ProgramModel,
                         ::testing::Values(kl::Grid(7), kl::Grid(5, 3), kl::Grid(3, 4, 2), kl::Grid(1, 1, 5)));

// arange<BLOCK>(START) per program, offset by 1000 * pid, over a masked tail;
// each program also records cdiv(n, BLOCK) computed from a scalar and a literal.
template <int BLOCK, int START>
void arange_kernel(kl::Ptr<kl::i32> out, kl::Ptr<kl::i32> blocks, kl::i32 n) {
  auto pid = kl::program_id(0);
  auto offs = pid * BLOCK + kl::arange<BLOCK>();
  if constexpr (START == 0) kl::store(out + offs, kl::arange<BLOCK>() + pid * 1000, offs < n);
  else kl::store(out + offs, kl::arange<BLOCK>(START) + pid * 1000, offs < n);
  kl::store(blocks + pid, kl::cdiv(n, BLOCK));
}

template <int BLOCK, int START>
void check_arange(int n) {
  const int grid = kl::cdiv(n, BLOCK);
  auto out = kiln::test::to_buffer(random_values<std::int32_t>(n, 21, -1e6, -5e5));
  auto blocks = kiln::test::to_buffer(random_values<std::int32_t>(grid, 22, -100, -1));
  kl::compile<arange_kernel<BLOCK, START>>().launch(kl::Grid(grid), out, blocks, n);
  std::vector<std::int32_t> want(n);
  for (int i = 0; i < n; ++i) want[i] = START + i % BLOCK + 1000 * (i / BLOCK);
  expect_equal(out.to_host(), want, "arange");
  expect_equal(blocks.to_host(), std::vector<std::int32_t>(grid, grid), "cdiv(n, BLOCK) in the kernel");
}

TEST(Arange, FromZero) { check_arange<64, 0>(1000); }
TEST(Arange, FromNegativeStart) { check_arange<16, -7>(37); }
TEST(Arange, FromPositiveStartSingleElementTiles) { check_arange<1, 5>(9); }

// cdiv on tiles. Masked-off lanes load the divisor 1, not 0: a division by
// zero is a fault even where the mask is false.
template <class C, int BLOCK>
void cdiv_kernel(kl::Ptr<kl::Scalar<C>> a, kl::Ptr<kl::Scalar<C>> b, kl::Ptr<kl::Scalar<C>> out, kl::i32 n) {
  auto offs = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offs < n;
  kl::store(out + offs, kl::cdiv(kl::load(a + offs, mask), kl::load(b + offs, mask, {.other = 1})), mask);
}

template <class T>
class Cdiv : public ::testing::Test {};
TYPED_TEST_SUITE(Cdiv, kiln::test::IntTypes, kiln::test::DTypeNames);

TYPED_TEST(Cdiv, MatchesCeilingDivision) {
  using T = TypeParam;
  constexpr int kBlock = 32;
  const int n = 501;
  // a + b - 1 must not overflow: both stay below a quarter of the range.
  const double top = kiln::test::max_finite<T>() / 4;
  auto a = random_values<T>(n, 31, 0, top);
  auto b = random_values<T>(n, 32, 1, top);
  for (int i = 0; i < n; i += 3) b[i] = static_cast<T>(1 + i % 7);  // small divisors: quotients above 1
  kl::Buffer<T> out(n);
  kl::compile<cdiv_kernel<T, kBlock>>().launch(kl::Grid(kl::cdiv(n, kBlock)), kiln::test::to_buffer(a),
                                               kiln::test::to_buffer(b), out, n);
  std::vector<T> want(n);
  for (int i = 0; i < n; ++i) want[i] = static_cast<T>(a[i] / b[i] + (a[i] % b[i] != 0 ? 1 : 0));
  expect_equal(out.to_host(), want, "cdiv");
}

}  // namespace
