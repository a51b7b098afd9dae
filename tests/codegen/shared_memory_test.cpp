// Shared memory through the GPU code generator: every op's scratch lives in
// the kernel's one dynamic array (`.extern .shared`, no static `.shared`), the
// kernel's size is the largest op's scratch, not the sum (regions one op
// needs at once, a dot's staged tiles, lie one after another), a barrier
// follows every op's shared-memory reads before any later write, a kernel
// above the 48 KiB of static shared memory lowers and ptxas accepts it, and
// one above what the architecture gives a block is a one-line error.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"

namespace kiln::codegen_test {
namespace {

/// The declaration of the kernel's dynamic shared memory in its PTX.

/// Lines loading %12 : tile<`n` x `n` x `dtype`>, row-major from %0, at the
/// offsets %9; the arange %2 is used as a row and as a column, which
/// converts one copy of it (n i32) through shared memory.
std::string load_square_text(const std::string& n, const std::string& dtype) {
  const std::string square = "tile<" + n + "x" + n + "x";
  return "  %2 = arange {start = 0} : tile<" + n +
         "xi32>\n"
         "  %3 = expand_dims %2 {axis = 1} : tile<" +
         n +
         "x1xi32>\n"
         "  %4 = constant {value = " +
         n + "} : tile<" + n +
         "x1xi32>\n"
         "  %5 = mul %3, %4 : tile<" +
         n +
         "x1xi32>\n"
         "  %6 = broadcast %5 : " +
         square +
         "i32>\n"
         "  %7 = expand_dims %2 {axis = 0} : tile<1x" +
         n +
         "xi32>\n"
         "  %8 = broadcast %7 : " +
         square +
         "i32>\n"
         "  %9 = add %6, %8 : " +
         square +
         "i32>\n"
         "  %10 = splat %0 : " +
         square + "ptr<" + dtype +
         ">>\n"
         "  %11 = addptr %10, %9 : " +
         square + "ptr<" + dtype +
         ">>\n"
         "  %12 = load %11 {cache = none, evict = none} : " +
         square + dtype + ">\n";
}

/// out = x + trans(x) over one `size` x `size` tile of `dtype`: x is read in
/// its own layout and in the transposed one, so one of the two reads a copy
/// converted through shared memory (the whole tile).
std::string transpose_add_text(int size, const std::string& dtype) {
  const std::string n = std::to_string(size);
  const std::string square = "tile<" + n + "x" + n + "x";
  return "kernel @transpose_add(%0: ptr<" + dtype + "> {divisibility = 16}, %1: ptr<" + dtype +
         "> {divisibility = 16}) {\n" + load_square_text(n, dtype) + "  %13 = trans %12 {order = [1, 0]} : " + square +
         dtype +
         ">\n"
         "  %14 = add %12, %13 : " +
         square + dtype +
         ">\n"
         "  %15 = splat %1 : " +
         square + "ptr<" + dtype +
         ">>\n"
         "  %16 = addptr %15, %9 : " +
         square + "ptr<" + dtype +
         ">>\n"
         "  store %16, %14 {cache = none, evict = none}\n"
         "}\n";
}

/// Column sums and row sums of a loaded 64x64 f32 tile, added. The tile
/// lives in 4 warps along its rows (1x4 per thread, 2x16 lanes, 4x1 warps),
/// so the column sums cross warps: a reduce through shared memory of 64
/// columns x 4 warps x 4 bytes, which leaves them in every warp. The row
/// sums, 16 in each warp, reach the column sums' layout through a
/// conversion of 64 x 4 bytes, and the arange of the offsets is converted
/// too (64 x 4 bytes).
std::string row_and_column_sums_text() {
  return "kernel @row_and_column_sums(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {\n" +
         load_square_text("64", "f32") + R"(  %13 = reduce %12 {axis = 0} : tile<64xf32> {
  ^(%14: f32, %15: f32):
    %16 = add %14, %15 : f32
    yield %16
  }
  %17 = reduce %12 {axis = 1} : tile<64xf32> {
  ^(%18: f32, %19: f32):
    %20 = add %18, %19 : f32
    yield %20
  }
  %21 = add %13, %17 : tile<64xf32>
  %22 = splat %1 : tile<64xptr<f32>>
  %23 = addptr %22, %2 : tile<64xptr<f32>>
  store %23, %21 {cache = none, evict = none}
}
)";
}

