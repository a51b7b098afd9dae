// Layout conversions through the GPU code generator: a 1-D tile used both
// as a row and as a column (expand_dims at axes 0 and 1, attention's causal
// mask) lives in one layout and the other use reads a converted copy: index
// arithmetic (an arange) computed again in the other layout, a loaded tile
// moved with warp shuffles when every element is in the reader's warp and
// through shared memory otherwise; shuffle plans read the right element in
// every thread; conversions through shuffles and through shared memory
// work inside a loop; the layout dump names each one's cost; what is still
// not convertible is a clear error.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "codegen/codegen_support.hpp"
#include "codegen/kernels_text.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/layout_conversion.hpp"
#include "kiln/lowering/rematerialize.hpp"
#include "lowering/shuffle_plan_simulation.hpp"

namespace kiln::codegen_test {
namespace {

/// out[i][j] = i + j over a 64x64 tile: %1 is needed as a row and as a column.
const char* kRowPlusColumn = R"(kernel @row_plus_column(%0: ptr<i32> {divisibility = 16}) {
  %1 = arange {start = 0} : tile<64xi32>
  %2 = expand_dims %1 {axis = 0} : tile<1x64xi32> loc("k.hpp":4)
  %3 = expand_dims %1 {axis = 1} : tile<64x1xi32> loc("k.hpp":5)
  %4 = broadcast %2 : tile<64x64xi32>
  %5 = broadcast %3 : tile<64x64xi32>
  %6 = add %4, %5 : tile<64x64xi32>
  %7 = constant {value = 64} : tile<64x1xi32>
  %8 = mul %3, %7 : tile<64x1xi32>
  %9 = broadcast %8 : tile<64x64xi32>
  %10 = add %9, %4 : tile<64x64xi32>
  %11 = splat %0 : tile<64x64xptr<i32>>
  %12 = addptr %11, %10 : tile<64x64xptr<i32>>
  store %12, %6 {cache = none, evict = none}
}
)";

/// out[i][j] = v[i] + v[j] over a 64x64 tile, v loaded from %1: the loaded
/// %5 is needed as a row and as a column, and is not index arithmetic.
const char* kLoadedRowPlusColumn =
    R"(kernel @loaded_row_plus_column(%0: ptr<i32> {divisibility = 16}, %1: ptr<i32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<64xi32>
  %3 = splat %1 : tile<64xptr<i32>>
  %4 = addptr %3, %2 : tile<64xptr<i32>>
  %5 = load %4 {cache = none, evict = none} : tile<64xi32>
  %6 = expand_dims %5 {axis = 0} : tile<1x64xi32>
  %7 = expand_dims %5 {axis = 1} : tile<64x1xi32>
  %8 = broadcast %6 : tile<64x64xi32>
  %9 = broadcast %7 : tile<64x64xi32>
  %10 = add %8, %9 : tile<64x64xi32>
  %11 = splat %0 : tile<64x64xptr<i32>>
  %12 = addptr %11, %10 : tile<64x64xptr<i32>>
  store %12, %10 {cache = none, evict = none}
}
)";

/// out[i][j] = sum over blocks b of (b*16 + i) * (b*16 + j): a tile computed in
/// the loop body is needed as a row and as a column in every iteration.
const char* kOuterProductsInALoop =
    R"(kernel @outer_products(%0: ptr<f32> {divisibility = 16}, %1: i32) {
  %2 = constant {value = 0} : i32
  %3 = constant {value = 16} : i32
  %4 = arange {start = 0} : tile<16xi32>
  %5 = constant {value = 0.0} : tile<16x16xf32>
  %6 = for %2, %1, %3, %5 : tile<16x16xf32> {
  ^(%7: i32, %8: tile<16x16xf32>):
    %9 = splat %7 : tile<16xi32>
    %10 = add %9, %4 : tile<16xi32>
    %11 = cast %10 : tile<16xf32>
    %12 = expand_dims %11 {axis = 0} : tile<1x16xf32>
    %13 = expand_dims %11 {axis = 1} : tile<16x1xf32>
    %14 = broadcast %12 : tile<16x16xf32>
    %15 = broadcast %13 : tile<16x16xf32>
    %16 = mul %14, %15 : tile<16x16xf32>
    %17 = add %8, %16 : tile<16x16xf32>
    yield %17
  }
  %18 = expand_dims %4 {axis = 1} : tile<16x1xi32>
  %19 = constant {value = 16} : tile<16x1xi32>
  %20 = mul %18, %19 : tile<16x1xi32>
  %21 = broadcast %20 : tile<16x16xi32>
  %22 = expand_dims %4 {axis = 0} : tile<1x16xi32>
  %23 = broadcast %22 : tile<16x16xi32>
  %24 = add %21, %23 : tile<16x16xi32>
  %25 = splat %0 : tile<16x16xptr<f32>>
  %26 = addptr %25, %24 : tile<16x16xptr<f32>>
  store %26, %6 {cache = none, evict = none}
}
)";

