// The kiln tool's progress line text (examples/kiln/progress_line.hpp): the
// count of a launch's programs and the line cut to the terminal's width.
#include <gtest/gtest.h>

#include "progress_line.hpp"

namespace kiln::tool {
namespace {

TEST(ProgressLine, CountNamesWhatDoneTotalUnitAndPercent) {
  EXPECT_EQ(count_text("softmax", 1200, 4096, "programs"), "softmax 1200/4096 programs (29%)");
  EXPECT_EQ(count_text("matmul", 0, 7, "programs"), "matmul 0/7 programs (0%)");
  EXPECT_EQ(count_text("bench", 9, 9, "kernels"), "bench 9/9 kernels (100%)");
}

TEST(ProgressLine, EmptyTotalCountsAsDone) { EXPECT_EQ(count_text("k", 0, 0, "programs"), "k 0/0 programs (100%)"); }

TEST(ProgressLine, JoinsStageAndLaunch) {
  EXPECT_EQ(progress_text("bench 2/9 kernels: softmax", "softmax 3/8 programs (37%)", 80),
            "bench 2/9 kernels: softmax: softmax 3/8 programs (37%)");
  EXPECT_EQ(progress_text("run softmax", "", 80), "run softmax");
  EXPECT_EQ(progress_text("", "softmax 3/8 programs (37%)", 80), "softmax 3/8 programs (37%)");
}

TEST(ProgressLine, CutsToTheTerminalWithAColumnToSpare) {
  const std::string stage = "bench 2/9 kernels: conv2d_bn_silu_unfused";
  const std::string line = progress_text(stage, "conv2d_batchnorm 12/400 programs (3%)", 40);
  EXPECT_EQ(line.size(), 39u);
  EXPECT_EQ(line, stage.substr(0, 36) + "...");
  EXPECT_EQ(progress_text("abcdef", "", 7), "abcdef");
  EXPECT_EQ(progress_text("abcdefg", "", 7), "abc...");
  EXPECT_EQ(progress_text("abcdefg", "", 3), "ab");
  EXPECT_EQ(progress_text("abcdefg", "", 0), "");
}

}  // namespace
}  // namespace kiln::tool
