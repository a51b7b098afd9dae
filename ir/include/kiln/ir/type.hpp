// IR types: a scalar dtype, a pointer to one, a tile of either, or a
// shared-memory buffer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/dtype.hpp"

namespace kiln::ir {

using Shape = std::vector<std::int64_t>;

/// `f32`, `ptr<f32>`, `tile<64x32xf16>` or `tile<128xptr<f32>>`: an element
/// (a dtype, or a pointer to one) and a shape, empty for a scalar.
/// `shared<3x64x32xf16>` is a buffer in the program's shared memory, a ring
/// of 3 slots of 64x32 f16 (local_alloc): neither a tile nor a scalar, it is
/// only written by async_copy and read by local_load.
struct Type {
  DType dtype = DType::i32;
  bool is_pointer = false;
  Shape shape;
  bool is_shared = false;

  static Type scalar(DType t) { return {t, false, {}}; }
  static Type pointer(DType pointee) { return {pointee, true, {}}; }
  static Type tile(DType t, Shape s) { return {t, false, std::move(s)}; }
  static Type shared(DType t, Shape s) { return {t, false, std::move(s), true}; }

  bool is_tile() const { return !shape.empty() && !is_shared; }
  bool is_scalar() const { return shape.empty(); }
  std::int64_t numel() const;
  /// The same element type with another shape (a tile or a scalar).
  Type with_shape(Shape s) const { return {dtype, is_pointer, std::move(s)}; }
  /// The element type alone (shape dropped).
  Type element() const { return {dtype, is_pointer, {}}; }
  /// Bytes of one element in a register: 8 for pointers.
  int element_bytes() const { return is_pointer ? 8 : dtype_bytes(dtype); }

  friend bool operator==(const Type&, const Type&) = default;
};

std::string to_string(const Type& t);
std::string shape_string(const Shape& s);  // "64x32"

}  // namespace kiln::ir