/// out[i][j] = v[i] + v[j] over a 32x32 tile, v loaded, with unaligned
/// pointers (one element per access): the row and the column layouts differ
/// only inside warps.
const char* kSmallRowPlusColumn = R"(kernel @small_row_plus_column(%0: ptr<i32>) {
  %1 = arange {start = 0} : tile<32xi32>
  %2 = splat %0 : tile<32xptr<i32>>
  %3 = addptr %2, %1 : tile<32xptr<i32>>
  %4 = load %3 {cache = none, evict = none} : tile<32xi32>
  %5 = expand_dims %4 {axis = 0} : tile<1x32xi32>
  %6 = expand_dims %4 {axis = 1} : tile<32x1xi32>
  %7 = broadcast %5 : tile<32x32xi32>
  %8 = broadcast %6 : tile<32x32xi32>
  %9 = add %7, %8 : tile<32x32xi32>
  %10 = splat %0 : tile<32x32xptr<i32>>
  %11 = addptr %10, %9 : tile<32x32xptr<i32>>
  store %11, %9 {cache = none, evict = none}
}
)";

/// The layouts of a `numel`-element arange used as a row and as a column of
/// an r x c tile, as layout assignment chooses them for `num_warps` warps.
std::optional<lowering::LayoutConversion> row_to_column(int numel, int r, int c, int num_warps) {
  const std::string n = std::to_string(numel), shape = std::to_string(r) + "x" + std::to_string(c);
  const std::string text = "kernel @k(%0: ptr<i32>) {\n  %1 = arange {start = 0} : tile<" + n +
                           "xi32>\n  %2 = expand_dims %1 {axis = 0} : tile<1x" + n +
                           "xi32>\n  %3 = expand_dims %1 {axis = 1} : tile<" + n +
                           "x1xi32>\n  %4 = constant {value = 1} : tile<" + shape + "xi32>\n  %5 = splat %0 : tile<" +
                           shape + "xptr<i32>>\n  store %5, %4 {cache = none, evict = none}\n}\n";
  std::unique_ptr<ir::Function> fn = ir::parse_function(text);
  const lowering::LayoutMap layouts =
      lowering::assign_layouts(*fn, lowering::analyze_axes(*fn), lowering::GpuTarget{.num_warps = num_warps});
  const lowering::LayoutConversion* conversion = layouts.conversion(*fn->body.ops[2], *fn->body.ops[0]->result());
  if (!conversion) return std::nullopt;
  return *conversion;
}

TEST(Conversion, ShufflePlansReadTheRightElementInEveryThread) {
  int planned = 0;
  for (int numel : {2, 8, 32, 128})
    for (int r : {1, 4, 32, 128})
      for (int c : {1, 8, 64, 256})
        for (int num_warps : {1, 4, 8}) {
          const auto conversion = row_to_column(numel, r, c, num_warps);
          if (!conversion) continue;
          const auto plan = lowering::plan_warp_shuffle(conversion->from, conversion->to);
          if (!plan) continue;
          ++planned;
          lowering::testing::expect_plan_delivers(conversion->from, conversion->to, *plan,
                                                  std::to_string(numel) + " elements, " + std::to_string(r) + "x" +
                                                      std::to_string(c) + ", " + std::to_string(num_warps) + " warps");
        }
  EXPECT_GE(planned, 20);
}

