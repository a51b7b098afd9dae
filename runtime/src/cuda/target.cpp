#include "kiln/runtime/cuda/target.hpp"

namespace kiln::cuda {

lowering::GpuTarget target_for(const runtime::Program& program, const std::string& arch) {
  return {.arch = arch,
          .num_warps = program.options().num_warps,
          .max_registers = program.options().max_registers,
          .arguments_do_not_overlap = false};
}

std::string options_key(const lowering::GpuTarget& target) {
  return "num_warps=" + std::to_string(target.num_warps) + " max_registers=" + std::to_string(target.max_registers) +
         " arguments_do_not_overlap=" + std::to_string(target.arguments_do_not_overlap);
}

}  // namespace kiln::cuda
