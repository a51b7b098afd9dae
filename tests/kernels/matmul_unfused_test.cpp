// The fused matmul against the unfused sequence (plain matmul into f32,
// bias_gelu, standalone dropout) on the same inputs, seed and offset: both
// within their bounds of the double reference, and the same elements dropped
// bit for bit, which must be exactly those the host Philox drops.
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "correctness/reference_support.hpp"
#include "kiln/kernels/matmul_unfused.hpp"

namespace {

namespace kl = kiln;
using kiln::kernels::Epilogue;
using kiln::kernels::Gelu;
using kiln::kernels::MatmulProblem;
using kiln::test::expect_equal;
using kiln::test::expect_within;
using kiln::test::random_values;

constexpr int kBlockM = 32, kBlockN = 16, kBlockK = 8, kGroupM = 4, kDropoutBlock = 128;
constexpr std::int64_t kSeed = 0x0F0F'1234'5555'AAAB;
constexpr std::uint32_t kOffset = 99;

/// True where an element is +0 (the value dropout writes; a kept GELU output
/// that underflows is -0 since GELU is negative there).
template <class Out>
std::vector<std::uint8_t> positive_zeros(const std::vector<Out>& values) {
  std::vector<std::uint8_t> out;
  for (Out v : values) {
    if constexpr (std::is_same_v<Out, float>) out.push_back(std::bit_cast<std::uint32_t>(v) == 0);
    else out.push_back(v.bits == 0);
  }
  return out;
}

template <class C, class Out, Epilogue EPILOGUE>
void check_fused_equals_unfused(int m, int n, int k, float p) {
  const std::string what =
      std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " p=" + std::to_string(p);
  const auto a = random_values<C>(static_cast<std::size_t>(m) * k, 21 + m);
  const auto b = random_values<C>(static_cast<std::size_t>(k) * n, 22 + n);
  const auto bias = random_values<C>(static_cast<std::size_t>(n), 23 + k);
  auto ba = kl::Buffer<C>::from(a), bb = kl::Buffer<C>::from(b), bbias = kl::Buffer<C>::from(bias);
  const int elements = m * n;
  const int tiles = kl::cdiv(m, kBlockM) * kl::cdiv(n, kBlockN);

  kl::Buffer<Out> fused(elements);
  kl::compile<kiln::kernels::matmul<kl::Scalar<C>, kl::Scalar<Out>, kBlockM, kBlockN, kBlockK, kGroupM, EPILOGUE>>()
      .launch(kl::Grid(tiles), ba, bb, fused, bbias, m, n, k, k, 1, n, 1, n, 1, p, kSeed, kOffset);

  kl::Buffer<float> product(elements);
  kl::Buffer<Out> activated(elements), unfused(elements);
  kl::compile<kiln::kernels::plain_matmul<kl::Scalar<C>, kBlockM, kBlockN, kBlockK, kGroupM>>().launch(
      kl::Grid(tiles), ba, bb, product, bbias, m, n, k, k, 1, n, 1, n, 1, p, kSeed, kOffset);
  kl::compile<kiln::kernels::bias_gelu<kl::Scalar<C>, kl::Scalar<Out>, kBlockM, kBlockN, EPILOGUE>>().launch(
      kl::Grid(kl::cdiv(m, kBlockM), kl::cdiv(n, kBlockN)), product, bbias, activated, m, n, n, n);
  kl::compile<kiln::kernels::dropout<kl::Scalar<Out>, kDropoutBlock>>().launch(
      kl::Grid(kl::cdiv(elements, kDropoutBlock)), activated, unfused, elements, p, kSeed, kOffset);

  MatmulProblem problem{.m = m,
                        .n = n,
                        .k = k,
                        .epilogue = EPILOGUE,
                        .p = p,
                        .seed = static_cast<std::uint64_t>(kSeed),
                        .offset = kOffset,
                        .out_dtype = kl::dtype_v<Out>};
  const auto fused_ref = kiln::kernels::matmul_reference(a, b, bias, problem);
  problem.output_roundings = 2;
  const auto unfused_ref = kiln::kernels::matmul_reference(a, b, bias, problem);
  const auto got_fused = fused.to_host(), got_unfused = unfused.to_host();
  expect_within(got_fused, fused_ref.values, fused_ref.bounds, ("fused " + what).c_str());
  expect_within(got_unfused, unfused_ref.values, unfused_ref.bounds, ("unfused " + what).c_str());

  // The dropped elements: +0 in both outputs, exactly where the host drops.
  std::vector<std::uint8_t> host_dropped(elements);
  for (int e = 0; e < elements; ++e)
    host_dropped[e] = !kiln::kernels::dropout_keep_host(static_cast<std::uint64_t>(kSeed),
                                                        kOffset + static_cast<std::uint32_t>(e), p);
  expect_equal(positive_zeros(got_fused), positive_zeros(got_unfused),
               ("dropped elements, fused vs unfused " + what).c_str());
  expect_equal(positive_zeros(got_fused), host_dropped, ("dropped elements, fused vs host " + what).c_str());
}

template <class C>
class FusedVsUnfused : public ::testing::Test {};
using InputTypes = ::testing::Types<float, kl::half, kl::bfloat16>;
TYPED_TEST_SUITE(FusedVsUnfused, InputTypes, kiln::test::DTypeNames);

TYPED_TEST(FusedVsUnfused, BiasGeluErfDropout) {
  constexpr Epilogue epilogue{.bias = true, .gelu = Gelu::erf, .dropout = true};
  check_fused_equals_unfused<TypeParam, TypeParam, epilogue>(67, 45, 37, 0.3f);
  check_fused_equals_unfused<TypeParam, TypeParam, epilogue>(7, 9, 5, 0.5f);
}

TYPED_TEST(FusedVsUnfused, BiasGeluTanhDropoutIntoF32) {
  constexpr Epilogue epilogue{.bias = true, .gelu = Gelu::tanh, .dropout = true};
  check_fused_equals_unfused<TypeParam, float, epilogue>(40, 70, 24, 0.1f);
}

TYPED_TEST(FusedVsUnfused, DropoutOnly) {
  check_fused_equals_unfused<TypeParam, TypeParam, Epilogue{.dropout = true}>(33, 50, 20, 0.6f);
}

}  // namespace