/// The kernel's PTX declares one dynamic shared-memory array and no static
/// one, aligned to 16 bytes (1024 where wgmma reads swizzled tiles from it).
void expect_one_dynamic_array(const lowering::GpuKernel& kernel) {
  const bool wgmma = contains(kernel.ptx, "wgmma.mma_async");
  const std::string alignment = wgmma ? "1024" : "16";
  EXPECT_EQ(count(kernel.ptx, ".extern .shared .align " + alignment + " .b8 kiln_shared[];"), 1) << kernel.ptx;
  EXPECT_EQ(count(kernel.ptx, ".shared .align"), 1) << "a static .shared array:\n" << kernel.ptx;
  EXPECT_TRUE(contains(kernel.llvm_ir, "@kiln_shared = external addrspace(3) global [0 x i8], align " + alignment));
}

/// In the unoptimised LLVM IR, read top to bottom (these kernels have no
/// loops): after a shared-memory load, a barrier comes before the next
/// shared-memory store, so no op's scratch is overwritten while a slower
/// thread still reads it. Returns the number of loads checked.
int expect_barrier_between_reads_and_later_writes(const lowering::GpuKernel& kernel) {
  std::istringstream lines(kernel.llvm_ir);
  bool read_since_barrier = false;
  int reads = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("@llvm.nvvm.barrier0()") != std::string::npos && line.find("call") != std::string::npos)
      read_since_barrier = false;
    const bool shared = line.find("ptr addrspace(3)") != std::string::npos;
    if (shared && line.find(" = load ") != std::string::npos) {
      read_since_barrier = true;
      ++reads;
    }
    if (shared && line.find("store ") != std::string::npos) {
      EXPECT_FALSE(read_since_barrier) << "a shared-memory store after a read with no barrier between: " << line;
    }
  }
  EXPECT_FALSE(read_since_barrier) << "the kernel ends after a shared-memory read with no barrier";
  return reads;
}

TEST(SharedMemory, ConversionsShareOneRegionOfTheLargestSize) {
  // 64 elements of i1 (a byte each), of f16 (two bytes each) and of i32.
  const int mask_bytes = 64 * 1, halves_bytes = 64 * 2, integer_bytes = 64 * 4;
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kThreeConversions, arch);
    EXPECT_EQ(kernel.shared_bytes, std::max({mask_bytes, halves_bytes, integer_bytes}))
        << "not the sum, " << mask_bytes + halves_bytes + integer_bytes;
    expect_one_dynamic_array(kernel);
    EXPECT_GE(count(kernel.ptx, "ld.shared.u8"), 1) << kernel.ptx;
    EXPECT_GE(count(kernel.ptx, "ld.shared.b16"), 1) << kernel.ptx;
    EXPECT_GE(count(kernel.ptx, "ld.shared.u32"), 1) << kernel.ptx;
    EXPECT_EQ(count(kernel.llvm_ir, "call void @llvm.nvvm.barrier0()"), 3 * 2) << kernel.llvm_ir;
    EXPECT_GE(expect_barrier_between_reads_and_later_writes(kernel), 3);
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "three_conversions");
  }
}

TEST(SharedMemory, ReduceAndConversionsShareOneRegionOfTheLargestSize) {
  const int reduce_bytes = 64 * 4 * 4;  // 64 column sums x 4 warps along the axis x f32
  const int sums_bytes = 64 * 4;        // the 64 f32 column sums converted
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(row_and_column_sums_text(), arch);
    EXPECT_EQ(kernel.shared_bytes, std::max(reduce_bytes, sums_bytes)) << "not the sum, " << reduce_bytes + sums_bytes;
    expect_one_dynamic_array(kernel);
    // The reduce and the sums' conversion: two barriers each. The store's
    // offsets, an arange, are computed again in the sums' layout.
    EXPECT_EQ(count(kernel.llvm_ir, "call void @llvm.nvvm.barrier0()"), 2 * 2) << kernel.llvm_ir;
    EXPECT_GE(expect_barrier_between_reads_and_later_writes(kernel), 2);
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "row_and_column_sums");
  }
}

