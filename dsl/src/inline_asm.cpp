// inline_asm_elementwise's tracing: the constraints checked, the op emitted
// and its host reference registered under the op's key.
#include "kiln/dsl/inline_asm.hpp"

#include "kiln/ir/inline_asm.hpp"

namespace kiln::detail {

ir::Value* emit_inline_asm(std::string_view asm_text, std::string_view constraints,
                           const std::vector<ir::Value*>& operands, const ir::Type& result,
                           const std::optional<runtime::HostReference>& reference, bool pure,
                           const std::source_location& loc) {
  TraceContext& ctx = TraceContext::current("inline_asm_elementwise");
  std::vector<ir::DType> dtypes;
  for (const ir::Value* operand : operands) dtypes.push_back(operand->type.dtype);
  const std::string error = ir::inline_asm_error(asm_text, constraints, result.dtype, dtypes);
  if (!error.empty()) ctx.fail("inline_asm_elementwise: " + error, loc);
  const std::string key = ir::inline_asm_key(asm_text, constraints, result.dtype, dtypes);
  if (reference && !runtime::register_host_reference(key, *reference))
    ctx.fail(
        "inline_asm_elementwise: another host reference is already registered for this asm, constraints and "
        "dtypes (" +
            key + "); give one asm one reference",
        loc);
  return emit(ir::OpCode::inline_asm, operands, result,
              {{"asm", std::string(asm_text)},
               {"constraints", std::string(constraints)},
               {"pure", ir::Symbol{pure ? "true" : "false"}},
               {"key", key}},
              loc);
}

}  // namespace kiln::detail
