// The GPU code generator's error messages: where an op is, the one line for
// an op that has no lowering yet, and the form of an internal error.
#include <string>

#include "kiln/lowering/compile.hpp"

namespace kiln::lowering {

InternalError::InternalError(const std::string& what)
    : std::logic_error("internal error in kiln: " + what + " (please report)") {}

std::string op_place(const ir::Operation& op) {
  if (op.loc.known()) return ir::to_string(op.loc);
  if (op.results.empty()) return std::string(op.name()) + " with no source line";
  return "%" + std::to_string(op.result()->id) + " = " + std::string(op.name());
}

std::string unsupported_op_message(const ir::Operation& op, const std::string& detail) {
  return "the GPU code generator does not support op `" + std::string(op.name()) + "`" +
         (detail.empty() ? "" : " " + detail) + " yet (" + op_place(op) + ")";
}

}  // namespace kiln::lowering
