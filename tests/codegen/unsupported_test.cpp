// What the GPU code generator does not lower yet gives one line naming the
// op and its source line.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"

namespace kiln::codegen_test {
namespace {

/// The LoweringError message of compiling `text`, or "" if it compiled.
std::string lowering_error(const std::string& text, const std::string& arch = "sm_90a", int num_warps = 4) {
  try {
    compile_text(text, arch, num_warps);
  } catch (const lowering::LoweringError& e) {
    return e.what();
  }
  return "";
}

TEST(Unsupported, UnknownArchitecture) {
  EXPECT_EQ(lowering_error(specialized_vector_add(), "sm_100a"),
            "GPU architecture `sm_100a` is unknown to LLVM 19's NVPTX backend (sm_80 … sm_90a)");
}

TEST(Unsupported, WarpCount) {
  EXPECT_EQ(lowering_error(specialized_vector_add(), "sm_90a", 3),
            "num_warps is 3, expected a power of two from 1 to 32");
}

}  // namespace
}  // namespace kiln::codegen_test
