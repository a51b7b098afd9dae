// Footprints (LaunchStats::footprints under runtime::FootprintCounting): the
// distinct bytes of each pointer argument a launch read and wrote, however
// often each was accessed, on the default device (the emu label reruns this
// binary on `emu`).
#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::runtime::BufferFootprint;
using kiln::runtime::FootprintCounting;
using kiln::runtime::LaunchStats;
using kiln::test::random_values;

constexpr int kBlock = 64;

// y[i] = x[i] * sum(w): every program reads all of w, so w is read once per
// program but its footprint is its size once.
template <int BLOCK>
void scale_by_weight_sum(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> w, kl::Ptr<kl::f32> y, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  auto total = kl::sum(kl::load(w + kl::arange<BLOCK>()));
  kl::store(y + offsets, kl::load(x + offsets, mask) * total, mask);
}

// out[i] = x[2 i] for i < n: the odd elements of x are never read.
template <int BLOCK>
void even_elements(kl::Ptr<kl::f32> x, kl::Ptr<kl::f32> out, kl::i32 n) {
  auto offsets = kl::program_id(0) * BLOCK + kl::arange<BLOCK>();
  auto mask = offsets < n;
  kl::store(out + offsets, kl::load(x + 2 * offsets, mask), mask);
}

// Every program adds 1 to one counter and stores its id at its own slot.
void count_programs(kl::Ptr<kl::i32> counter, kl::Ptr<kl::i32> ids) {
  kl::atomic_add(counter, kl::i32(1));
  kl::store(ids + kl::program_id(0), kl::program_id(0));
}

/// The footprint of the launch's pointer argument `index` (0-based among all
/// arguments; the kernels register no names, so the launch lists it as
/// `parameter <index + 1> (Ptr<…>)`), checking that it is listed.
const BufferFootprint& footprint_of(const LaunchStats& stats, int index) {
  const std::string name = "parameter " + std::to_string(index + 1) + " (Ptr<";
  for (const BufferFootprint& f : stats.footprints)
    if (f.argument.starts_with(name)) return f;
  ADD_FAILURE() << "no footprint for '" << name << "'";
  static const BufferFootprint none;
  return none;
}

TEST(Footprint, RereadBufferCountsOnceAndMaskedTailNotAtAll) {
  const int n = 1000;  // 16 programs; the last one's 24 masked-off lanes touch nothing
  auto x = kl::Buffer<float>::from(random_values<float>(n, 11));
  auto w = kl::Buffer<float>::from(random_values<float>(kBlock, 12));
  kl::Buffer<float> y(n);
  const FootprintCounting counting;
  const LaunchStats stats =
      kl::compile<scale_by_weight_sum<kBlock>>().launch(kl::Grid(kl::cdiv(n, kBlock)), x, w, y, n);
  ASSERT_EQ(stats.footprints.size(), 3u) << "one per pointer argument";
  EXPECT_EQ(footprint_of(stats, 0).bytes_read, n * sizeof(float));
  EXPECT_EQ(footprint_of(stats, 0).bytes_written, 0u);
  EXPECT_EQ(footprint_of(stats, 1).bytes_read, kBlock * sizeof(float));
  EXPECT_EQ(footprint_of(stats, 2).bytes_written, n * sizeof(float));
  EXPECT_EQ(footprint_of(stats, 2).bytes_read, 0u);
  EXPECT_GE(stats.bytes_read, (n + 16 * kBlock) * sizeof(float)) << "w read by each of the 16 programs";
  EXPECT_NE(stats.footprints[0].kernel.find("scale_by_weight_sum"), std::string::npos) << stats.footprints[0].kernel;
}

TEST(Footprint, StridedLoadCountsOnlyTheElementsItReads) {
  const int n = 300;
  auto x = kl::Buffer<float>::from(random_values<float>(2 * n, 13));
  kl::Buffer<float> out(n);
  const FootprintCounting counting;
  const LaunchStats stats = kl::compile<even_elements<kBlock>>().launch(kl::Grid(kl::cdiv(n, kBlock)), x, out, n);
  EXPECT_EQ(footprint_of(stats, 0).bytes_read, n * sizeof(float)) << "half of x's 600 elements";
  EXPECT_EQ(footprint_of(stats, 1).bytes_written, n * sizeof(float));
  const std::vector<float> xs = x.to_host(), got = out.to_host();
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], xs[2 * i]) << "element " << i;
}

TEST(Footprint, AtomicReadsAndWritesItsAddressOnce) {
  const int programs = 37;
  auto counter = kl::Buffer<std::int32_t>::from(std::vector<std::int32_t>{5});
  kl::Buffer<std::int32_t> ids(programs);
  const FootprintCounting counting;
  const LaunchStats stats = kl::compile<count_programs>().launch(kl::Grid(programs), counter, ids);
  EXPECT_EQ(counter.to_host()[0], 5 + programs);
  EXPECT_EQ(footprint_of(stats, 0).bytes_read, sizeof(std::int32_t));
  EXPECT_EQ(footprint_of(stats, 0).bytes_written, sizeof(std::int32_t));
  EXPECT_EQ(footprint_of(stats, 1).bytes_written, programs * sizeof(std::int32_t));
}

TEST(Footprint, NotCountedUnlessAskedOrInsideAnUncountedScope) {
  const int n = 256;
  auto x = kl::Buffer<float>::from(random_values<float>(2 * n, 14));
  kl::Buffer<float> out(n);
  const auto kernel = kl::compile<even_elements<kBlock>>();
  EXPECT_TRUE(kernel.launch(kl::Grid(n / kBlock), x, out, n).footprints.empty());
  const FootprintCounting counting;
  {
    const FootprintCounting uncounted(false);
    EXPECT_TRUE(kernel.launch(kl::Grid(n / kBlock), x, out, n).footprints.empty());
  }
  EXPECT_EQ(kernel.launch(kl::Grid(n / kBlock), x, out, n).footprints.size(), 2u) << "the outer scope counts again";
}

TEST(Footprint, SummedStatsListEachLaunchsFootprints) {
  const int n = 128;
  auto x = kl::Buffer<float>::from(random_values<float>(2 * n, 15));
  kl::Buffer<float> half(n), quarter(n / 2);
  const FootprintCounting counting;
  LaunchStats total = kl::compile<even_elements<kBlock>>().launch(kl::Grid(n / kBlock), x, half, n);
  total += kl::compile<even_elements<kBlock>>().launch(kl::Grid(n / 2 / kBlock), half, quarter, n / 2);
  ASSERT_EQ(total.footprints.size(), 4u);
  EXPECT_EQ(total.footprints[1].bytes_written, n * sizeof(float)) << "the first launch writes half";
  EXPECT_EQ(total.footprints[2].bytes_read, n / 2 * sizeof(float)) << "the second reads half's even elements";
}

}  // namespace
