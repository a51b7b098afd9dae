// Cache hints on load and store through the GPU code generator: every
// `cache` and `evict` value compiles, reaches PTX and passes ptxas. LLVM 19's
// NVPTX backend expresses only a load's cv (a volatile load, ld.volatile); ca
// is the default ld.global already; the other hints become plain accesses
// (codegen_memory.cpp), still vectorised.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen_support.hpp"

namespace kiln::codegen_test {
namespace {

/// out[i] = x[i] over 1024 aligned floats with the given hints on the load and the store.
std::string copy_text(const std::string& load_cache, const std::string& load_evict, const std::string& store_cache,
                      const std::string& store_evict) {
  return R"(kernel @copy(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<1024xi32>
  %3 = splat %0 : tile<1024xptr<f32>>
  %4 = addptr %3, %2 : tile<1024xptr<f32>>
  %5 = load %4 {cache = )" +
         load_cache + ", evict = " + load_evict + R"(} : tile<1024xf32>
  %6 = splat %1 : tile<1024xptr<f32>>
  %7 = addptr %6, %2 : tile<1024xptr<f32>>
  store %7, %5 {cache = )" +
         store_cache + ", evict = " + store_evict + R"(}
}
)";
}

class LoadCacheHint : public ::testing::TestWithParam<const char*> {};

TEST_P(LoadCacheHint, ReachesPtxAndPtxas) {
  const std::string cache = GetParam();
  for (const char* evict : {"none", "first", "last"}) {
    SCOPED_TRACE(std::string("cache = ") + cache + ", evict = " + evict);
    const lowering::GpuKernel kernel = compile_text(copy_text(cache, evict, "none", "none"));
    // 8 floats per thread: two 16-byte accesses each way, whatever the hint.
    EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 2) << kernel.ptx;
    if (cache == "cv") {
      EXPECT_EQ(count(kernel.llvm_ir, "load volatile <4 x float>"), 2) << kernel.llvm_ir;
      EXPECT_EQ(count(kernel.ptx, "ld.volatile.global.v4.f32"), 2) << kernel.ptx;
    } else {
      EXPECT_EQ(count(kernel.llvm_ir, "volatile"), 0) << kernel.llvm_ir;
      EXPECT_EQ(count(kernel.ptx, "ld.global.v4.f32"), 2) << kernel.ptx;
    }
  }
  for (const char* arch : {"sm_80", "sm_90a"})
    KILN_EXPECT_PTXAS_ACCEPTS(compile_text(copy_text(cache, "first", "none", "none"), arch), arch,
                              "load_cache_" + cache);
}

INSTANTIATE_TEST_SUITE_P(Hints, LoadCacheHint, ::testing::Values("none", "ca", "cg", "cs", "cv"));

TEST(StoreCacheHint, EveryHintIsAPlainVectorStore) {
  for (const char* cache : {"none", "ca", "cg", "cs", "cv"})
    for (const char* evict : {"none", "first", "last"}) {
      SCOPED_TRACE(std::string("cache = ") + cache + ", evict = " + evict);
      const lowering::GpuKernel kernel = compile_text(copy_text("none", "none", cache, evict));
      EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 2) << kernel.ptx;
      EXPECT_EQ(count(kernel.llvm_ir, "volatile"), 0) << kernel.llvm_ir;
    }
  KILN_EXPECT_PTXAS_ACCEPTS(compile_text(copy_text("cg", "last", "cs", "first")), "sm_90a", "store_cache_hints");
}

}  // namespace
}  // namespace kiln::codegen_test
