// Block pointers: the non-template parts of make_block_ptr, advance and the
// loads and stores through them, which trace to ordinary pointer tiles and masks.
#include "kiln/dsl/block_pointer.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace kiln::detail {

namespace {

const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);

ir::Value* binary(ir::OpCode code, ir::Value* a, ir::Value* b, const std::source_location& loc) {
  return emit(code, {a, b}, a->type, {}, loc);
}

ir::Value* compare(const char* predicate, ir::Value* a, ir::Value* b, const std::source_location& loc) {
  return emit(ir::OpCode::cmp, {a, b}, ir::Type::scalar(ir::DType::i1).with_shape(a->type.shape),
              {{"pred", ir::Symbol{predicate}}}, loc);
}

/// The checked axes as flags, after rejecting axes the block lacks or lists twice.
std::vector<bool> checked_axes(const std::vector<int>& checked, std::size_t rank, const char* what,
                               const std::source_location& loc) {
  std::vector<bool> flags(rank, false);
  for (int axis : checked) {
    const std::string access = std::string("kl::") + what + " through a block pointer: boundary_check axis ";
    if (axis < 0 || static_cast<std::size_t>(axis) >= rank)
      TraceContext::current(what).fail(
          access + std::to_string(axis) + " is not an axis of the rank-" + std::to_string(rank) + " block", loc);
    if (flags[axis]) TraceContext::current(what).fail(access + std::to_string(axis) + " is listed twice", loc);
    flags[axis] = true;
  }
  return flags;
}

}  // namespace

void block_indices(std::span<const BlockIndex> entries, std::span<ir::Value*> out, const std::source_location& loc) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BlockIndex& e = entries[i];
    if (e.value) {
      out[i] = emit_cast(e.value, ir::DType::i32, loc);
      continue;
    }
    if (e.literal < std::numeric_limits<std::int32_t>::min() || e.literal > std::numeric_limits<std::int32_t>::max())
      TraceContext::current("kl::make_block_ptr")
          .fail("block pointer entry " + std::to_string(i) + " is " + std::to_string(e.literal) +
                    ", which does not fit in i32",
                loc);
    out[i] = emit_int_constant(kI32, e.literal, loc);
  }
}

void advanced_offsets(std::span<ir::Value* const> offsets, std::span<ir::Value* const> delta, std::span<ir::Value*> out,
                      const std::source_location& loc) {
  for (std::size_t i = 0; i < offsets.size(); ++i) out[i] = binary(ir::OpCode::add, offsets[i], delta[i], loc);
}

BlockAccess block_access(ir::Value* base, std::span<ir::Value* const> shape, std::span<ir::Value* const> strides,
                         std::span<ir::Value* const> offsets, const ir::Shape& block, const std::vector<int>& checked,
                         const char* what, const std::source_location& loc) {
  const std::size_t rank = block.size();
  const std::vector<bool> check = checked_axes(checked, rank, what, loc);
  ir::Value* start = nullptr;   // sum_i offset_i * stride_i: where the block begins
  ir::Value* spread = nullptr;  // sum_i arange(block_i) * stride_i, over the block
  ir::Value* mask = nullptr;
  for (std::size_t i = 0; i < rank; ++i) {
    ir::Shape along(rank, 1);
    along[i] = block[i];
    ir::Value* index = emit(ir::OpCode::arange, {}, kI32.with_shape({block[i]}), {{"start", std::int64_t{0}}}, loc);
    if (rank > 1) index = emit(ir::OpCode::reshape, {index}, kI32.with_shape(along), {}, loc);
    ir::Value* step = binary(ir::OpCode::mul, index, emit_broadcast(strides[i], along, loc), loc);
    ir::Value* first = binary(ir::OpCode::mul, offsets[i], strides[i], loc);
    start = start ? binary(ir::OpCode::add, start, first, loc) : first;
    step = emit_broadcast(step, block, loc);
    spread = spread ? binary(ir::OpCode::add, spread, step, loc) : step;
    if (!check[i]) continue;
    ir::Value* position = binary(ir::OpCode::add, emit_broadcast(offsets[i], along, loc), index, loc);
    ir::Value* inside =
        binary(ir::OpCode::and_, compare("ge", position, emit_int_constant(position->type, 0, loc), loc),
               compare("lt", position, emit_broadcast(shape[i], along, loc), loc), loc);
    inside = emit_broadcast(inside, block, loc);
    mask = mask ? binary(ir::OpCode::and_, mask, inside, loc) : inside;
  }
  ir::Value* corner = emit(ir::OpCode::addptr, {base, start}, base->type, {}, loc);
  ir::Value* pointers =
      emit(ir::OpCode::addptr, {emit_broadcast(corner, block, loc), spread}, base->type.with_shape(block), {}, loc);
  return {pointers, mask};
}

ir::Value* padding_value(Padding padding, const ir::Type& type, const std::source_location& loc) {
  if (padding == Padding::zero) return nullptr;
  if (!ir::is_float(type.dtype))
    TraceContext::current("kl::load")
        .fail(std::string("kl::load through a block pointer: padding nan needs float elements, got ") +
                  std::string(ir::dtype_name(type.dtype)),
              loc);
  return emit_constant(type, std::numeric_limits<double>::quiet_NaN(), loc);
}

}  // namespace kiln::detail