TEST(SharedMemory, ADotOnTensorCoresStagesItsTilesConsecutivelyAndTheReduceAfterReusesThem) {
  // acc + x @ x on tensor cores: the accumulator stays in registers (the
  // mma layout) and the two f16 operands (64 x 64 x 2 bytes each) are staged
  // at once, one after another; then the column sums of the result cross warps.
  const std::string text =
      "kernel @dot_then_sums(%0: ptr<f16> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {\n" +
      load_square_text("64", "f16") + R"(  %13 = constant {value = 0.0} : tile<64x64xf32>
  %14 = dot %12, %12, %13 {precision = ieee} : tile<64x64xf32>
  %15 = reduce %14 {axis = 0} : tile<64xf32> {
  ^(%16: f32, %17: f32):
    %18 = add %16, %17 : f32
    yield %18
  }
  %19 = splat %1 : tile<64xptr<f32>>
  %20 = addptr %19, %2 : tile<64xptr<f32>>
  store %20, %15 {cache = none, evict = none}
}
)";
  const int operand_bytes = 64 * 64 * 2;
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(text, arch);
    EXPECT_TRUE(contains(kernel.ptx, std::string(arch) == "sm_90a" ? "wgmma.mma_async" : "mma.sync.aligned.m16n8k16"))
        << kernel.ptx;
    EXPECT_EQ(kernel.shared_bytes, 2 * operand_bytes);
    expect_one_dynamic_array(kernel);
    EXPECT_GE(expect_barrier_between_reads_and_later_writes(kernel), 3);
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "dot_then_sums");
  }
}

TEST(SharedMemory, AKernelWithoutScratchDeclaresNone) {
  const std::string vector_add = R"(kernel @add(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<1024xi32>
  %3 = splat %0 : tile<1024xptr<f32>>
  %4 = addptr %3, %2 : tile<1024xptr<f32>>
  %5 = load %4 {cache = none, evict = none} : tile<1024xf32>
  %6 = add %5, %5 : tile<1024xf32>
  %7 = splat %1 : tile<1024xptr<f32>>
  %8 = addptr %7, %2 : tile<1024xptr<f32>>
  store %8, %6 {cache = none, evict = none}
}
)";
  const lowering::GpuKernel kernel = compile_text(vector_add);
  EXPECT_EQ(kernel.shared_bytes, 0);
  EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
  EXPECT_EQ(count(kernel.llvm_ir, "kiln.shared_bytes"), 0) << kernel.llvm_ir;
}

TEST(SharedMemory, A64KibTransposeLowersAboveTheStaticLimit) {
  // The 128x128 f32 tile converted through shared memory: 64 KiB, more than
  // the 48 KiB a kernel may declare statically.
  const int tile_bytes = 128 * 128 * 4;
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(transpose_add_text(128, "f32"), arch, 8);
    EXPECT_EQ(kernel.shared_bytes, tile_bytes);
    EXPECT_GT(kernel.shared_bytes, 48 * 1024);
    expect_one_dynamic_array(kernel);
    EXPECT_TRUE(contains(kernel.llvm_ir, "!kiln.shared_bytes = !{!"));
    EXPECT_TRUE(contains(kernel.llvm_ir, "!{i32 65536}"));
    EXPECT_GE(count(kernel.ptx, "st.shared"), 1) << kernel.ptx;
    EXPECT_GE(count(kernel.ptx, "ld.shared"), 1) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "transpose_add_128");
  }
}

TEST(SharedMemory, MoreThanTheArchitectureGivesABlockIsAnError) {
  // 256x256 f32 through shared memory: 256 KiB.
  const std::string text = transpose_add_text(256, "f32");
  for (const auto& [arch, limit] : {std::pair{"sm_80", 166912}, std::pair{"sm_90a", 232448}}) {
    try {
      compile_text(text, arch, 16);
      FAIL() << "lowered 256 KiB of shared memory for " << arch;
    } catch (const lowering::LoweringError& error) {
      EXPECT_EQ(std::string(error.what()),
                "kernel transpose_add needs 262144 bytes of shared memory per program, "
                "more than the " +
                    std::to_string(limit) + " bytes " + arch + " gives one block");
    }
  }
  // 128 KiB: within sm_80's 163 KiB, above sm_86's 99 KiB.
  const std::string half = transpose_add_text(128, "f64");
  EXPECT_EQ(compile_text(half, "sm_80", 8).shared_bytes, 128 * 128 * 8);
  try {
    compile_text(half, "sm_86", 8);
    FAIL() << "lowered 128 KiB of shared memory for sm_86";
  } catch (const lowering::LoweringError& error) {
    EXPECT_STREQ(error.what(),
                 "kernel transpose_add needs 131072 bytes of shared memory per program, more than the 101376 bytes "
                 "sm_86 gives one block");
  }
}

}  // namespace
}  // namespace kiln::codegen_test
