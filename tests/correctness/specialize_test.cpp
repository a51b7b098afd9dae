// Specialisation on launch arguments: integers equal to 1 become constants,
// integers divisible by 16 and 16-byte aligned pointers are marked in the IR;
// each set of facts compiles once, and every variant computes the same result.
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/printer.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::test::expect_equal;
using kiln::test::random_values;

constexpr int kBlock = 64;

// out[i] = in[i * stride] for i < n.
void gather_strided(kl::Ptr<kl::f32> in, kl::Ptr<kl::f32> out, kl::i32 stride, kl::i32 n) {
  auto offs = kl::program_id(0) * kBlock + kl::arange<kBlock>();
  auto mask = offs < n;
  kl::store(out + offs, kl::load(in + offs * stride, mask), mask);
}

std::vector<float> run(const kl::Kernel<kl::Ptr<kl::f32>, kl::Ptr<kl::f32>, kl::i32, kl::i32>& kernel,
                       const kiln::Buffer<float>& in, int stride, int n) {
  kiln::Buffer<float> out(static_cast<std::size_t>(n));
  kernel.launch(kl::Grid((n + kBlock - 1) / kBlock), in, out, stride, n);
  return out.to_host();
}

std::vector<float> reference(const std::vector<float>& in, int stride, int n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out[i] = in[static_cast<std::size_t>(i) * stride];
  return out;
}

TEST(Specialize, EachSetOfFactsCompilesOnceAndComputesTheSame) {
  const auto host = random_values<float>(4000, 31);
  const auto in = kiln::Buffer<float>::from(host);
  const auto kernel = kl::compile<gather_strided>();
  const std::size_t before = kernel.program().specialization_count();
  expect_equal(run(kernel, in, 1, 1000), reference(host, 1, 1000), "stride 1");
  expect_equal(run(kernel, in, 3, 1000), reference(host, 3, 1000), "stride 3");
  expect_equal(run(kernel, in, 1, 999), reference(host, 1, 999), "stride 1 again");
  expect_equal(run(kernel, in, 2, 992), reference(host, 2, 992), "n divisible by 16");
  // Facts (in, out, stride, n): {16, 16, =1, -} twice, {16, 16, -, -}, {16, 16, -, 16}.
  EXPECT_EQ(kernel.program().specialization_count() - before, 3u);
}

TEST(Specialize, StrideOneFoldsAwayAndFactsArePrinted) {
  const auto in = kiln::Buffer<float>::from(random_values<float>(256, 32));
  kiln::Buffer<float> out(256);
  const auto kernel = kl::compile<gather_strided>();
  const std::string unit = kiln::ir::print(kernel.program_for(in, out, 1, 256)->optimized());
  EXPECT_NE(unit.find("%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}, %2: i32 {equal_to = 1}, "
                      "%3: i32 {divisibility = 16}"),
            std::string::npos)
      << unit;
  const std::string strided = kiln::ir::print(kernel.program_for(in, out, 3, 255)->optimized());
  const auto muls = [](const std::string& text) {
    int count = 0;
    for (auto at = text.find(" = mul "); at != std::string::npos; at = text.find(" = mul ", at + 1)) ++count;
    return count;
  };
  EXPECT_EQ(muls(strided), muls(unit) + 1) << "the multiply by the stride goes when it is 1:\n" << strided << unit;
}

TEST(Specialize, CanBeTurnedOff) {
  const auto in = kiln::Buffer<float>::from(random_values<float>(64, 33));
  kiln::Buffer<float> out(64);
  kl::CompileOptions options;
  options.specialize = false;
  const auto kernel = kl::compile<gather_strided>(options);
  EXPECT_EQ(kernel.program_for(in, out, 1, 64), kernel.program_ptr());
  EXPECT_EQ(kiln::ir::print(kernel.ir()).find("divisibility"), std::string::npos);
}

}  // namespace
