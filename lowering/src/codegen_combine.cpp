// LLVM code generation helpers shared by reduce and scan: where a layout's
// registers sit, which lane and warp bits step along the combined axis, and
// the combine region applied to one pair of elements.
#include "codegen.hpp"

namespace kiln::lowering {

std::vector<std::int32_t> coordinates_of_register(const LinearLayout& layout, std::int32_t reg) {
  std::vector<std::int32_t> coords;
  for (const auto& [name, value] : layout.apply({{"register", reg}, {"lane", 0}, {"warp", 0}})) coords.push_back(value);
  return coords;
}

std::vector<int> bits_along_axis(const LinearLayout& layout, const char* in, int axis, const ir::Operation& op) {
  std::vector<int> bits;
  for (int bit = 0; bit < layout.in_dim_size_log2(in); ++bit) {
    const LinearLayout::Basis& basis = layout.basis(in, bit);
    if (basis[axis] == 0) continue;
    for (std::size_t d = 0; d < basis.size(); ++d)
      if (static_cast<int>(d) != axis && basis[d] != 0)
        throw LoweringError(unsupported_op_message(op, std::string("over a layout whose ") + in + " bit " +
                                                           std::to_string(bit) + " steps along two dimensions"));
    bits.push_back(bit);
  }
  return bits;
}

std::vector<llvm::Value*> emit_combine(KernelCodegen& cg, const ir::Operation& op,
                                       const std::vector<llvm::Value*>& left, const std::vector<llvm::Value*>& right) {
  std::vector<std::vector<llvm::Value*>> arguments;
  for (llvm::Value* value : left) arguments.push_back({value});
  for (llvm::Value* value : right) arguments.push_back({value});
  const std::vector<std::vector<llvm::Value*>> yielded = emit_region(cg, *op.regions[0], arguments);
  if (yielded.size() != left.size())
    throw LoweringError(std::string(op.name()) + ": the combine region yields " + std::to_string(yielded.size()) +
                        " values, expected " + std::to_string(left.size()) + " (" + op_place(op) + ")");
  std::vector<llvm::Value*> result;
  for (const std::vector<llvm::Value*>& value : yielded) result.push_back(value.at(0));
  return result;
}

}  // namespace kiln::lowering
