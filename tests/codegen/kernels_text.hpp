// IR text of the kernels the codegen tests compile (ir/OPS.md's text form),
// so the tests need no DSL.
#pragma once

#include <string>

#include "ir_samples.hpp"

namespace kiln::codegen_test {

using ir_samples::vector_add_text;

/// The specialised vector_add: 16-byte aligned pointers, n a multiple of 16.
inline std::string specialized_vector_add() { return vector_add_text(" {divisibility = 16}", " {divisibility = 16}"); }

/// The first lines of a kernel body reading x[r, c] over one 64x64 f32 tile
/// of %0 (row stride 64), numbered from %3 as after three arguments: %3 and
/// %4 the row and column aranges, %9 the columns (tile<1x64xi32>), %11 the
/// offsets, %13 the pointers and %14 the values. The load gives the kernel its
/// 2-D layout: [1, 4] registers, [2, 16] lanes and [4, 1] warps. (Numbered,
/// not named: the layout tests look values up by number.)
inline constexpr const char* kLoad64x64 = R"(  %3 = arange {start = 0} : tile<64xi32>
  %4 = arange {start = 0} : tile<64xi32>
  %5 = expand_dims %3 {axis = 1} : tile<64x1xi32>
  %6 = constant {value = 64} : tile<64x1xi32>
  %7 = mul %5, %6 : tile<64x1xi32>
  %8 = broadcast %7 : tile<64x64xi32>
  %9 = expand_dims %4 {axis = 0} : tile<1x64xi32>
  %10 = broadcast %9 : tile<64x64xi32>
  %11 = add %8, %10 : tile<64x64xi32>
  %12 = splat %0 : tile<64x64xptr<f32>>
  %13 = addptr %12, %11 : tile<64x64xptr<f32>>
  %14 = load %13 {cache = none, evict = none} : tile<64x64xf32>
)";

/// A mask (i1, a byte per element in memory), an f16 tile and an i32 tile,
/// each of 64 elements needed as a row and as a column: three conversions
/// through shared memory, of 64, 128 and 256 bytes. All three come from a
/// load, so none is index arithmetic computed again in the other layout;
/// the stores' offsets are (from the arange).
inline constexpr const char* kThreeConversions =
    "kernel @three_conversions(%0: ptr<i1> {divisibility = 16}, "
    R"(%1: ptr<f16> {divisibility = 16}, %2: ptr<i32> {divisibility = 16}) {
  %3 = arange {start = 0} : tile<64xi32>
  %4 = splat %2 : tile<64xptr<i32>>
  %5 = addptr %4, %3 : tile<64xptr<i32>>
  %6 = load %5 {cache = none, evict = none} : tile<64xi32>
  %7 = constant {value = 32} : tile<64xi32>
  %8 = cmp %6, %7 {pred = lt} : tile<64xi1>
  %9 = expand_dims %8 {axis = 0} : tile<1x64xi1>
  %10 = expand_dims %8 {axis = 1} : tile<64x1xi1>
  %11 = broadcast %9 : tile<64x64xi1>
  %12 = broadcast %10 : tile<64x64xi1>
  %13 = and %11, %12 : tile<64x64xi1>
  %14 = cast %6 : tile<64xf16>
  %15 = expand_dims %14 {axis = 0} : tile<1x64xf16>
  %16 = expand_dims %14 {axis = 1} : tile<64x1xf16>
  %17 = broadcast %15 : tile<64x64xf16>
  %18 = broadcast %16 : tile<64x64xf16>
  %19 = add %17, %18 : tile<64x64xf16>
  %20 = expand_dims %6 {axis = 0} : tile<1x64xi32>
  %21 = expand_dims %6 {axis = 1} : tile<64x1xi32>
  %22 = broadcast %20 : tile<64x64xi32>
  %23 = broadcast %21 : tile<64x64xi32>
  %24 = add %22, %23 : tile<64x64xi32>
  %25 = expand_dims %3 {axis = 1} : tile<64x1xi32>
  %26 = constant {value = 64} : tile<64x1xi32>
  %27 = mul %25, %26 : tile<64x1xi32>
  %28 = broadcast %27 : tile<64x64xi32>
  %29 = expand_dims %3 {axis = 0} : tile<1x64xi32>
  %30 = broadcast %29 : tile<64x64xi32>
  %31 = add %28, %30 : tile<64x64xi32>
  %32 = splat %0 : tile<64x64xptr<i1>>
  %33 = addptr %32, %31 : tile<64x64xptr<i1>>
  store %33, %13 {cache = none, evict = none}
  %34 = splat %1 : tile<64x64xptr<f16>>
  %35 = addptr %34, %31 : tile<64x64xptr<f16>>
  store %35, %19 {cache = none, evict = none}
  %36 = splat %2 : tile<64x64xptr<i32>>
  %37 = addptr %36, %31 : tile<64x64xptr<i32>>
  store %37, %24 {cache = none, evict = none}
}
)";

