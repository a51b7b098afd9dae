// Tile-IR scan kernels in text form, shared by the code generator's tests
// (PTX checks) and the emu's (bit-exact runs against the interpreter).
#pragma once

#include <string>

#include "ir_samples.hpp"

namespace kiln::ir_samples {

/// A 1-D tile of `size` elements of `dtype` loaded from %0, scanned with the
/// binary op `combine` (from the last element when `reverse`), stored to %1;
/// both pointers carry `pointer_facts` (e.g. " {divisibility = 16}", or "").
inline std::string scan_1d_text(int size, const std::string& dtype, const std::string& combine, bool reverse,
                                const std::string& pointer_facts) {
  const std::string shape = std::to_string(size);
  return pointer_kernel_text("scan_1d", {dtype, dtype}, pointer_facts,
                             "  %offsets = arange {start = 0} : tile<" + shape + "xi32>\n" +
                                 load_text("x", "%0", "offsets", shape, dtype) +
                                 fill(R"(  %scanned = scan %x {axis = 0, reverse = {REV}} : tile<{S}x{T}> {
  ^(%left: {T}, %right: {T}):
    %combined = {OP} %left, %right : {T}
    yield %combined
  }
)",
                                      {{"S", shape}, {"T", dtype}, {"OP", combine}, {"REV", reverse ? "1" : "0"}}) +
                                 store_text("out", "%1", "offsets", "scanned", shape, dtype));
}

/// A `rows` x `cols` tile of `dtype` loaded row-major from %0, summed along
/// `axis` (from the last element when `reverse`), stored at the same offsets
/// of %1; both pointers carry `pointer_facts`.
inline std::string scan_2d_text(int rows, int cols, const std::string& dtype, int axis, bool reverse,
                                const std::string& pointer_facts) {
  const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
  return pointer_kernel_text(
      "scan_2d", {dtype, dtype}, pointer_facts,
      row_major_offsets("offsets", rows, cols) + load_text("x", "%0", "offsets", shape, dtype) +
          fill(R"(  %scanned = scan %x {axis = {A}, reverse = {REV}} : tile<{S}x{T}> {
  ^(%left: {T}, %right: {T}):
    %sum = add %left, %right : {T}
    yield %sum
  }
)",
               {{"S", shape}, {"T", dtype}, {"A", std::to_string(axis)}, {"REV", reverse ? "1" : "0"}}) +
          store_text("out", "%1", "offsets", "scanned", shape, dtype));
}

/// A running argmax over 512 values of `dtype` loaded from %0: two operands
/// (the values and their i32 indexes), a region of a compare and two selects
/// that keeps the earlier index on ties (associative, not commutative); the
/// indexes go to %1. Both pointers carry `pointer_facts`.
inline std::string running_argmax_text(const std::string& dtype, const std::string& pointer_facts) {
  return pointer_kernel_text(
      "running_argmax", {dtype, "i32"}, pointer_facts,
      "  %offsets = arange {start = 0} : tile<512xi32>\n" + load_text("x", "%0", "offsets", "512", dtype) +
          fill(R"(  %maximum, %index = scan %x, %offsets {axis = 0, reverse = 0} : tile<512x{T}>, tile<512xi32> {
  ^(%left: {T}, %left_index: i32, %right: {T}, %right_index: i32):
    %keep_left = cmp %left, %right {pred = ge} : i1
    %larger = select %keep_left, %left, %right : {T}
    %larger_index = select %keep_left, %left_index, %right_index : i32
    yield %larger, %larger_index
  }
)",
               {{"T", dtype}}) +
          store_text("out", "%1", "offsets", "index", "512", "i32"));
}

}  // namespace kiln::ir_samples
