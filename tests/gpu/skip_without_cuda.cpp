// Linked into every test binary the `gpu` label runs: when KILN_DEVICE names a
// cuda device and the CUDA driver probe finds none, every test is skipped,
// visibly, with the probe's one-line reason, instead of failing on its first
// buffer. Without KILN_DEVICE=cuda… it does nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "kiln/runtime/cuda/driver.hpp"

namespace {

class SkipWithoutCuda : public testing::EmptyTestEventListener {
 public:
  explicit SkipWithoutCuda(std::string reason) : reason_(std::move(reason)) {}

  // A skip recorded when the test starts stops it before SetUp and its body.
  void OnTestStart(const testing::TestInfo&) override { GTEST_SKIP() << reason_; }

 private:
  std::string reason_;
};

const bool skips_without_cuda = [] {
  const char* device = std::getenv("KILN_DEVICE");
  if (!device || !std::string_view(device).starts_with("cuda")) return false;
  const kiln::cuda::ProbeResult probe = kiln::cuda::probe();
  if (probe.available) return false;
  testing::UnitTest::GetInstance()->listeners().Append(
      new SkipWithoutCuda("KILN_DEVICE=" + std::string(device) + " but no GPU is usable here: " + probe.message));
  return true;
}();

}  // namespace
