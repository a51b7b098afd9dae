// Correctness of dot on 3-D tiles (a batch of products, Triton's 3-D tl.dot):
// [B, M, K] @ [B, K, N] with and without a [B, M, N] accumulator, for f32,
// f16, bf16 and i8 operands and batches of 1, 2 and 4, each slice of the
// result against its own 2-D product on the host: a batch mixed up (slices
// swapped, or a slice's rows from another) is a wrong element.
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "reference_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::dot_accumulator_t;
using kiln::test::expect_equal;
using kiln::test::expect_within;
using kiln::test::gamma_bound;
using kiln::test::random_values;

template <class C>
using P = kl::Ptr<kl::Scalar<C>>;

// One program: out_acc = acc + a @ b and out_plain = a @ b over the whole
// batch, every operand row-major per slice.
template <class C, int BATCH, int M, int N, int K>
void batched_dot_kernel(P<C> a, P<C> b, P<dot_accumulator_t<C>> acc, P<dot_accumulator_t<C>> out_acc,
                        P<dot_accumulator_t<C>> out_plain) {
  auto batch = kl::expand_dims<2>(kl::expand_dims<1>(kl::arange<BATCH>()));  // [B, 1, 1]
  auto m = kl::expand_dims<0>(kl::expand_dims<1>(kl::arange<M>()));          // [1, M, 1]
  auto k_down = kl::expand_dims<0>(kl::expand_dims<1>(kl::arange<K>()));     // [1, K, 1]
  auto k_across = kl::expand_dims<0>(kl::expand_dims<0>(kl::arange<K>()));   // [1, 1, K]
  auto n = kl::expand_dims<0>(kl::expand_dims<0>(kl::arange<N>()));          // [1, 1, N]
  auto ta = kl::load(a + batch * (M * K) + m * K + k_across);
  auto tb = kl::load(b + batch * (K * N) + k_down * N + n);
  auto c = batch * (M * N) + m * N + n;
  kl::store(out_acc + c, kl::dot(ta, tb, kl::load(acc + c)));
  kl::store(out_plain + c, kl::dot(ta, tb));
}

template <class C, int BATCH>
struct BatchedCase {
  using type = C;
  static constexpr int batch = BATCH;
};

template <class Case>
class BatchedDot : public ::testing::Test {};
using BatchedCases = ::testing::Types<BatchedCase<float, 4>, BatchedCase<kl::half, 4>, BatchedCase<kl::bfloat16, 4>,
                                      BatchedCase<std::int8_t, 4>, BatchedCase<kl::half, 2>, BatchedCase<kl::half, 1>>;
struct BatchedNames {
  template <class Case>
  static std::string GetName(int) {
    return std::string(kiln::ir::dtype_name(kl::dtype_v<typename Case::type>)) + "_batch" + std::to_string(Case::batch);
  }
};
TYPED_TEST_SUITE(BatchedDot, BatchedCases, BatchedNames);

TYPED_TEST(BatchedDot, EachSliceIsItsOwnProductWithAndWithoutAccumulator) {
  using C = typename TypeParam::type;
  using A = dot_accumulator_t<C>;
  constexpr int batch = TypeParam::batch, M = 16, N = 32, K = 32;
  const auto a = random_values<C>(batch * M * K, 61, -4, 4);
  const auto b = random_values<C>(batch * K * N, 62, -4, 4);
  const auto acc = random_values<A>(batch * M * N, 63, -100, 100);
  kl::Buffer<A> out_acc(batch * M * N), out_plain(batch * M * N);
  kl::compile<batched_dot_kernel<C, batch, M, N, K>>().launch(
      kl::Grid(1), kl::Buffer<C>::from(a), kl::Buffer<C>::from(b), kl::Buffer<A>::from(acc), out_acc, out_plain);
  // Slice by slice on the host. Products of f16, bf16 and i8 values are
  // exact in f32 (i32), an f32 product rounds once more; an inner product of
  // K terms plus the accumulator is then within gamma_{K+1} of the sum of
  // their magnitudes, and i8 is exact.
  std::vector<double> want_acc, want_plain, bound_acc, bound_plain;
  for (int t = 0; t < batch; ++t) {
    const std::vector<C> a_slice(a.begin() + t * M * K, a.begin() + (t + 1) * M * K);
    const std::vector<C> b_slice(b.begin() + t * K * N, b.begin() + (t + 1) * K * N);
    const kiln::test::InnerProducts products = kiln::test::inner_products(a_slice, b_slice, M, N, K, N, 1);
    for (std::size_t e = 0; e < products.sums.size(); ++e) {
      const double c = static_cast<double>(acc[static_cast<std::size_t>(t * M * N) + e]);
      const double gamma = std::is_integral_v<C> ? 0.0 : gamma_bound(K + 1, 0x1p-24);
      want_acc.push_back(c + products.sums[e]);
      want_plain.push_back(products.sums[e]);
      bound_acc.push_back(gamma * (std::abs(c) + products.magnitudes[e]));
      bound_plain.push_back(gamma * products.magnitudes[e]);
    }
  }
  expect_within(out_acc.to_host(), want_acc, bound_acc, "acc + a @ b, slice by slice");
  expect_within(out_plain.to_host(), want_plain, bound_plain, "a @ b, slice by slice");
}

}  // namespace
