// reshape, trans, join and split through the GPU code generator: each reads
// its operand in the layout derived from its result's (a conversion first
// when the operand lives elsewhere), then renames or picks registers;
// ptxas accepts every kernel.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/codegen_support.hpp"
#include "ir_samples.hpp"

namespace kiln::codegen_test {
namespace {

using ir_samples::load_text;
using ir_samples::row_major_offsets;
using ir_samples::store_text;

/// A kernel @`name` of 16-byte aligned pointers to `dtypes`, running `body`.
std::string aligned_kernel(const std::string& name, const std::vector<std::string>& dtypes, const std::string& body) {
  return ir_samples::pointer_kernel_text(name, dtypes, " {divisibility = 16}", body);
}

/// A kernel @`name` loading a 32x64 f32 tile row-major from %0 and storing
/// its transpose (64x32) to %1 at the offsets %out that `output_offsets`
/// defines.
std::string transpose_kernel(const std::string& name, const std::string& output_offsets) {
  return aligned_kernel(name, {"f32", "f32"},
                        row_major_offsets("in", 32, 64) + load_text("x", "%0", "in", "32x64", "f32") +
                            "  %transposed = trans %x {order = [1, 0]} : tile<64x32xf32>\n" + output_offsets +
                            store_text("out_pointers", "%1", "out", "transposed", "64x32", "f32"));
}

/// The transpose stored row-major.
const std::string kTranspose = transpose_kernel("transpose", row_major_offsets("out", 64, 32));

/// The same transpose with the output offsets computed in the input's shape
/// (element (r, c) goes to c * 32 + r) and transposed too: the result class
/// then holds only transposes and element-wise values.
const std::string kTransposeWithTransposedOffsets =
    transpose_kernel("transpose_offsets", ir_samples::transposed_offsets("out", "in", 32, 64));

/// A 2048-element vector reshaped to 32x64 and stored row-major: the same
/// element order, so each thread keeps its registers.
const std::string kReshapeTo2d =
    aligned_kernel("reshape_to_2d", {"f32", "f32"},
                   "  %in = arange {start = 0} : tile<2048xi32>\n" + load_text("x", "%0", "in", "2048", "f32") +
                       "  %reshaped = reshape %x : tile<32x64xf32>\n" + row_major_offsets("out", 32, 64) +
                       store_text("out_pointers", "%1", "out", "reshaped", "32x64", "f32"));

/// A 16x64 i32 tile flattened and stored as a vector.
const std::string kReshapeTo1d =
    aligned_kernel("reshape_to_1d", {"i32", "i32"},
                   row_major_offsets("in", 16, 64) + load_text("x", "%0", "in", "16x64", "i32") +
                       "  %reshaped = reshape %x : tile<1024xi32>\n  %out = arange {start = 0} : tile<1024xi32>\n" +
                       store_text("out_pointers", "%1", "out", "reshaped", "1024", "i32"));

/// Interleaves two 256-element f16 vectors: out[2i] = a[i], out[2i+1] = b[i].
const std::string kJoin = aligned_kernel(
    "interleave", {"f16", "f16", "f16"},
    "  %in = arange {start = 0} : tile<256xi32>\n" + load_text("a", "%0", "in", "256", "f16") +
        load_text("b", "%1", "in", "256", "f16") + "  %pairs = join %a, %b : tile<256x2xf16>\n" +
        row_major_offsets("out", 256, 2) + store_text("out_pointers", "%2", "out", "pairs", "256x2", "f16"));

/// De-interleaves 256 pairs of f32: a[i] = x[2i], b[i] = x[2i+1].
const std::string kSplit = aligned_kernel(
    "deinterleave", {"f32", "f32", "f32"},
    row_major_offsets("in", 256, 2) + load_text("x", "%0", "in", "256x2", "f32") +
        "  %a, %b = split %x : tile<256xf32>, tile<256xf32>\n  %out = arange {start = 0} : tile<256xi32>\n" +
        store_text("a_pointers", "%1", "out", "a", "256", "f32") +
        store_text("b_pointers", "%2", "out", "b", "256", "f32"));

/// join of two scalars and split of the pair back, added and stored.
const char* kScalarPair = R"(kernel @scalar_pair(%0: ptr<f32>, %1: ptr<f32>, %2: ptr<f32>) {
  %3 = load %0 {cache = none, evict = none} : f32
  %4 = load %1 {cache = none, evict = none} : f32
  %5 = join %3, %4 : tile<2xf32>
  %6, %7 = split %5 : f32, f32
  %8 = sub %6, %7 : f32
  store %2, %8 {cache = none, evict = none}
}
)";

TEST(ShapeOps, ReshapeInRowMajorOrderMovesNoData) {
  const lowering::GpuKernel kernel = compile_text(kReshapeTo2d);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
}

TEST(ShapeOps, SplitOfAPairOfScalarsGathersItWithShuffles) {
  // The pair lives in lanes 0 and 1; every thread needs both.
  const lowering::GpuKernel kernel = compile_text(kScalarPair);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync.idx.b32"), 2) << kernel.ptx;
}

TEST(ShapeOps, TransposeRenamesRegistersWhenItsResultClassIsFree) {
  // The result class holds only transposes and element-wise values: it takes
  // the operand's layout with the dimensions swapped, so no data moves.
  const lowering::GpuKernel kernel = compile_text(kTransposeWithTransposedOffsets);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
}

TEST(ShapeOps, TransposeIntoTheKernelsLayoutGoesThroughSharedMemory) {
  // Offsets built by broadcasts bind the result class: the kernel's 2-D
  // layout, sized by the 32x64 input, would hold the 64x32 result twice,
  // so it takes the blocked layout of its own shape, and the transpose
  // moves every element across warps.
  const lowering::GpuKernel kernel = compile_text(kTranspose);
  EXPECT_EQ(kernel.shared_bytes, 64 * 32 * 4) << "the whole tile, through shared memory";
  EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2) << kernel.ptx;
  // Each thread's 16 source elements are 4 runs of 4 along the buffer's
  // rows: four 16-byte stores. The result's layout (16 registers, each
  // element in one thread) steps along the buffer's columns: 16 single
  // loads; and its runs of 4 along the output rows are 16-byte stores.
  EXPECT_EQ(count(kernel.ptx, "st.shared.v4.f32"), 4) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.shared.f32"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "ld.shared.f32"), 16) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "st.global.v4.f32"), 4) << kernel.ptx;
}

TEST(ShapeOps, JoinKeepsPairsInOneThread) {
  const lowering::GpuKernel kernel = compile_text(kJoin);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
}

TEST(ShapeOps, SplitReadsBothHalvesFromEachThread) {
  const lowering::GpuKernel kernel = compile_text(kSplit);
  EXPECT_TRUE(contains(kernel.ptx, "ld.global.v2.f32")) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
}

class ShapeOpsForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(ShapeOpsForArch, PtxasAcceptsEveryKernel) {
  const struct {
    const char* name;
    std::string text;
  } cases[] = {
      {"transpose", kTranspose},       {"transpose_offsets", kTransposeWithTransposedOffsets},
      {"reshape_to_2d", kReshapeTo2d}, {"reshape_to_1d", kReshapeTo1d},
      {"interleave", kJoin},           {"deinterleave", kSplit},
      {"scalar_pair", kScalarPair},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const lowering::GpuKernel kernel = compile_text(c.text, GetParam());
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, GetParam(), c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, ShapeOpsForArch, ::testing::Values("sm_80", "sm_90a"));

}  // namespace
}  // namespace kiln::codegen_test
