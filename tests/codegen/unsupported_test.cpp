// What the GPU code generator does not lower yet gives one line naming the
// op and its source line.
#include <gtest/gtest.h>

#include <memory>
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

TEST(Unsupported, RegisterCap) {
  const std::unique_ptr<ir::Function> fn = ir::parse_function(specialized_vector_add());
  for (const int registers : {-1, 23, 256}) {
    try {
      lowering::compile_for_gpu(*fn, {.max_registers = registers});
      ADD_FAILURE() << "max_registers " << registers << " compiled";
    } catch (const lowering::LoweringError& e) {
      EXPECT_EQ(std::string(e.what()), "kernel @vector_add: max_registers is " + std::to_string(registers) +
                                           ", expected 0 (ptxas chooses) or 24 to 255");
    }
  }
}

}  // namespace
}  // namespace kiln::codegen_test
