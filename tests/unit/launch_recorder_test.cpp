// kl::LaunchRecorder: while one is alive, launches record the variant their
// arguments select and their grid, and run nothing.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "kiln/kiln.hpp"

namespace {

namespace kl = kiln;

template <int BLOCK>
void add_one(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + offsets, mask) + 1.0f, mask);
}

TEST(LaunchRecorder, RecordsTheSpecializedVariantAndRunsNothing) {
  auto x = kl::Buffer<float>::from(std::vector<float>(64, 2.0f), kl::Device::cpu());
  auto out = kl::Buffer<float>::from(std::vector<float>(64, -1.0f), kl::Device::cpu());
  kl::CompileOptions options;
  options.num_warps = 2;
  const auto kernel = kl::compile<add_one<32>>(options);
  {
    kl::LaunchRecorder recorder;
    kernel.launch(kl::Grid(2, 3), x, out, 64);
    ASSERT_EQ(recorder.launches.size(), 1u);
    const kl::LaunchRecorder::Launch& launch = recorder.launches[0];
    EXPECT_EQ(launch.grid, (std::array<int, 3>{2, 3, 1}));
    EXPECT_EQ(launch.program->options().num_warps, 2);
    EXPECT_EQ(launch.program, kernel.program_for(x, out, 64));
    // 64-byte aligned buffers and n = 64: every argument is divisible by 16.
    ASSERT_EQ(launch.program->optimized().argument_facts.size(), 3u);
    for (const auto& facts : launch.program->optimized().argument_facts) EXPECT_EQ(facts.divisibility, 16);
    EXPECT_EQ(out.to_host(), std::vector<float>(64, -1.0f));
  }
  kernel.launch(kl::Grid(2), x, out, 64);
  EXPECT_EQ(out.to_host(), std::vector<float>(64, 3.0f));
}

TEST(LaunchRecorder, ListsTheKernelsTracedWhileRecordingAndNests) {
  kl::LaunchRecorder outer;
  {
    kl::LaunchRecorder inner;
    EXPECT_EQ(kl::LaunchRecorder::active(), &inner);
    kl::compile<add_one<16>>();
    ASSERT_EQ(inner.compiles.size(), 1u);
    EXPECT_NE(inner.compiles[0].name.find("add_one<16>"), std::string::npos) << inner.compiles[0].name;
    EXPECT_GE(inner.compiles[0].milliseconds, 0.0);
  }
  EXPECT_EQ(kl::LaunchRecorder::active(), &outer);
  EXPECT_TRUE(outer.compiles.empty());
}

}  // namespace
