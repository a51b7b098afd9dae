#include "kiln/runtime/cuda/target.hpp"

#include <optional>
#include <utility>

#include "kiln/ir/printer.hpp"

namespace kiln::cuda {

lowering::GpuTarget target_for(const runtime::Program& program, const std::string& arch) {
  return {.arch = arch,
          .num_warps = program.options().num_warps,
          .max_registers = program.options().max_registers,
          .arguments_do_not_overlap = false};
}

runtime::CacheKey cache_key(const runtime::Program& program, const lowering::GpuTarget& target, std::string image) {
  const std::optional<ir::PipelineOptions>& passes = program.options().passes;
  runtime::CacheKey key;
  key.ir = ir::print(program.traced(), {.locations = true});
  key.options = (passes ? "passes num_stages=" + std::to_string(program.options().num_stages) : "no passes") +
                " num_warps=" + std::to_string(target.num_warps) +
                " max_registers=" + std::to_string(target.max_registers) +
                " arguments_do_not_overlap=" + std::to_string(target.arguments_do_not_overlap);
  key.target = std::move(image);
  return key;
}

}  // namespace kiln::cuda