/// out[r, c] = x[r, c] + bias[c] over one 64x64 tile: expand_dims, broadcast
/// and a 1-D load feeding a 2-D add.
inline const std::string kAddBias =
    ir_samples::pointer_kernel_text("add_bias", {"f32", "f32", "f32"}, " {divisibility = 16}",
                                    std::string(kLoad64x64) + R"(  %15 = splat %1 : tile<64xptr<f32>>
  %16 = addptr %15, %4 : tile<64xptr<f32>>
  %17 = load %16 {cache = none, evict = none} : tile<64xf32>
  %18 = expand_dims %17 {axis = 0} : tile<1x64xf32>
  %19 = broadcast %18 : tile<64x64xf32>
  %20 = add %14, %19 : tile<64x64xf32>
  %21 = splat %2 : tile<64x64xptr<f32>>
  %22 = addptr %21, %11 : tile<64x64xptr<f32>>
  store %22, %20 {cache = none, evict = none}
)");

/// A 16x64 f32 tile of %0 loaded and stored back, which gives the kernel the
/// 2-D layout [1, 4] registers, [2, 16] lanes and [4, 1] warps per layout
/// tile, then `update` of a 16x2 f32 tile of %1 (row stride 64) through the
/// pointers %wrapped_pointers. The 16x2 tile wraps its 2 columns twice in the
/// 4 registers of a row and over the 16 lanes of a row, and takes two
/// repetitions of 8 rows: 8 registers per thread holding 4 distinct elements
/// (registers 2, 3, 6, 7 repeat 0, 1, 4, 5), and lanes 0-15 of a half-warp
/// all holding the same ones.
inline std::string wrapped_16x2_text(const std::string& update) {
  return ir_samples::pointer_kernel_text("wrapped", {"f32", "f32"}, " {divisibility = 16}",
                                         ir_samples::row_major_offsets("tile", 16, 64) +
                                             ir_samples::load_text("x", "%0", "tile", "16x64", "f32") +
                                             R"(  store %x_pointers, %x {cache = none, evict = none}
  %wrapped_column_range = arange {start = 0} : tile<2xi32>
  %wrapped_columns = expand_dims %wrapped_column_range {axis = 0} : tile<1x2xi32>
  %wrapped_columns_2d = broadcast %wrapped_columns : tile<16x2xi32>
  %wrapped_row_starts_2d = broadcast %tile_row_starts : tile<16x2xi32>
  %wrapped_offsets = add %wrapped_row_starts_2d, %wrapped_columns_2d : tile<16x2xi32>
  %wrapped_base = splat %1 : tile<16x2xptr<f32>>
  %wrapped_pointers = addptr %wrapped_base, %wrapped_offsets : tile<16x2xptr<f32>>
)" + update);
}

