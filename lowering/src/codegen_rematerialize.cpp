// LLVM code generation of a rematerialized tile (rematerialize.hpp): its
// computation emitted again, each op in the layout its use needs, from the
// aranges (numbered in that layout), constants, splats and scalars it starts
// from. Each op reads its operands in the layout it would read them in were
// it lowered in the needed one: element-wise ops and addptr in their own,
// expand_dims in its slice, broadcast with the broadcast dimensions dropped.
#include "codegen.hpp"
#include "kiln/lowering/rematerialize.hpp"
#include "kiln/lowering/shape_layouts.hpp"

namespace kiln::lowering {

std::vector<llvm::Value*> rematerialize(KernelCodegen& cg, const ir::Value& value, const LinearLayout& layout) {
  const auto count = static_cast<std::size_t>(layout.in_dim_size("register"));
  if (!value.type.is_tile()) return std::vector<llvm::Value*>(count, cg.values_of(value)[0]);
  const ir::Operation& op = *value.def;
  switch (op.code) {
    case ir::OpCode::constant:
    case ir::OpCode::splat: return std::vector<llvm::Value*>(count, cg.values_of(value)[0]);
    case ir::OpCode::arange: return arange_registers(cg, op, layout);
    case ir::OpCode::expand_dims:
    case ir::OpCode::broadcast: {
      const ir::Value& source = *op.operands[0];
      if (!source.type.is_tile()) return std::vector<llvm::Value*>(count, cg.values_of(source)[0]);
      const LinearLayout source_layout = op.code == ir::OpCode::expand_dims
                                             ? slice_layout(layout, static_cast<int>(op.int_attribute("axis")))
                                             : broadcast_operand_layout(layout, source.type.shape);
      const std::vector<llvm::Value*> values = rematerialize(cg, source, source_layout);
      std::vector<llvm::Value*> mapped;
      for (int source_register : shape_op_register_map(op, layout, source_layout))
        mapped.push_back(values[static_cast<std::size_t>(source_register)]);
      return mapped;
    }
    default: break;
  }
  std::vector<std::vector<llvm::Value*>> operands;
  for (const ir::Value* operand : op.operands) operands.push_back(rematerialize(cg, *operand, layout));
  std::vector<llvm::Value*> values;
  for (std::size_t r = 0; r < count; ++r) {
    std::vector<llvm::Value*> elements;
    for (const std::vector<llvm::Value*>& operand : operands) elements.push_back(operand[r]);
    values.push_back(op.code == ir::OpCode::addptr ? offset_pointer(cg, op, elements[0], elements[1])
                                                   : emit_element(cg, op, std::move(elements)));
  }
  return values;
}

}  // namespace kiln::lowering