TEST(Conversion, RegisterPlansReadTheRightElementInEveryThread) {
  auto element = [](const lowering::LinearLayout& layout, int reg, int lane, int warp) {
    return layout.apply({{"register", reg}, {"lane", lane}, {"warp", warp}});
  };
  int planned = 0;
  for (int numel : {2, 4, 8})
    for (int r : {1, 4, 8, 32})
      for (int c : {1, 2, 8})
        for (int num_warps : {1, 4}) {
          const auto conversion = row_to_column(numel, r, c, num_warps);
          if (!conversion) continue;
          const auto plan = lowering::plan_register_permute(conversion->from, conversion->to);
          if (!plan) continue;
          ++planned;
          const lowering::LinearLayout& to = conversion->to;
          for (int warp = 0; warp < to.in_dim_size("warp"); ++warp)
            for (int lane = 0; lane < to.in_dim_size("lane"); ++lane)
              for (int reg = 0; reg < to.in_dim_size("register"); ++reg) {
                int source = plan->source_register[reg];
                for (std::size_t bit = 0; bit < plan->lane_bases.size(); ++bit)
                  if (lane >> bit & 1) source ^= plan->lane_bases[bit];
                for (std::size_t bit = 0; bit < plan->warp_bases.size(); ++bit)
                  if (warp >> bit & 1) source ^= plan->warp_bases[bit];
                ASSERT_EQ(element(conversion->from, source, lane, warp), element(to, reg, lane, warp))
                    << numel << " elements, " << r << "x" << c << ", " << num_warps << " warps, register " << reg
                    << " of lane " << lane << " in warp " << warp;
              }
        }
  EXPECT_GE(planned, 4);
}

TEST(Conversion, WithinThreadsPicksAmongTheThreadsRegisters) {
  // Two elements as a row live in every thread's two registers; as a column
  // (the 4x1 tile spreads rows over lanes) lane bit 0 picks one of them.
  const std::string text = R"(kernel @pick(%0: ptr<i32>) {
  %1 = arange {start = 0} : tile<2xi32>
  %2 = expand_dims %1 {axis = 0} : tile<1x2xi32>
  %3 = expand_dims %1 {axis = 1} : tile<2x1xi32>
  %4 = constant {value = 1} : tile<4x1xi32>
  %5 = splat %0 : tile<4x1xptr<i32>>
  store %5, %4 {cache = none, evict = none}
  %6 = splat %0 : tile<1x2xptr<i32>>
  store %6, %2 {cache = none, evict = none}
  %7 = splat %0 : tile<2x1xptr<i32>>
  store %7, %3 {cache = none, evict = none}
}
)";
  std::unique_ptr<ir::Function> fn = ir::parse_function(text);
  const lowering::LayoutMap layouts =
      lowering::assign_layouts(*fn, lowering::analyze_axes(*fn), lowering::GpuTarget{.num_warps = 4});
  const lowering::LayoutConversion* conversion = layouts.conversion(*fn->body.ops[2], *fn->body.ops[0]->result());
  ASSERT_NE(conversion, nullptr);
  EXPECT_EQ(lowering::classify_conversion(conversion->from, conversion->to),
            lowering::ConversionKind::register_permute);
  const auto plan = lowering::plan_register_permute(conversion->from, conversion->to);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->lane_bases.at(0), 1);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(text, arch);
    EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "pick");
  }
}

TEST(Conversion, NoShufflePlanAcrossWarps) {
  const auto conversion = row_to_column(64, 64, 64, 4);
  ASSERT_TRUE(conversion.has_value());
  EXPECT_EQ(lowering::classify_conversion(conversion->from, conversion->to), lowering::ConversionKind::shared_memory);
  EXPECT_FALSE(lowering::plan_warp_shuffle(conversion->from, conversion->to).has_value());
}

TEST(Conversion, WithinWarpsUsesShuffles) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kSmallRowPlusColumn, arch);
    EXPECT_GE(count(kernel.ptx, "shfl.sync.idx.b32"), 1) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "small_row_plus_column");
  }
}

TEST(Conversion, RowAndColumnUseRecordOneConversion) {
  std::unique_ptr<ir::Function> fn = ir::parse_function(kRowPlusColumn);
  const lowering::AxisInfoMap axes = lowering::analyze_axes(*fn);
  const lowering::LayoutMap layouts = lowering::assign_layouts(*fn, axes, lowering::GpuTarget{.num_warps = 4});
  ASSERT_EQ(layouts.conversion_count(), 1u);
  const ir::Operation& row = *fn->body.ops[1];
  const ir::Operation& column = *fn->body.ops[2];
  const ir::Value& arange = *fn->body.ops[0]->result();
  // The first expand_dims decides the layout; the second reads a copy.
  EXPECT_EQ(layouts.conversion(row, arange), nullptr);
  const lowering::LayoutConversion* conversion = layouts.conversion(column, arange);
  ASSERT_NE(conversion, nullptr);
  EXPECT_EQ(conversion->value, &arange);
  EXPECT_EQ(conversion->from, layouts.at(arange));
  EXPECT_EQ(conversion->from, lowering::slice_layout(layouts.at(*row.result()), 0));
  EXPECT_EQ(conversion->to, lowering::slice_layout(layouts.at(*column.result()), 1));
  EXPECT_NE(conversion->from, conversion->to);
}

