// kl::debug_barrier() orders a program's memory accesses (OPS.md, "Memory
// order inside a program"): a tile reversed in place, RoPE's rotate-half
// written in place and a tile read back reversed after its store are right
// with the barrier between the load and the store, on every device. Without
// the barrier the cpu device reports them (tests/error/hazard_error_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/printer.hpp"
#include "kiln/kiln.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;

void reverse_in_place(kl::Ptr<kl::f32> x) {
  auto o = kl::arange<1024>();
  auto v = kl::load(x + 1023 - o);
  kl::debug_barrier();
  kl::store(x + o, v);
}

// out[d] = x[d] cos[d] + rotate_half(x)[d] sin[d], where rotate_half(x) is
// (-x[64:], x[:64]), over rows of 128, written back into the row.
void rotate_half_in_place(kl::Ptr<kl::f32> rows, kl::Ptr<kl::f32> cos, kl::Ptr<kl::f32> sin) {
  auto d = kl::arange<128>();
  auto row = rows + kl::program_id(0) * 128;
  auto x = kl::load(row + d);
  auto partner = kl::load(row + (d + 64) % 128);
  auto rotated = kl::where(d < 64, -partner, partner);
  auto result = x * kl::load(cos + d) + rotated * kl::load(sin + d);
  kl::debug_barrier();
  kl::store(row + d, result);
}

// Stores 2 * o + 1 at x[o] (in a loop of n rounds, a barrier in each), then
// reads the tile back reversed.
void read_back_reversed(kl::Ptr<kl::i32> x, kl::Ptr<kl::i32> out, kl::i32 rounds) {
  auto o = kl::arange<256>();
  kl::Var total = kl::zeros<kl::i32, 256>();
  for (auto r : kl::range(0, rounds)) {
    kl::store(x + o, o * 2 + r);
    kl::debug_barrier();
    total += kl::load(x + 255 - o);
    kl::debug_barrier();
  }
  kl::store(out + o, total);
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  return kiln::test::random_values<float>(n, seed, -2, 2);
}

TEST(ProgramOrder, ReverseInPlaceWithABarrier) {
  const std::vector<float> host = random_floats(1024, 11);
  auto x = kl::Buffer<float>::from(host);
  kl::compile<reverse_in_place>().launch(kl::Grid(1), x);
  const std::vector<float> got = x.to_host();
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(got[i], host[1023 - i]) << "element " << i;
}

TEST(ProgramOrder, RotateHalfInPlaceWithABarrier) {
  constexpr int kRows = 8;
  const std::vector<float> host = random_floats(kRows * 128, 12), cos = random_floats(128, 13),
                           sin = random_floats(128, 14);
  auto rows = kl::Buffer<float>::from(host);
  auto bcos = kl::Buffer<float>::from(cos), bsin = kl::Buffer<float>::from(sin);
  kl::compile<rotate_half_in_place>().launch(kl::Grid(kRows), rows, bcos, bsin);
  const std::vector<float> got = rows.to_host();
  for (int r = 0; r < kRows; ++r)
    for (int d = 0; d < 128; ++d) {
      const float* x = &host[r * 128];
      const float rotated = d < 64 ? -x[d + 64] : x[d - 64];
      // Two products and a sum in f32 (or a product and an fma): at most
      // three roundings, each within u = 2^-24 of |x cos| + |rotated sin|.
      const double want = double(x[d]) * cos[d] + double(rotated) * sin[d];
      const double scale = std::abs(double(x[d]) * cos[d]) + std::abs(double(rotated) * sin[d]);
      ASSERT_NEAR(got[r * 128 + d], want, 3 * 0x1p-24 * scale) << "row " << r << " element " << d;
    }
}

TEST(ProgramOrder, StoreThenReadBackInALoop) {
  constexpr int kRounds = 5;
  kl::Buffer<std::int32_t> x(256), out(256);
  kl::compile<read_back_reversed>().launch(kl::Grid(1), x, out, kRounds);
  const std::vector<std::int32_t> got = out.to_host();
  for (int i = 0; i < 256; ++i) {
    std::int32_t want = 0;
    for (int r = 0; r < kRounds; ++r) want += 2 * (255 - i) + r;
    ASSERT_EQ(got[i], want) << "element " << i;
  }
}

TEST(ProgramOrder, TheOptimizerKeepsTheBarrier) {
  const std::string ir = kiln::ir::print(kl::compile<reverse_in_place>().ir());
  EXPECT_NE(ir.find("  barrier"), std::string::npos) << ir;
}

}  // namespace
