// Kernel parameters named in messages.
#include "kiln/ir/parameter_label.hpp"

namespace kiln::ir {

std::string parameter_label(const std::string& name, std::size_t index, const Type& type) {
  if (!name.empty()) return "'" + name + "'";
  const std::string number = "parameter " + std::to_string(index + 1);
  const std::string dtype(dtype_name(type.dtype));
  if (type.is_pointer && type.is_scalar()) return number + " (Ptr<" + dtype + ">)";
  if (type.is_scalar()) return number + " (" + dtype + ")";
  return number + " (" + to_string(type) + ")";
}

std::string parameter_label(const Function& fn, std::size_t index) {
  const std::string name = index < fn.argument_names.size() ? fn.argument_names[index] : std::string();
  if (index >= fn.body.arguments.size())
    return name.empty() ? "parameter " + std::to_string(index + 1) : "'" + name + "'";
  return parameter_label(name, index, fn.body.arguments[index]->type);
}

}  // namespace kiln::ir