TEST(Conversion, AnArangeAsRowAndColumnIsComputedAgain) {
  std::unique_ptr<ir::Function> fn = ir::parse_function(kRowPlusColumn);
  const lowering::LayoutMap layouts =
      lowering::assign_layouts(*fn, lowering::analyze_axes(*fn), lowering::GpuTarget{.num_warps = 4});
  const lowering::LayoutConversion* conversion = layouts.conversion(*fn->body.ops[2], *fn->body.ops[0]->result());
  ASSERT_NE(conversion, nullptr);
  // The elements would move between lanes: a warp shuffle, were it not an arange.
  EXPECT_EQ(lowering::classify_conversion(conversion->from, conversion->to), lowering::ConversionKind::warp_shuffle);
  EXPECT_EQ(lowering::planned_conversion_kind(*conversion), lowering::ConversionKind::rematerialize);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kRowPlusColumn, arch);
    EXPECT_EQ(kernel.shared_bytes, 0);
    EXPECT_EQ(count(kernel.ptx, ".shared"), 0) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "shfl.sync"), 0) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "row_plus_column");
  }
}

TEST(Conversion, ALoadedRowAndColumnGoThroughSharedMemory) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kLoadedRowPlusColumn, arch);
    EXPECT_EQ(kernel.shared_bytes, 256);  // 64 i32
    EXPECT_TRUE(contains(kernel.ptx, ".extern .shared .align 16 .b8 kiln_shared[];"));
    EXPECT_GE(count(kernel.ptx, "st.shared"), 1);
    EXPECT_GE(count(kernel.ptx, "ld.shared"), 1);
    EXPECT_EQ(count(kernel.ptx, "bar.sync"), 2) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "loaded_row_plus_column");
  }
}

TEST(Conversion, SharedMemoryCarriesMasksAsBytesAndHalvesAsHalves) {
  // A causal-style mask and an f16 tile, each needed as a row and a column.
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kThreeConversions, arch);
    // The loaded tile's 64 i32, also a row and a column, take the most; the
    // mask's 64 (a byte per element) and the f16 tile's 128 share them.
    EXPECT_EQ(kernel.shared_bytes, 64 * 4);
    EXPECT_GE(count(kernel.ptx, "ld.shared.u8"), 1) << kernel.ptx;
    EXPECT_GE(count(kernel.ptx, "ld.shared.b16"), 1) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "masks");
  }
}

/// Row sums plus column sums of an iteration-dependent 64x64 tile over 4
/// warps, accumulated in a loop: the column sums are spread over other warps
/// than the row sums and reach them through shared memory in every iteration.
const char* kSumsInALoop = R"(kernel @sums_in_a_loop(%0: ptr<f32> {divisibility = 16}, %1: i32) {
  %2 = constant {value = 0} : i32
  %3 = constant {value = 1} : i32
  %4 = constant {value = 0.0} : tile<64xf32>
  %5 = for %2, %1, %3, %4 : tile<64xf32> {
  ^(%6: i32, %7: tile<64xf32>):
    %8 = arange {start = 0} : tile<64xi32>
    %9 = splat %6 : tile<64xi32>
    %10 = add %8, %9 : tile<64xi32>
    %11 = cast %10 : tile<64xf32>
    %12 = expand_dims %11 {axis = 0} : tile<1x64xf32>
    %13 = broadcast %12 : tile<64x64xf32>
    %14 = reduce %13 {axis = 1} : tile<64xf32> loc("k.hpp":3) {
    ^(%15: f32, %16: f32):
      %17 = add %15, %16 : f32
      yield %17
    }
    %18 = reduce %13 {axis = 0} : tile<64xf32> loc("k.hpp":4) {
    ^(%19: f32, %20: f32):
      %21 = add %19, %20 : f32
      yield %21
    }
    %22 = add %14, %18 : tile<64xf32>
    %23 = add %7, %22 : tile<64xf32>
    yield %23
  }
  %24 = arange {start = 0} : tile<64xi32>
  %25 = splat %0 : tile<64xptr<f32>>
  %26 = addptr %25, %24 : tile<64xptr<f32>>
  store %26, %5 {cache = none, evict = none}
}
)";

