// An autotuned f16 matmul (f32 accumulation) over block sizes, warps and
// stages, keyed by (M, N, K), on the default device: on `cpu` and `emu` the
// first configuration launches; on `cuda` (the `gpu` rerun) each one is timed
// and the fastest launches. Either way the product is within the inner-product
// bound of the double reference, for two shapes with tails.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::inner_products;
using kiln::test::InnerProducts;
using kiln::test::random_values;

struct Blocks {
  int m, n;
};

template <int BM, int BN, int BK>
void matmul(kl::Ptr<kl::f16> a, kl::Ptr<kl::f16> b, kl::Ptr<kl::f32> c, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BN + kl::arange<BN>());
  auto k_across = kl::expand_dims<0>(kl::arange<BK>());
  auto k_down = kl::expand_dims<1>(kl::arange<BK>());
  kl::Var acc = kl::zeros<kl::f32, BM, BN>();
  for (auto k0 : kl::range(0, k, BK)) {
    auto ta = kl::load(a + rows * k + (k0 + k_across), (rows < m) & (k0 + k_across < k));
    auto tb = kl::load(b + (k0 + k_down) * n + cols, (k0 + k_down < k) & (cols < n));
    acc = kl::dot(ta, tb, acc);
  }
  kl::store(c + rows * n + cols, acc, (rows < m) & (cols < n));
}

kl::CompileOptions warps_and_stages(int num_warps, int num_stages) {
  kl::CompileOptions options;
  options.num_warps = num_warps;
  options.num_stages = num_stages;
  return options;
}

TEST(Autotune, MatmulMatchesTheReferenceWithTheChosenConfiguration) {
  const auto tuned = kl::autotune(kl::config<matmul<32, 32, 32>>(warps_and_stages(4, 2), Blocks{32, 32}),
                                  kl::config<matmul<64, 32, 32>>(warps_and_stages(4, 3), Blocks{64, 32}),
                                  kl::config<matmul<64, 64, 32>>(warps_and_stages(8, 3), Blocks{64, 64}))
                         .key<3, 4, 5>();
  const kl::Device device = kl::Device::default_device();
  for (const auto [m, n, k] : {std::array{70, 40, 100}, std::array{33, 65, 48}}) {
    const auto a = random_values<kl::half>(static_cast<std::size_t>(m) * k, 81 + m);
    const auto b = random_values<kl::half>(static_cast<std::size_t>(k) * n, 82 + n);
    const auto a_buffer = kl::Buffer<kl::half>::from(a), b_buffer = kl::Buffer<kl::half>::from(b);
    auto c = kl::Buffer<float>::from(random_values<float>(static_cast<std::size_t>(m) * n, 83));
    tuned.launch([&](const Blocks& blocks) { return kl::Grid(kl::cdiv(m, blocks.m), kl::cdiv(n, blocks.n)); }, a_buffer,
                 b_buffer, c, m, n, k);
    // f16 products are exact in f32; k f32 additions within gamma_k, plus
    // the double reference's own rounding.
    const InnerProducts want = inner_products(a, b, m, n, k, static_cast<std::size_t>(n), 1);
    std::vector<double> bound;
    for (double magnitude : want.magnitudes)
      bound.push_back((gamma_bound(k, 0x1p-24) + gamma_bound(k, 0x1p-53)) * magnitude);
    const std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    expect_within(c.to_host(), want.sums, bound, what.c_str());
    const auto choice = tuned.choice({m, n, k});
    ASSERT_TRUE(choice) << what;
    if (device.kind() == kl::Device::Kind::cuda) EXPECT_TRUE(choice->seconds[choice->index]) << what;
    else EXPECT_EQ(choice->index, 0u) << what;
  }
}

}  // namespace
