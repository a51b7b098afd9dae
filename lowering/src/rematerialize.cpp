// Which tiles are index arithmetic that code generation computes again in
// another layout rather than converting (rematerialize.hpp), and how each
// conversion is made.
#include "kiln/lowering/rematerialize.hpp"

#include <set>

#include "kiln/ir/op_schema.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;

bool is_index_type(const ir::Type& type) { return type.is_pointer || !ir::is_float(type.dtype); }

bool is_index_op(OpCode code) {
  if (code == OpCode::div || code == OpCode::rem) return false;
  if (code == OpCode::expand_dims || code == OpCode::broadcast || code == OpCode::addptr) return true;
  const ir::OpFamily family = ir::family_of(code);
  return family == ir::OpFamily::elementwise || family == ir::OpFamily::cast;
}

/// Adds the ops computing `value` to `ops`; false when one is not index
/// arithmetic or they pass kMaxRematerializedOps. A scalar is a leaf: its
/// one register serves every layout.
bool collect_index_ops(const ir::Value& value, std::set<const ir::Operation*>& ops) {
  if (!value.type.is_tile()) return true;
  const ir::Operation* op = value.def;
  if (op == nullptr || !is_index_type(value.type)) return false;
  if (!ops.insert(op).second) return true;
  if (ops.size() > static_cast<std::size_t>(kMaxRematerializedOps)) return false;
  if (op->code == OpCode::arange || op->code == OpCode::constant || op->code == OpCode::splat) return true;
  if (!is_index_op(op->code)) return false;
  for (const ir::Value* operand : op->operands)
    if (!is_index_type(operand->type) || !collect_index_ops(*operand, ops)) return false;
  return true;
}

}  // namespace

bool is_rematerializable(const ir::Value& value) {
  std::set<const ir::Operation*> ops;
  return value.type.is_tile() && collect_index_ops(value, ops);
}

ConversionKind planned_conversion_kind(const LayoutConversion& conversion) {
  const ConversionKind kind = classify_conversion(conversion.from, conversion.to);
  if (kind == ConversionKind::none) return kind;
  if (kind == ConversionKind::register_permute && plan_register_permute(conversion.from, conversion.to)) return kind;
  if (is_rematerializable(*conversion.value)) return ConversionKind::rematerialize;
  if (kind != ConversionKind::shared_memory && plan_warp_shuffle(conversion.from, conversion.to))
    return ConversionKind::warp_shuffle;
  return ConversionKind::shared_memory;
}

}  // namespace kiln::lowering
