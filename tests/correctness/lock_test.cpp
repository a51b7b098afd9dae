// The lock-and-count pattern of Triton's layer-norm backward tutorial, on
// every device: each program computes dx for its row and adds its row's
// dy * xhat and dy into the partial sums of its group under a spin lock; the
// first program of a group (the count is 0) stores instead of adding, so the
// partial buffers start as garbage. Right only when the program's threads
// agree on the count they load although one of them sets it at once (a
// scalar load through memory the kernel writes is done once and shared,
// codegen_memory.cpp; the exchange is relaxed, so no barrier of its own
// keeps it behind the other threads' loads) and the lock's release follows
// every thread's stores (codegen_atomic.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"

namespace {

namespace kl = kiln;
using PF = kl::Ptr<kl::f32>;

template <int BLOCK_N, int GROUPS>
void layer_norm_backward_locked(PF dx, PF dy, PF partial_dw, PF partial_db, PF x, PF w, PF mean, PF rstd,
                                kl::Ptr<kl::i32> locks, kl::i32 n) {
  auto row = kl::program_id(0);
  auto cols = kl::arange<BLOCK_N>();
  auto mask = cols < n;
  auto x_row = kl::load(x + row * n + cols, mask);
  auto dy_row = kl::load(dy + row * n + cols, mask);
  auto w_row = kl::load(w + cols, mask);
  auto row_rstd = kl::load(rstd + row);
  auto xhat = kl::where(mask, (x_row - kl::load(mean + row)) * row_rstd, 0.0f);
  auto wdy = kl::where(mask, w_row * dy_row, 0.0f);
  auto c1 = kl::sum(xhat * wdy, kl::axis<0>) / kl::cast<kl::f32>(n);
  auto c2 = kl::sum(wdy, kl::axis<0>) / kl::cast<kl::f32>(n);
  kl::store(dx + row * n + cols, (wdy - (xhat * c1 + c2)) * row_rstd, mask);

  auto group = row % GROUPS;
  auto lock = locks + group;
  auto count = locks + GROUPS + group;
  auto dw_row = partial_dw + group * n + cols;
  auto db_row = partial_db + group * n + cols;
  kl::Var dw = dy_row * xhat;
  kl::Var db = dy_row;
  kl::while_([&] { return kl::atomic_cas(lock, 0, 1) == 1; }, [] {});
  kl::if_(
      kl::load(count) == 0, [&] { kl::atomic_xchg(count, 1, {.order = kl::MemoryOrder::relaxed}); },
      [&] {
        dw += kl::load(dw_row, mask);
        db += kl::load(db_row, mask);
      });
  kl::store(dw_row, dw, mask);
  kl::store(db_row, db, mask);
  kl::atomic_xchg(lock, 0);
}

TEST(Lock, LayerNormBackwardAccumulatesUnderALock) {
  constexpr int kRows = 96, kCols = 100, kGroups = 8;
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f), spread(0.5f, 2.0f), garbage(1e5f, 1e6f);
  std::vector<float> x(kRows * kCols), dy(kRows * kCols), w(kCols), mean(kRows), rstd(kRows);
  for (float& v : x) v = value(rng);
  for (float& v : dy) v = value(rng);
  for (float& v : w) v = spread(rng);
  for (int r = 0; r < kRows; ++r) {
    double sum = 0, squares = 0;
    for (int c = 0; c < kCols; ++c) sum += x[r * kCols + c];
    mean[r] = static_cast<float>(sum / kCols);
    for (int c = 0; c < kCols; ++c) squares += std::pow(x[r * kCols + c] - mean[r], 2);
    rstd[r] = static_cast<float>(1 / std::sqrt(squares / kCols + 1e-5));
  }
  std::vector<float> stale(kGroups * kCols);
  for (float& v : stale) v = garbage(rng);  // the first program of each group must overwrite these

  auto bdx = kl::Buffer<float>(kRows * kCols);
  auto bdy = kl::Buffer<float>::from(dy), bx = kl::Buffer<float>::from(x), bw = kl::Buffer<float>::from(w);
  auto bmean = kl::Buffer<float>::from(mean), brstd = kl::Buffer<float>::from(rstd);
  auto bdw = kl::Buffer<float>::from(stale), bdb = kl::Buffer<float>::from(stale);
  auto locks = kl::Buffer<std::int32_t>::from(std::vector<std::int32_t>(2 * kGroups, 0));
  kl::compile<layer_norm_backward_locked<128, kGroups>>().launch(kl::Grid(kRows), bdx, bdy, bdw, bdb, bx, bw, bmean,
                                                                 brstd, locks, kCols);

  // Each partial sum adds kRows / kGroups = 12 f32 terms in an order the
  // lock decides: within 12 u of the sum of their magnitudes (u = 2^-24),
  // after the product dy * xhat, itself within 3 u of its exact value.
  const std::vector<float> got_dw = bdw.to_host(), got_db = bdb.to_host(), got_dx = bdx.to_host();
  const double u = 0x1p-24;
  for (int g = 0; g < kGroups; ++g)
    for (int c = 0; c < kCols; ++c) {
      double dw = 0, db = 0, dw_magnitude = 0, db_magnitude = 0;
      for (int r = g; r < kRows; r += kGroups) {
        const double xhat = (double(x[r * kCols + c]) - mean[r]) * rstd[r];
        dw += dy[r * kCols + c] * xhat;
        db += dy[r * kCols + c];
        dw_magnitude += std::abs(dy[r * kCols + c] * xhat);
        db_magnitude += std::abs(dy[r * kCols + c]);
      }
      ASSERT_NEAR(got_dw[g * kCols + c], dw, 15 * u * dw_magnitude) << "group " << g << " column " << c;
      ASSERT_NEAR(got_db[g * kCols + c], db, 12 * u * db_magnitude) << "group " << g << " column " << c;
    }
  // dx: two sums of kCols terms and a few roundings around them.
  for (int r = 0; r < kRows; ++r) {
    double c1 = 0, c2 = 0, magnitude = 0;
    std::vector<double> xhat(kCols), wdy(kCols);
    for (int c = 0; c < kCols; ++c) {
      xhat[c] = (double(x[r * kCols + c]) - mean[r]) * rstd[r];
      wdy[c] = double(w[c]) * dy[r * kCols + c];
      c1 += xhat[c] * wdy[c];
      c2 += wdy[c];
      magnitude += std::abs(xhat[c] * wdy[c]) + std::abs(wdy[c]);
    }
    c1 /= kCols;
    c2 /= kCols;
    for (int c = 0; c < kCols; ++c) {
      const double want = (wdy[c] - (xhat[c] * c1 + c2)) * rstd[r];
      const double bound = (kCols + 8) * u * (std::abs(wdy[c]) + magnitude / kCols * (1 + std::abs(xhat[c]))) * rstd[r];
      ASSERT_NEAR(got_dx[r * kCols + c], want, bound) << "row " << r << " column " << c;
    }
  }
  const std::vector<std::int32_t> got_locks = locks.to_host();
  for (int g = 0; g < kGroups; ++g) {
    EXPECT_EQ(got_locks[g], 0) << "lock " << g << " is not released";
    EXPECT_EQ(got_locks[kGroups + g], 1) << "count " << g;
  }
}

}  // namespace
