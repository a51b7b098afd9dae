// kl::static_print: while a kernel is traced it prints the types of DSL
// values and the values of C++ numbers, once per compilation, on stdout.
#include <string>

#include "reference_support.hpp"

namespace kl = kiln;

namespace static_print_kernels {

constexpr int print_line = __LINE__ + 5;
template <int BLOCK>
void scaled(kl::Ptr<kl::f16> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto v = kl::cast<kl::f32>(kl::load(x + offsets, offsets < n));
  kl::static_print("v, n, BLOCK, ready:", v, n, BLOCK, true);
  kl::store(out + offsets, v * 2.0f, offsets < n);
}

}  // namespace static_print_kernels

namespace {

TEST(StaticPrint, PrintsTypesAndNumbersOncePerCompilation) {
  testing::internal::CaptureStdout();
  const auto first = kl::compile<static_print_kernels::scaled<64>>();
  const auto again = kl::compile<static_print_kernels::scaled<64>>();
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed,
            "kernel scaled: static_print at static_print_test.cpp:" + std::to_string(static_print_kernels::print_line) +
                ": v, n, BLOCK, ready: tile<64xf32> i32 64 true\n");
  EXPECT_EQ(&first.program(), &again.program());
}

}  // namespace
