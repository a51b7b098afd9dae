// The list of sample kernels and option validation.
#include "kiln/kernels/registry.hpp"

#include <stdexcept>

#include "entries.hpp"

namespace kiln::kernels {

const std::vector<KernelInfo>& all_kernels() {
  static const std::vector<KernelInfo> kernels = {vector_add_entry(), softmax_entry()};
  return kernels;
}

const KernelInfo& find_kernel(std::string_view name) {
  std::string known;
  for (const KernelInfo& k : all_kernels()) {
    if (k.name == name) return k;
    known += (known.empty() ? "" : ", ") + k.name;
  }
  throw std::invalid_argument("unknown kernel '" + std::string(name) + "' (known: " + known + ")");
}

RunOptions make_options(const KernelInfo& kernel, const std::map<std::string, std::int64_t>& dims, std::string dtype,
                        Device device) {
  RunOptions options;
  options.device = device;
  for (const Dim& d : kernel.dims) options.dims[d.name] = d.default_value;
  for (const auto& [name, value] : dims) {
    auto it = options.dims.find(name);
    if (it == options.dims.end()) {
      std::string known;
      for (const Dim& d : kernel.dims) known += (known.empty() ? "--" : ", --") + d.name;
      throw std::invalid_argument(kernel.name + " has no dimension --" + name + " (its dimensions: " + known + ")");
    }
    if (value <= 0 || value > (std::int64_t{1} << 31) - 1)
      throw std::invalid_argument(kernel.name + ": --" + name + " must be between 1 and 2^31-1, got " + std::to_string(value));
    it->second = value;
  }
  if (dtype.empty()) dtype = kernel.dtypes.front();
  bool supported = false;
  std::string known;
  for (const std::string& d : kernel.dtypes) {
    supported |= d == dtype;
    known += (known.empty() ? "" : ", ") + d;
  }
  if (!supported) throw std::invalid_argument(kernel.name + " does not support dtype '" + dtype + "' (supported: " + known + ")");
  options.dtype = dtype;
  return options;
}

}  // namespace kiln::kernels
