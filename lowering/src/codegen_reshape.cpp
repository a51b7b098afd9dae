// LLVM code generation for the shape ops that reinterpret a tile's elements:
// reshape, trans, join, split. Layout assignment gave each operand the layout
// in which the op moves no data (shape_layouts.hpp), converting it first when
// it lived elsewhere; so reshape and trans only rename registers, join picks
// the operand a register's last coordinate names, and split takes the
// registers of either half.
#include "codegen.hpp"
#include "kiln/lowering/shape_layouts.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;
using Registers = std::vector<llvm::Value*>;

/// The registers of tile `operand` in the layout `op` reads it in, and that layout.
std::pair<Registers, LinearLayout> operand_as_read(KernelCodegen& cg, const ir::Operation& op,
                                                   const ir::Value& operand) {
  if (const LayoutConversion* conversion = cg.layouts.conversion(op, operand))
    return {emit_layout_conversion(cg, *conversion, op), conversion->to};
  return {cg.values_of(operand), cg.layouts.at(operand)};
}

std::string describe(const ir::Operation& op) {
  return std::string(op.name()) + " of " + ir::to_string(op.operands[0]->type) + " to " +
         ir::to_string(op.results[0]->type) + " (" + op_place(op) + ")";
}

/// The registers of `operand` checked against the layout `op` needs it in.
Registers renamed(KernelCodegen& cg, const ir::Operation& op, const LinearLayout& needed) {
  auto [values, layout] = operand_as_read(cg, op, *op.operands[0]);
  if (layout != needed)
    throw InternalError(describe(op) +
                        ": its operand is not in the layout the op needs; layout assignment recorded "
                        "no conversion for it");
  return values;
}

void emit_join(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& result = *op.result();
  const LinearLayout& layout = cg.layouts.at(result);
  const int last = static_cast<int>(result.type.shape.size()) - 1;
  llvm::IRBuilder<>& b = cg.builder;
  // The last coordinate's thread part: nonzero when lanes or warps split the pairs.
  bool thread_splits_pairs = false;
  for (const char* in : {"lane", "warp"})
    for (int bit = 0; bit < layout.in_dim_size_log2(in); ++bit) thread_splits_pairs |= layout.basis(in, bit)[last] != 0;
  llvm::Value* thread_part = thread_splits_pairs ? thread_coordinate(cg, layout, last) : nullptr;

  std::vector<Registers> halves;
  std::vector<int> map;
  if (op.operands[0]->type.is_tile()) {
    const LinearLayout needed = join_operand_layout(layout);
    for (const ir::Value* operand : op.operands) {
      auto [values, operand_layout] = operand_as_read(cg, op, *operand);
      if (operand_layout != needed)
        throw InternalError(describe(op) +
                            ": an operand is not in the slice of the result's layout; layout "
                            "assignment recorded no conversion for it");
      halves.push_back(std::move(values));
    }
    map = thread_local_register_map(layout, result.type.shape, needed, op.operands[0]->type.shape, last, describe(op));
  } else {
    for (const ir::Value* operand : op.operands) halves.push_back(cg.values_of(*operand));
    map.assign(static_cast<std::size_t>(cg.register_count(result)), 0);
  }
  Registers values;
  for (int r = 0; r < cg.register_count(result); ++r) {
    llvm::Value* first = halves[0][static_cast<std::size_t>(map[r])];
    llvm::Value* second = halves[1][static_cast<std::size_t>(map[r])];
    const std::int32_t register_part = register_coordinate(layout, r, last);
    if (!thread_part) {
      values.push_back(register_part ? second : first);
      continue;
    }
    llvm::Value* coordinate = b.CreateXor(thread_part, b.getInt32(static_cast<std::uint32_t>(register_part)));
    values.push_back(b.CreateSelect(b.CreateICmpNE(coordinate, b.getInt32(0)), second, first));
  }
  cg.define(result, std::move(values));
}

void emit_split(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& first = *op.results[0];
  const bool to_scalars = !first.type.is_tile();
  const LinearLayout needed =
      to_scalars ? split_to_scalars_operand_layout(cg.target.num_warps) : split_operand_layout(cg.layouts.at(first));
  const Registers values = renamed(cg, op, needed);
  // The half's registers are the low register bits, the pair's bit is above them.
  const std::size_t half_count = to_scalars ? 1 : static_cast<std::size_t>(cg.register_count(first));
  cg.define(first, Registers(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(half_count)));
  cg.define(*op.results[1], Registers(values.begin() + static_cast<std::ptrdiff_t>(half_count), values.end()));
}

}  // namespace

void emit_reshape_op(KernelCodegen& cg, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::reshape:
      cg.define(*op.result(),
                renamed(cg, op, reshape_operand_layout(cg.layouts.at(*op.result()), op.operands[0]->type.shape)));
      return;
    case OpCode::trans:
      cg.define(*op.result(),
                renamed(cg, op, trans_operand_layout(cg.layouts.at(*op.result()), op.ints_attribute("order"))));
      return;
    case OpCode::join: emit_join(cg, op); return;
    case OpCode::split: emit_split(cg, op); return;
    default: throw InternalError(std::string(op.name()) + " reached the reshape code generator");
  }
}

}  // namespace kiln::lowering
