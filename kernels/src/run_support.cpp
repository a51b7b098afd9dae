// Tolerances and shape strings for the sample kernels.
#include "run_support.hpp"

namespace kiln::kernels {

double unit_roundoff(ir::DType t) {
  switch (t) {
    case ir::DType::f16: return std::ldexp(1.0, -11);
    case ir::DType::bf16: return std::ldexp(1.0, -8);
    case ir::DType::f64: return std::ldexp(1.0, -53);
    case ir::DType::f8e4m3: return std::ldexp(1.0, -4);
    case ir::DType::f8e5m2: return std::ldexp(1.0, -3);
    default: return std::ldexp(1.0, -24);
  }
}

std::string shape_string(const RunOptions& options, const std::vector<Dim>& dims) {
  std::string out;
  for (const Dim& d : dims) out += (out.empty() ? "" : " ") + d.name + "=" + std::to_string(options.dims.at(d.name));
  return out;
}

}  // namespace kiln::kernels
