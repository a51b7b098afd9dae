// The list of sample kernels: each spec (kernel_catalog.cpp) with its run function.
#include "kiln/kernels/registry.hpp"

#include <map>
#include <stdexcept>

#include "entries.hpp"

namespace kiln::kernels {

namespace {

using RunFunction = RunReport (*)(const RunOptions&);

/// The kernels in kernel_specs()'s order; each spec must have a run function
/// and each run function a spec.
std::vector<KernelInfo> pair_specs_with_runs() {
  const std::map<std::string_view, RunFunction> runs = {
      {"vector_add", run_vector_add},
      {"softmax", run_softmax},
      {"attention", run_attention},
      {"matmul", run_matmul},
      {"matmul_unfused", run_matmul_unfused},
      {"dropout", run_dropout},
      {"conv2d_bn_silu", run_conv2d_bn_silu},
      {"conv2d_bn_silu_unfused", run_conv2d_bn_silu_unfused},
      {"layer_norm", run_layer_norm},
      {"layer_norm_backward", run_layer_norm_backward},
      {"rms_norm", run_rms_norm},
  };
  std::vector<KernelInfo> kernels;
  for (const KernelSpec& spec : kernel_specs()) {
    const auto run = runs.find(spec.name);
    if (run == runs.end()) throw std::logic_error("kernel " + spec.name + " has a spec but no run function");
    kernels.push_back({spec, run->second});
  }
  if (kernels.size() != runs.size()) throw std::logic_error("a run function in registry.cpp has no kernel spec");
  return kernels;
}

}  // namespace

const std::vector<KernelInfo>& all_kernels() {
  static const std::vector<KernelInfo> kernels = pair_specs_with_runs();
  return kernels;
}

const KernelInfo& find_kernel(std::string_view name) {
  const KernelSpec& spec = find_spec(name);
  // all_kernels() holds the kernels in kernel_specs()'s order.
  return all_kernels()[static_cast<std::size_t>(&spec - kernel_specs().data())];
}

}  // namespace kiln::kernels
