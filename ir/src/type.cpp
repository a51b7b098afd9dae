// Type printing and sizes.
#include "kiln/ir/type.hpp"

namespace kiln::ir {

std::int64_t Type::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_string(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(s[i]);
  }
  return out;
}

std::string to_string(const Type& t) {
  std::string elem = t.is_pointer ? "ptr<" + std::string(dtype_name(t.dtype)) + ">" : std::string(dtype_name(t.dtype));
  if (t.shape.empty()) return elem;
  return (t.is_shared ? "shared<" : "tile<") + shape_string(t.shape) + "x" + elem + ">";
}

}  // namespace kiln::ir
