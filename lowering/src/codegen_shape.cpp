// LLVM code generation for the ops that create tiles or change their shape:
// constant, program_id, num_programs, arange, splat, broadcast, expand_dims.
// A tile's element at register r of lane l in warp w has the coordinates
// layout(r, l, w) = layout(r, 0, 0) xor layout(0, l, w): the first part is
// known at compile time, the second is computed once from the thread index.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <bit>

#include "codegen.hpp"
#include "kiln/ir/numeric.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;

llvm::Value* constant_value(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Type& type = op.result()->type;
  llvm::Type* element = cg.element_type(type, op);
  if (type.is_pointer) throw LoweringError(unsupported_op_message(op, "of pointer type"));
  const ir::Attribute* value = op.find_attribute("value");
  if (is_fp8(type.dtype)) {
    const auto* integer = std::get_if<std::int64_t>(value);
    const float real = integer ? static_cast<float>(*integer) : static_cast<float>(op.float_attribute("value"));
    const std::uint8_t bits = type.dtype == ir::DType::f8e4m3 ? float8_e4m3(real).bits : float8_e5m2(real).bits;
    return llvm::ConstantInt::get(element, bits);
  }
  if (const auto* integer = std::get_if<std::int64_t>(value)) {
    if (element->isFloatingPointTy()) return llvm::ConstantFP::get(element, static_cast<double>(*integer));
    return llvm::ConstantInt::get(element, static_cast<std::uint64_t>(*integer), ir::is_signed_int(type.dtype));
  }
  const double real = op.float_attribute("value");
  if (element->isFloatingPointTy()) return llvm::ConstantFP::get(element, real);
  throw LoweringError("constant: float value " + std::to_string(real) + " for integer type " + ir::to_string(type) +
                      " (" + op_place(op) + ")");
}

llvm::Intrinsic::ID grid_register(const ir::Operation& op) {
  static constexpr llvm::Intrinsic::ID kProgramId[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                       llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                       llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  static constexpr llvm::Intrinsic::ID kNumPrograms[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                                         llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                                         llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
  const std::int64_t axis = op.int_attribute("axis");
  if (axis < 0 || axis > 2)
    throw LoweringError(std::string(op.name()) + ": axis " + std::to_string(axis) + " is not 0, 1 or 2 (" +
                        op_place(op) + ")");
  return op.code == OpCode::program_id ? kProgramId[axis] : kNumPrograms[axis];
}

std::string describe(const ir::Operation& op) {
  return std::string(op.name()) + " of " + ir::to_string(op.operands[0]->type) + " to " +
         ir::to_string(op.result()->type) + " (" + op_place(op) + ")";
}

}  // namespace

llvm::Value* xor_of_set_bits(llvm::IRBuilderBase& b, llvm::Value* accumulated, const std::vector<std::int32_t>& bases,
                             llvm::Value* index) {
  auto add_part = [&](llvm::Value* part) {
    const auto* constant = llvm::dyn_cast<llvm::ConstantInt>(accumulated);
    accumulated = constant && constant->isZero() ? part : b.CreateXor(accumulated, part);
  };
  for (std::size_t bit = 0; bit < bases.size();) {
    const auto basis = static_cast<std::uint32_t>(bases[bit]);
    if (basis == 0) {
      ++bit;
    } else if (!std::has_single_bit(basis)) {
      add_part(b.CreateMul(b.CreateAnd(b.CreateLShr(index, bit), 1), b.getInt32(basis)));
      ++bit;
    } else {
      std::size_t end = bit + 1;
      while (end < bases.size() && bases[end] == 2 * bases[end - 1]) ++end;
      llvm::Value* run = bit == 0 ? index : b.CreateLShr(index, bit);
      if (end < bases.size()) run = b.CreateAnd(run, (1u << (end - bit)) - 1);
      const int shift = std::countr_zero(basis);
      add_part(shift > 0 ? b.CreateShl(run, shift) : run);
      bit = end;
    }
  }
  return accumulated;
}

llvm::Value* thread_coordinate(KernelCodegen& cg, const LinearLayout& layout, int dim) {
  llvm::Value* coordinate = cg.builder.getInt32(0);
  for (auto [in, index] : {std::pair{"lane", cg.lane}, std::pair{"warp", cg.warp}}) {
    std::vector<std::int32_t> bases;
    for (int bit = 0; bit < layout.in_dim_size_log2(in); ++bit) bases.push_back(layout.basis(in, bit)[dim]);
    coordinate = xor_of_set_bits(cg.builder, coordinate, bases, index);
  }
  return coordinate;
}

std::int32_t register_coordinate(const LinearLayout& layout, int reg, int dim) {
  return layout.apply({{"register", reg}, {"lane", 0}, {"warp", 0}})[dim].second;
}

std::vector<llvm::Value*> arange_registers(KernelCodegen& cg, const ir::Operation& arange, const LinearLayout& layout) {
  llvm::Value* thread_part = thread_coordinate(cg, layout, 0);
  const auto start = static_cast<std::uint32_t>(arange.int_attribute("start"));
  std::vector<llvm::Value*> values;
  for (int r = 0; r < layout.in_dim_size("register"); ++r) {
    llvm::Value* value = thread_part;
    if (const std::int32_t register_part = register_coordinate(layout, r, 0); register_part != 0)
      value = cg.builder.CreateXor(value, cg.builder.getInt32(static_cast<std::uint32_t>(register_part)));
    values.push_back(start == 0 ? value : cg.builder.CreateAdd(value, cg.builder.getInt32(start)));
  }
  return values;
}

std::vector<int> shape_op_register_map(const ir::Operation& op, const LinearLayout& result,
                                       const LinearLayout& source) {
  const int inserted_axis = op.code == OpCode::expand_dims ? static_cast<int>(op.int_attribute("axis")) : -1;
  return thread_local_register_map(result, op.result()->type.shape, source, op.operands[0]->type.shape, inserted_axis,
                                   describe(op));
}

void emit_creation_or_shape_op(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& result = *op.result();
  switch (op.code) {
    case OpCode::constant:
      cg.define(result, std::vector<llvm::Value*>(cg.register_count(result), constant_value(cg, op)));
      return;
    case OpCode::program_id:
    case OpCode::num_programs: cg.define(result, {cg.read_special_register(grid_register(op))}); return;
    case OpCode::arange: cg.define(result, arange_registers(cg, op, cg.layouts.at(result))); return;
    case OpCode::splat:
      cg.define(result, std::vector<llvm::Value*>(cg.register_count(result), cg.values_of(*op.operands[0])[0]));
      return;
    case OpCode::broadcast:
    case OpCode::expand_dims: {
      const ir::Value& source = *op.operands[0];
      if (source.type.is_scalar()) {
        cg.define(result, std::vector<llvm::Value*>(cg.register_count(result), cg.values_of(source)[0]));
        return;
      }
      // A use that needs its operand in another layout reads a converted copy.
      const LayoutConversion* conversion = cg.layouts.conversion(op, source);
      const std::vector<llvm::Value*> values =
          conversion ? emit_layout_conversion(cg, *conversion, op) : cg.values_of(source);
      const LinearLayout& source_layout = conversion ? conversion->to : cg.layouts.at(source);
      std::vector<llvm::Value*> mapped;
      for (int source_register : shape_op_register_map(op, cg.layouts.at(result), source_layout))
        mapped.push_back(values[source_register]);
      cg.define(result, std::move(mapped));
      return;
    }
    default: throw InternalError(std::string(op.name()) + " reached the creation and shape code generator");
  }
}

}  // namespace kiln::lowering
