// Layout assignment on IR text: vector widths from the axis analysis, one 2-D
// layout per kernel, slices for the 1-D tiles that expand_dims widens.
#include <gtest/gtest.h>

#include <memory>

#include "codegen/kernels_text.hpp"
#include "ir_samples.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/shape_layouts.hpp"

namespace kiln::lowering {
namespace {

struct Assigned {
  std::unique_ptr<ir::Function> fn;
  AxisInfoMap axes;
  LayoutMap layouts;

  Assigned(const std::string& text, int num_warps) : fn(ir::parse_function(text)) {
    axes = analyze_axes(*fn);
    layouts = assign_layouts(*fn, axes, GpuTarget{.num_warps = num_warps});
  }

  /// The layout of the value printed as %id (a result of the kernel body).
  const LinearLayout& of(int id) const {
    for (const auto& op : fn->body.ops)
      for (const ir::Value* result : op->results)
        if (result->id == id) return layouts.at(*result);
    throw std::invalid_argument("no value %" + std::to_string(id));
  }
};

TEST(AssignLayouts, SpecializedVectorAddHoldsFourContiguousFloatsPerRun) {
  const Assigned a(codegen_test::specialized_vector_add(), 4);
  const LinearLayout expected = blocked_layout({1024}, {4}, {32}, {4}, {0});
  for (int id : {7, 9, 11, 13, 14, 18, 20}) EXPECT_EQ(a.of(id), expected) << "%" << id;
  EXPECT_EQ(a.of(13).contiguous_elements("dim0"), 4);
  EXPECT_EQ(a.of(13).in_dim_size("register"), 8);
}

TEST(AssignLayouts, WithoutFactsOneElementPerRun) {
  const Assigned a(codegen_test::vector_add_text("", ""), 4);
  EXPECT_EQ(a.of(14), blocked_layout({1024}, {1}, {32}, {4}, {0}));
}

TEST(AssignLayouts, TwoDimensionalTilesShareOneBlockedLayout) {
  const Assigned a(codegen_test::kAddBias, 4);
  // 64 columns of 4 floats: 16 lanes along a row, 2 rows per warp, warps down the rows.
  const LinearLayout tile = blocked_layout({64, 64}, {1, 4}, {2, 16}, {4, 1}, {1, 0});
  EXPECT_EQ(a.of(14), tile);
  EXPECT_EQ(a.of(20), tile);
  EXPECT_EQ(a.of(9), blocked_layout({1, 64}, {1, 4}, {2, 16}, {4, 1}, {1, 0}));
  // The 1-D tiles take the slices of the 2-D layout expand_dims widens them to.
  EXPECT_EQ(a.of(3), slice_layout(blocked_layout({64, 1}, {1, 4}, {2, 16}, {4, 1}, {1, 0}), 1));
  EXPECT_EQ(a.of(4), slice_layout(blocked_layout({1, 64}, {1, 4}, {2, 16}, {4, 1}, {1, 0}), 0));
  EXPECT_EQ(a.of(17), a.of(4));
}

TEST(AssignLayouts, WideTilesPutWarpsAlongTheRow) {
  const std::string text = R"(kernel @rows(%0: ptr<f32> {divisibility = 16}) {
  %1 = arange {start = 0} : tile<512xi32>
  %2 = expand_dims %1 {axis = 0} : tile<1x512xi32>
  %3 = broadcast %2 : tile<16x512xi32>
  %4 = splat %0 : tile<16x512xptr<f32>>
  %5 = addptr %4, %3 : tile<16x512xptr<f32>>
  %6 = load %5 {cache = none, evict = none} : tile<16x512xf32>
}
)";
  const Assigned a(text, 4);
  // 512 columns: a warp's 32 lanes cover 128 of them, four warps the row.
  EXPECT_EQ(a.of(6), blocked_layout({16, 512}, {1, 4}, {1, 32}, {1, 4}, {1, 0}));
}

TEST(AssignLayouts, BroadcastRegisterMapStaysInTheThread) {
  const Assigned a(codegen_test::kAddBias, 4);
  const std::vector<int> map = thread_local_register_map(a.of(19), {64, 64}, a.of(18), {1, 64}, -1, "broadcast");
  ASSERT_EQ(map.size(), 32u);
  // Rows repeat the same four columns: registers 4k..4k+3 read source registers 0..3.
  for (int r = 0; r < 32; ++r) EXPECT_EQ(map[r], r % 4) << r;
}

TEST(AssignLayouts, RegisterMapRefusesElementsOfOtherThreads) {
  const LinearLayout rows = blocked_layout({64, 64}, {1, 4}, {2, 16}, {4, 1}, {1, 0});
  const LinearLayout columns = blocked_layout({64, 64}, {4, 1}, {16, 2}, {1, 4}, {0, 1});
  EXPECT_THROW(thread_local_register_map(rows, {64, 64}, columns, {64, 64}, -1, "broadcast"), InternalError);
}

TEST(AssignLayouts, ATransposeFeedingADotMovesNoDataOfItsOwn) {
  // a^T gathered as a 32 x 64 tile and transposed into the dot's a: the
  // dot converts a into its fragments from wherever it lives, so the
  // transpose takes its operand's layout with the dimensions swapped and
  // the tile crosses shared memory once (the dot's conversion), not twice.
  using ir_samples::load_text;
  using ir_samples::row_major_offsets;
  const std::string body = row_major_offsets("a_offsets", 32, 64) +
                           load_text("a_t", "%0", "a_offsets", "32x64", "f16") +
                           "  %a = trans %a_t {order = [1, 0]} : tile<64x32xf16>\n" +
                           row_major_offsets("b_offsets", 32, 32) + load_text("b", "%1", "b_offsets", "32x32", "f16") +
                           "  %zero = constant {value = 0.0} : tile<64x32xf32>\n"
                           "  %c = dot %a, %b, %zero {precision = ieee} : tile<64x32xf32>\n" +
                           row_major_offsets("c_offsets", 64, 32) +
                           ir_samples::store_text("c_pointers", "%2", "c_offsets", "c", "64x32", "f32");
  const Assigned a(ir_samples::pointer_kernel_text("transposed_a", {"f16", "f16", "f32"}, " {divisibility = 16}", body),
                   4);
  const ir::Operation* trans = nullptr;
  const ir::Operation* dot = nullptr;
  for (const auto& op : a.fn->body.ops) {
    if (op->code == ir::OpCode::trans) trans = op.get();
    if (op->code == ir::OpCode::dot) dot = op.get();
  }
  ASSERT_NE(trans, nullptr);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(a.layouts.conversion(*trans, *trans->operands[0]), nullptr);
  EXPECT_EQ(a.layouts.at(*trans->result()), trans_operand_layout(a.layouts.at(*trans->operands[0]), {1, 0}));
  EXPECT_NE(a.layouts.conversion(*dot, *dot->operands[0]), nullptr) << "a reaches its fragments through a conversion";
}

}  // namespace
}  // namespace kiln::lowering
