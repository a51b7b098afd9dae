// Kernel parameters named in messages.
#include "kiln/ir/parameter_label.hpp"

namespace kiln::ir {

std::string parameter_label(const Function& fn, std::size_t index) {
  if (index < fn.argument_names.size() && !fn.argument_names[index].empty())
    return "'" + fn.argument_names[index] + "'";
  const std::string number = "parameter " + std::to_string(index + 1);
  if (index >= fn.body.arguments.size()) return number;
  const Type& type = fn.body.arguments[index]->type;
  const std::string dtype(dtype_name(type.dtype));
  if (type.is_pointer && type.is_scalar()) return number + " (Ptr<" + dtype + ">)";
  if (type.is_scalar()) return number + " (" + dtype + ")";
  return number + " (" + to_string(type) + ")";
}

}  // namespace kiln::ir
