// runtime::LaunchProgress: a thread's launches report their programs done to
// the innermost one living on that thread, and to no other, on the default
// device (the emu label reruns this binary on `emu`); the cuda device, whose
// programs run on the GPU, reports none.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime/launch_progress.hpp"
#include "test_support.hpp"

namespace {

namespace kl = kiln;
using kiln::runtime::LaunchProgress;

// Each program stores its id at its own slot.
void store_ids(kl::Ptr<kl::i32> ids) { kl::store(ids + kl::program_id(0), kl::program_id(0)); }

/// The reports one LaunchProgress received.
struct Reports {
  std::mutex mutex;
  std::vector<std::int64_t> done;
  std::vector<std::int64_t> totals;
  std::vector<std::string> kernels;

  LaunchProgress::Report recorder() {
    return [this](const std::string& kernel, std::int64_t d, std::int64_t total) {
      std::lock_guard lock(mutex);
      kernels.push_back(kernel);
      done.push_back(d);
      totals.push_back(total);
    };
  }
};

bool reports_progress() { return kiln::Device::default_device().kind() != kiln::Device::Kind::cuda; }

void launch_store_ids(int programs) {
  kl::Buffer<std::int32_t> ids(static_cast<std::size_t>(programs));
  kl::compile<store_ids>().launch(kl::Grid(programs), ids);
  const std::vector<std::int32_t> got = ids.to_host();
  for (int p = 0; p < programs; ++p) ASSERT_EQ(got[static_cast<std::size_t>(p)], p) << "program " << p;
}

TEST(LaunchProgress, ReportsProgramsDoneOutOfTheGrid) {
  Reports reports;
  {
    const LaunchProgress progress(reports.recorder());
    launch_store_ids(300);
  }
  if (!reports_progress()) {
    EXPECT_TRUE(reports.done.empty()) << "the cuda device does not count its programs";
    return;
  }
  ASSERT_FALSE(reports.done.empty()) << "the first program done is reported at once";
  for (std::size_t i = 0; i < reports.done.size(); ++i) {
    EXPECT_EQ(reports.totals[i], 300);
    EXPECT_GE(reports.done[i], 1);
    EXPECT_LE(reports.done[i], 300);
    EXPECT_NE(reports.kernels[i].find("store_ids"), std::string::npos) << reports.kernels[i];
  }
}

TEST(LaunchProgress, InnermostOnTheLaunchingThreadOnly) {
  if (!reports_progress()) GTEST_SKIP() << "the cuda device reports no progress";
  Reports outer_reports, inner_reports;
  const LaunchProgress outer(outer_reports.recorder());
  {
    const LaunchProgress inner(inner_reports.recorder());
    launch_store_ids(40);
  }
  EXPECT_FALSE(inner_reports.done.empty());
  EXPECT_TRUE(outer_reports.done.empty()) << "the inner one hides the outer";
  std::thread([] { launch_store_ids(40); }).join();
  EXPECT_TRUE(outer_reports.done.empty()) << "another thread's launch is not this thread's";
  launch_store_ids(40);
  EXPECT_FALSE(outer_reports.done.empty()) << "the outer one again once the inner is gone";
}

}  // namespace