TEST(Conversion, InsideALoopBody) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kSumsInALoop, arch);
    // As in TwoReducesLeavingOneTileInTwoLayoutsConvertTheSecondResult, two
    // barriers for each sum across warps and two for the conversion, now in
    // the loop's body.
    EXPECT_EQ(count(kernel.ptx, "bar.sync"), 3 * 2) << kernel.ptx;
    EXPECT_EQ(kernel.shared_bytes, 64 * 2 * 4);
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "sums_in_a_loop");
  }
}

TEST(Conversion, InsideALoopBodyWithinAWarpShuffles) {
  // 16 elements over 4 warps: a thread holds 2 consecutive elements of the
  // row and needs 1 of the column, in another lane. The sender picks which
  // of its 2 it offers by the reader's lane (1 select), and one shuffle
  // delivers.
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(kOuterProductsInALoop, arch);
    EXPECT_EQ(kernel.shared_bytes, 0u);
    EXPECT_EQ(count(kernel.ptx, "shfl.sync.idx.b32"), 1) << kernel.ptx;
    EXPECT_GE(count(kernel.ptx, "selp.f32"), 1) << kernel.ptx;
    EXPECT_EQ(count(kernel.ptx, "bar.sync"), 0) << kernel.ptx;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "outer_products");
  }
}

TEST(Conversion, TheLayoutDumpNamesEachConversionsCost) {
  auto layouts_of = [](const char* text) {
    std::ostringstream log;
    const std::unique_ptr<ir::Function> fn = ir::parse_function(text);
    lowering::compile_for_gpu(*fn, lowering::GpuTarget{.arch = "sm_90a", .num_warps = 4},
                              {.dump_after = "layouts", .stop_after = "layouts", .log = &log});
    return log.str();
  };
  // The 16-element row: one shuffle a thread, the sender picking which of
  // its two elements it offers. The loaded 64-element i32 row, needed as a
  // column of a 64x64 tile over 4 warps, crosses warps: 256 bytes of scratch
  // and two barriers.
  EXPECT_TRUE(
      contains(layouts_of(kOuterProductsInALoop),
               "(tile<16xf32>) for `expand_dims` at %13 = expand_dims: warp_shuffle, 1 shuffle with selects\n"));
  EXPECT_TRUE(contains(layouts_of(kLoadedRowPlusColumn), ": shared_memory, 256 bytes, 2 barriers\n"));
}

TEST(Conversion, TwoReducesLeavingOneTileInTwoLayoutsConvertTheSecondResult) {
  const std::string text = R"(kernel @two_reduces(%0: ptr<f32>) {
  %1 = constant {value = 1.0} : tile<64x64xf32>
  %2 = reduce %1 {axis = 1} : tile<64xf32> loc("k.hpp":3) {
  ^(%3: f32, %4: f32):
    %5 = add %3, %4 : f32
    yield %5
  }
  %6 = reduce %1 {axis = 0} : tile<64xf32> loc("k.hpp":4) {
  ^(%7: f32, %8: f32):
    %9 = add %7, %8 : f32
    yield %9
  }
  %10 = add %2, %6 : tile<64xf32>
  %11 = splat %0 : tile<64xptr<f32>>
  store %11, %10 {cache = none, evict = none}
}
)";
  // The class of %2, %6 and %10 takes the row sums' layout (the first
  // reduce); the column sums leave the slice along axis 0 and, spread over
  // other warps, reach it through one shared-memory conversion.
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel = compile_text(text, arch);
    // The constant tile lies over 2 x 2 warps: both sums cross 2 warps
    // (64 x 2 warps x 4 bytes each), and the column sums are converted (64 x 4
    // bytes): two barriers each, one region of the largest size.
    EXPECT_EQ(count(kernel.llvm_ir, "call void @llvm.nvvm.barrier0()"), 3 * 2) << kernel.llvm_ir;
    EXPECT_EQ(kernel.shared_bytes, 64 * 2 * 4);
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, "two_reduces");
  }
}

}  // namespace
}  // namespace kiln::codegen_test
