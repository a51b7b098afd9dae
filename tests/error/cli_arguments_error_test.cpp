// The kiln tool's command line (examples/kiln/arguments.hpp): a bad argv is
// one std::invalid_argument line naming the argument and what is wrong.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "arguments.hpp"

namespace kiln::tool {
namespace {

/// The message parse_command_line throws for `kiln <words>`, or "" if it accepts them.
std::string error_of(const std::vector<std::string>& words) {
  std::vector<const char*> argv = {"kiln"};
  for (const std::string& word : words) argv.push_back(word.c_str());
  try {
    parse_command_line(static_cast<int>(argv.size()), argv.data());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Found by cli_args_fuzz (fuzz/corpus/cli_args_fuzz/carriage-return-in-a-flag): the
// words were quoted raw in the error, and a carriage return or newline split it.
TEST(CliArgumentsError, ControlCharacterInAWord) {
  EXPECT_EQ(error_of({"run", "rms_norm", "--m", "7", "--n", "1000", "-\rcheck"}),
            "argument 7 holds the control character 0x0d; kiln's arguments are printable text");
  EXPECT_EQ(error_of({"run", "soft\nmax"}),
            "argument 2 holds the control character 0x0a; kiln's arguments are printable text");
  EXPECT_EQ(error_of({"bench", "--device", "cpu\x1b"}),
            "argument 3 holds the control character 0x1b; kiln's arguments are printable text");
  EXPECT_EQ(error_of({"info", "\x7f"}),
            "argument 2 holds the control character 0x7f; kiln's arguments are printable text");
}

TEST(CliArgumentsError, PrintableWordsPass) {
  EXPECT_EQ(error_of({"run", "softmax", "--rows", "7", "--dtype", "f16", "--device", "cpu:2"}), "");
  EXPECT_EQ(error_of({"run", "softmax", "--rows", "caf\xc3\xa9"}), "--rows needs an integer, got 'caf\xc3\xa9'");
}

}  // namespace
}  // namespace kiln::tool
