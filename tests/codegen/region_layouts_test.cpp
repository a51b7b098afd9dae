// Layout assignment across regions: loop-carried values share one layout
// with their inits, yields and results; reduce results take the slice of
// their input's layout; a tile two ops need in different layouts keeps the
// reduce's and the other use reads a converted copy.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "kiln/ir/parser.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/compile.hpp"

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

  /// The layout of the value printed as %id, wherever it is defined.
  const LinearLayout& of(int id) const {
    const ir::Value* found = nullptr;
    ir::walk(fn->body, [&](ir::Operation& op) {
      for (const auto& region : op.regions)
        for (const ir::Value* argument : region->arguments)
          if (argument->id == id) found = argument;
      for (const ir::Value* result : op.results)
        if (result->id == id) found = result;
    });
    if (!found) throw std::invalid_argument("no value %" + std::to_string(id));
    return layouts.at(*found);
  }
};

TEST(RegionLayouts, LoopCarriedTileSharesItsClassLayout) {
  const Assigned a(
      R"(kernel @sum_blocks(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}, %2: i32 {divisibility = 16}) {
  %3 = constant {value = 0} : i32
  %4 = constant {value = 512} : i32
  %5 = arange {start = 0} : tile<512xi32>
  %6 = splat %0 : tile<512xptr<f32>>
  %7 = constant {value = 0.0} : tile<512xf32>
  %8 = for %3, %2, %4, %7 : tile<512xf32> {
  ^(%9: i32, %10: tile<512xf32>):
    %11 = splat %9 : tile<512xi32>
    %12 = add %11, %5 : tile<512xi32>
    %13 = addptr %6, %12 : tile<512xptr<f32>>
    %14 = load %13 {cache = none, evict = none} : tile<512xf32>
    %15 = add %10, %14 : tile<512xf32>
    yield %15
  }
  %16 = splat %1 : tile<512xptr<f32>>
  %17 = addptr %16, %5 : tile<512xptr<f32>>
  store %17, %8 {cache = none, evict = none}
}
)",
      4);
  // The loads in the body are 16-byte aligned runs of four: every carried value gets them.
  const LinearLayout expected = blocked_layout({512}, {4}, {32}, {4}, {0});
  for (int id : {5, 7, 8, 10, 12, 13, 14, 15, 17}) EXPECT_EQ(a.of(id), expected) << "%" << id;
}

TEST(RegionLayouts, ReduceResultIsTheSliceOfItsInput) {
  const Assigned a(R"(kernel @row_sum(%0: ptr<f32> {divisibility = 16}, %1: ptr<f32> {divisibility = 16}) {
  %2 = arange {start = 0} : tile<32xi32>
  %3 = arange {start = 0} : tile<128xi32>
  %4 = expand_dims %2 {axis = 1} : tile<32x1xi32>
  %5 = constant {value = 128} : tile<32x1xi32>
  %6 = mul %4, %5 : tile<32x1xi32>
  %7 = broadcast %6 : tile<32x128xi32>
  %8 = expand_dims %3 {axis = 0} : tile<1x128xi32>
  %9 = broadcast %8 : tile<32x128xi32>
  %10 = add %7, %9 : tile<32x128xi32>
  %11 = splat %0 : tile<32x128xptr<f32>>
  %12 = addptr %11, %10 : tile<32x128xptr<f32>>
  %13 = load %12 {cache = none, evict = none} : tile<32x128xf32>
  %14 = reduce %13 {axis = 1} : tile<32xf32> {
  ^(%15: f32, %16: f32):
    %17 = add %15, %16 : f32
    yield %17
  }
  %18 = splat %1 : tile<32xptr<f32>>
  %19 = addptr %18, %2 : tile<32xptr<f32>>
  store %19, %14 {cache = none, evict = none}
}
)",
                   4);
  const LinearLayout input = blocked_layout({32, 128}, {1, 4}, {1, 32}, {4, 1}, {1, 0});
  EXPECT_EQ(a.of(13), input);
  // The reduce's result, the stored pointers and the arange that also feeds
  // expand_dims at axis 1 are one class: both ops agree on its layout.
  for (int id : {2, 14, 19}) EXPECT_EQ(a.of(id), slice_layout(input, 1)) << "%" << id;
  EXPECT_EQ(a.of(14).in_dim_size("register"), 8);  // 32 rows over 4 warps
}

TEST(RegionLayouts, ReduceAndExpandDimsDisagreeingConvertAtTheExpandDims) {
  const std::string text = R"(kernel @conflict(%0: ptr<f32>) {
  %1 = constant {value = 1.0} : tile<64x64xf32>
  %2 = reduce %1 {axis = 1} : tile<64xf32> loc("k.hpp":3) {
  ^(%3: f32, %4: f32):
    %5 = add %3, %4 : f32
    yield %5
  }
  %6 = expand_dims %2 {axis = 0} : tile<1x64xf32> loc("k.hpp":4)
  %7 = broadcast %6 : tile<64x64xf32>
  %8 = splat %0 : tile<64x64xptr<f32>>
  store %8, %7 {cache = none, evict = none}
}
)";
  Assigned a(text, 4);
  // The reduce produces %2 in the slice of its input at 1; expand_dims at 0
  // reads a copy in the slice of its result at 0.
  EXPECT_EQ(a.of(2), slice_layout(a.of(1), 1));
  ASSERT_EQ(a.layouts.conversion_count(), 1u);
  const ir::Operation& expand = *a.fn->body.ops[2];
  const LayoutConversion* conversion = a.layouts.conversion(expand, *expand.operands[0]);
  ASSERT_NE(conversion, nullptr);
  EXPECT_EQ(conversion->from, a.of(2));
  EXPECT_EQ(conversion->to, slice_layout(a.of(6), 0));
}

}  // namespace
}  // namespace kiln::lowering
