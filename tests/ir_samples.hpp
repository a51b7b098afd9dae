// Tile-IR kernels in text form (ir/OPS.md) shared by the test suites that
// parse IR (the verifier's, the code generator's, the emu's), the filling of
// kernel templates, and the pieces kernels are built from: a header of
// pointer arguments, row-major offsets, loads and stores.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kiln::ir_samples {

/// `text` with each `{name}` replaced by its value.
inline std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [name, value] : values)
    for (std::size_t at = text.find("{" + name + "}"); at != std::string::npos;
         at = text.find("{" + name + "}", at + value.size()))
      text.replace(at, name.size() + 2, value);
  return text;
}

/// `kernel @name(%0: ptr<dtypes[0]>, %1: ptr<dtypes[1]>, ...) {`, `body`
/// and the closing brace: a kernel of pointer arguments only, each followed by
/// `pointer_facts` (e.g. " {divisibility = 16}", or "" for none).
inline std::string pointer_kernel_text(const std::string& name, const std::vector<std::string>& dtypes,
                                       const std::string& pointer_facts, const std::string& body) {
  std::string text = "kernel @" + name + "(";
  for (std::size_t i = 0; i < dtypes.size(); ++i)
    text += (i == 0 ? "%" : ", %") + std::to_string(i) + ": ptr<" + dtypes[i] + ">" + pointer_facts;
  return text + ") {\n" + body + "}\n";
}

/// Lines defining %`name` : tile<`rows` x `cols` x i32>, the row-major
/// offsets r * cols + c, from %`name`_rows (r, tile<rows x 1>),
/// %`name`_row_starts (r * cols, tile<rows x 1>) and %`name`_columns (c,
/// tile<1 x cols>), which later lines may use too.
inline std::string row_major_offsets(const std::string& name, int rows, int cols) {
  return fill(R"(  %{O}_row_range = arange {start = 0} : tile<{R}xi32>
  %{O}_column_range = arange {start = 0} : tile<{C}xi32>
  %{O}_rows = expand_dims %{O}_row_range {axis = 1} : tile<{R}x1xi32>
  %{O}_row_stride = constant {value = {C}} : tile<{R}x1xi32>
  %{O}_row_starts = mul %{O}_rows, %{O}_row_stride : tile<{R}x1xi32>
  %{O}_row_starts_2d = broadcast %{O}_row_starts : tile<{R}x{C}xi32>
  %{O}_columns = expand_dims %{O}_column_range {axis = 0} : tile<1x{C}xi32>
  %{O}_columns_2d = broadcast %{O}_columns : tile<{R}x{C}xi32>
  %{O} = add %{O}_row_starts_2d, %{O}_columns_2d : tile<{R}x{C}xi32>
)",
              {{"O", name}, {"R", std::to_string(rows)}, {"C", std::to_string(cols)}});
}

/// Lines defining %`name`, the row-major offsets of the `cols` x `rows`
/// transpose of a `rows` x `cols` tile, computed in the tile's own shape
/// (element (r, c) goes to c * rows + r) and then transposed; `source` names
/// the tile's row_major_offsets, whose rows and columns they start from.
inline std::string transposed_offsets(const std::string& name, const std::string& source, int rows, int cols) {
  return fill(R"(  %{O}_rows_2d = broadcast %{S}_rows : tile<{R}x{C}xi32>
  %{O}_column_stride = constant {value = {R}} : tile<1x{C}xi32>
  %{O}_column_starts = mul %{S}_columns, %{O}_column_stride : tile<1x{C}xi32>
  %{O}_column_starts_2d = broadcast %{O}_column_starts : tile<{R}x{C}xi32>
  %{O}_untransposed = add %{O}_rows_2d, %{O}_column_starts_2d : tile<{R}x{C}xi32>
  %{O} = trans %{O}_untransposed {order = [1, 0]} : tile<{C}x{R}xi32>
)",
              {{"O", name}, {"S", source}, {"R", std::to_string(rows)}, {"C", std::to_string(cols)}});
}

/// Lines loading %`name` : tile<`shape` x `dtype`> (shape as in "32x64")
/// from the pointer `base` (e.g. "%0") at the offsets %`offsets`, through the
/// pointers %`name`_pointers.
inline std::string load_text(const std::string& name, const std::string& base, const std::string& offsets,
                             const std::string& shape, const std::string& dtype) {
  return fill(R"(  %{N}_base = splat {B} : tile<{S}xptr<{T}>>
  %{N}_pointers = addptr %{N}_base, %{I} : tile<{S}xptr<{T}>>
  %{N} = load %{N}_pointers {cache = none, evict = none} : tile<{S}x{T}>
)",
              {{"N", name}, {"B", base}, {"I", offsets}, {"S", shape}, {"T", dtype}});
}

/// Lines storing %`value` : tile<`shape` x `dtype`> to the pointer `base` at
/// the offsets %`offsets`, through the pointers %`name`.
inline std::string store_text(const std::string& name, const std::string& base, const std::string& offsets,
                              const std::string& value, const std::string& shape, const std::string& dtype) {
  return fill(R"(  %{N}_base = splat {B} : tile<{S}xptr<{T}>>
  %{N} = addptr %{N}_base, %{I} : tile<{S}xptr<{T}>>
  store %{N}, %{V} {cache = none, evict = none}
)",
              {{"N", name}, {"B", base}, {"I", offsets}, {"V", value}, {"S", shape}, {"T", dtype}});
}

/// vector_add with BLOCK = 1024 over `dtype` elements; `pointer_facts` and
/// `n_facts` follow the arguments' types (e.g. " {divisibility = 16}", or ""
/// for none).
inline std::string vector_add_text(const std::string& pointer_facts, const std::string& n_facts,
                                   const std::string& dtype = "f32") {
  return fill(R"(kernel @vector_add(%0: ptr<{T}>{P}, %1: ptr<{T}>{P}, %2: ptr<{T}>{P}, %3: i32{N}) {
  %4 = program_id {axis = 0} : i32
  %5 = constant {value = 1024} : i32
  %6 = mul %4, %5 : i32
  %7 = arange {start = 0} : tile<1024xi32>
  %8 = splat %6 : tile<1024xi32>
  %9 = add %8, %7 : tile<1024xi32>
  %10 = splat %3 : tile<1024xi32>
  %11 = cmp %9, %10 {pred = lt} : tile<1024xi1>
  %12 = splat %0 : tile<1024xptr<{T}>>
  %13 = addptr %12, %9 : tile<1024xptr<{T}>>
  %14 = load %13, %11 {cache = none, evict = none} : tile<1024x{T}>
  %15 = splat %1 : tile<1024xptr<{T}>>
  %16 = addptr %15, %9 : tile<1024xptr<{T}>>
  %17 = load %16, %11 {cache = none, evict = none} : tile<1024x{T}>
  %18 = add %14, %17 : tile<1024x{T}>
  %19 = splat %2 : tile<1024xptr<{T}>>
  %20 = addptr %19, %9 : tile<1024xptr<{T}>>
  store %20, %18, %11 {cache = none, evict = none}
}
)",
              {{"T", dtype}, {"P", pointer_facts}, {"N", n_facts}});
}

}  // namespace kiln::ir_samples
