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

TEST(Unsupported, ScanNamesTheOpAndLine) {
  const std::string text = R"(kernel @prefix_sum(%0: ptr<f32>) {
  %1 = arange {start = 0} : tile<128xi32>
  %2 = splat %0 : tile<128xptr<f32>>
  %3 = addptr %2, %1 : tile<128xptr<f32>>
  %4 = load %3 {cache = none, evict = none} : tile<128xf32> loc("cumsum.hpp":40)
  %5 = scan %4 {axis = 0, reverse = 0} : tile<128xf32> loc("cumsum.hpp":41) {
  ^(%6: f32, %7: f32):
    %8 = add %6, %7 : f32
    yield %8
  }
  store %3, %5 {cache = none, evict = none}
}
)";
  EXPECT_EQ(lowering_error(text), "the GPU code generator does not support op `scan` yet (cumsum.hpp:41)");
}

TEST(Unsupported, OpInsideALoopBodyNamesItsLine) {
  const std::string text = R"(kernel @loop_sine(%0: ptr<f32>, %1: i32) {
  %2 = constant {value = 0} : i32
  %3 = constant {value = 1} : i32
  %4 = constant {value = 0.0} : f32
  %5 = for %2, %1, %3, %4 : f32 {
  ^(%6: i32, %7: f32):
    %8 = sin %7 : f32 loc("k.hpp":12)
    yield %8
  }
  store %0, %5 {cache = none, evict = none}
}
)";
  EXPECT_EQ(lowering_error(text), "the GPU code generator does not support op `sin` yet (k.hpp:12)");
}

TEST(Unsupported, MathWithoutLoweringNamesTheValueWhenNoLine) {
  const std::string text = R"(kernel @sine(%0: ptr<f32>) {
  %1 = load %0 {cache = none, evict = none} : f32
  %2 = sin %1 : f32
  store %0, %2 {cache = none, evict = none}
}
)";
  EXPECT_EQ(lowering_error(text), "the GPU code generator does not support op `sin` yet (%2 = sin)");
}

TEST(Unsupported, ExpOfF64) {
  const std::string text = R"(kernel @exp64(%0: ptr<f64>) {
  %1 = load %0 {cache = none, evict = none} : f64
  %2 = exp %1 : f64 loc("math.hpp":7)
  store %0, %2 {cache = none, evict = none}
}
)";
  EXPECT_EQ(lowering_error(text), "the GPU code generator does not support op `exp` on f64 yet (math.hpp:7)");
}

TEST(Unsupported, CacheHint) {
  const std::string text = R"(kernel @hint(%0: ptr<f32>) {
  %1 = load %0 {cache = cg, evict = none} : f32 loc("k.hpp":3)
  store %0, %1 {cache = none, evict = none}
}
)";
  EXPECT_EQ(lowering_error(text), "the GPU code generator does not support op `load` with cache = cg yet (k.hpp:3)");
}

TEST(Unsupported, ThreeDimensionalTiles) {
  const std::string text = R"(kernel @cube(%0: ptr<f32>) {
  %1 = constant {value = 1.0} : tile<2x2x2xf32> loc("k.hpp":9)
}
)";
  EXPECT_EQ(lowering_error(text),
            "the GPU code generator supports 1-D and 2-D tiles only, %1 is tile<2x2x2xf32> (k.hpp:9)");
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