// Float, integer, unsigned and f64 arithmetic, the math unaries in f32 and
// f16, casts between all widths (f16, bf16, i8, i64, f64, i1), cmp, select
// and bitcast, stored through four outputs.
inline const char* kElementwise = R"(
kernel @elementwise(%0: ptr<f32> {divisibility = 16}, %1: ptr<f16> {divisibility = 16}, %2: ptr<i32> {divisibility = 16}, %3: ptr<f32> {divisibility = 16}, %4: ptr<i32> {divisibility = 16}, %5: ptr<bf16> {divisibility = 16}, %6: ptr<f64> {divisibility = 16}) {
  %7 = arange {start = 0} : tile<256xi32>
  %8 = splat %0 : tile<256xptr<f32>>
  %9 = addptr %8, %7 : tile<256xptr<f32>>
  %10 = load %9 {cache = none, evict = none} : tile<256xf32>
  %11 = splat %1 : tile<256xptr<f16>>
  %12 = addptr %11, %7 : tile<256xptr<f16>>
  %13 = load %12 {cache = none, evict = none} : tile<256xf16>
  %14 = splat %2 : tile<256xptr<i32>>
  %15 = addptr %14, %7 : tile<256xptr<i32>>
  %16 = load %15 {cache = none, evict = none} : tile<256xi32>
  %17 = cast %13 : tile<256xf32>
  %18 = add %10, %17 : tile<256xf32>
  %19 = sub %18, %10 : tile<256xf32>
  %20 = mul %19, %18 : tile<256xf32>
  %21 = div %20, %10 : tile<256xf32>
  %22 = rem %21, %17 : tile<256xf32>
  %23 = minimum %22, %10 : tile<256xf32>
  %24 = maximum %23, %17 : tile<256xf32>
  %25 = neg %24 : tile<256xf32>
  %26 = abs %25 : tile<256xf32>
  %27 = fma %26, %10, %17 : tile<256xf32>
  %28 = exp %27 : tile<256xf32>
  %29 = log %28 : tile<256xf32>
  %30 = sqrt %29 : tile<256xf32>
  %31 = floor %30 : tile<256xf32>
  %32 = ceil %30 : tile<256xf32>
  %33 = add %31, %32 : tile<256xf32>
  %34 = exp2 %33 : tile<256xf32>
  %35 = log2 %34 : tile<256xf32>
  %36 = rsqrt %35 : tile<256xf32>
  %37 = exp %13 : tile<256xf16>
  %38 = sqrt %37 : tile<256xf16>
  %39 = cast %38 : tile<256xbf16>
  %40 = cast %39 : tile<256xf32>
  %41 = add %36, %40 : tile<256xf32>
  %42 = cast %10 : tile<256xi32>
  %43 = add %42, %16 : tile<256xi32>
  %44 = sub %43, %16 : tile<256xi32>
  %45 = mul %44, %16 : tile<256xi32>
  %46 = div %45, %16 : tile<256xi32>
  %47 = rem %46, %16 : tile<256xi32>
  %48 = and %47, %42 : tile<256xi32>
  %49 = or %48, %16 : tile<256xi32>
  %50 = xor %49, %42 : tile<256xi32>
  %51 = shl %50, %16 : tile<256xi32>
  %52 = shr %51, %42 : tile<256xi32>
  %53 = not %52 : tile<256xi32>
  %54 = minimum %53, %42 : tile<256xi32>
  %55 = maximum %54, %16 : tile<256xi32>
  %56 = neg %55 : tile<256xi32>
  %57 = abs %56 : tile<256xi32>
  %58 = cast %57 : tile<256xu32>
  %59 = constant {value = 3} : tile<256xu32>
  %60 = shr %58, %59 : tile<256xu32>
  %61 = div %60, %59 : tile<256xu32>
  %62 = umulhi %61, %58 : tile<256xu32>
  %63 = maximum %62, %60 : tile<256xu32>
  %64 = cast %63 : tile<256xi8>
  %65 = cast %64 : tile<256xi64>
  %66 = cast %65 : tile<256xf64>
  %67 = sqrt %66 : tile<256xf64>
  %68 = floor %67 : tile<256xf64>
  %69 = minimum %68, %66 : tile<256xf64>
  %70 = cast %69 : tile<256xf32>
  %71 = cmp %41, %70 {pred = gt} : tile<256xi1>
  %72 = select %71, %41, %70 : tile<256xf32>
  %73 = cmp %57, %16 {pred = ne} : tile<256xi1>
  %74 = bitcast %72 : tile<256xi32>
  %75 = cast %73 : tile<256xi32>
  %76 = add %74, %75 : tile<256xi32>
  %77 = constant {value = 0.5} : tile<256xf32>
  %78 = cmp %72, %77 {pred = ne} : tile<256xi1>
  %79 = cast %78 : tile<256xf32>
  %80 = add %72, %79 : tile<256xf32>
  %81 = splat %3 : tile<256xptr<f32>>
  %82 = addptr %81, %7 : tile<256xptr<f32>>
  store %82, %80 {cache = none, evict = none}
  %83 = splat %4 : tile<256xptr<i32>>
  %84 = addptr %83, %7 : tile<256xptr<i32>>
  store %84, %76 {cache = none, evict = none}
  %85 = splat %5 : tile<256xptr<bf16>>
  %86 = addptr %85, %7 : tile<256xptr<bf16>>
  store %86, %39 {cache = none, evict = none}
  %87 = splat %6 : tile<256xptr<f64>>
  %88 = addptr %87, %7 : tile<256xptr<f64>>
  store %88, %69 {cache = none, evict = none}
}
)";

}  // namespace kiln::codegen_test
