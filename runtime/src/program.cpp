// Optimizing, specialising and launching a compiled kernel.
#include "kiln/runtime/program.hpp"

#include <algorithm>

#include "kiln/ir/verifier.hpp"
#include "ptx_check.hpp"

namespace kiln::runtime {

Program::Program(std::unique_ptr<ir::Function> traced, std::string display_name, ProgramOptions options)
    : traced_(std::move(traced)), display_name_(std::move(display_name)), options_(std::move(options)) {}

const ir::Function& Program::optimized() const {
  std::call_once(optimized_once_, [&] {
    auto copy = ir::clone(*traced_);
    if (options_.passes) {
      ir::PipelineOptions passes = *options_.passes;
      passes.num_stages = options_.num_stages;
      ir::optimize(*copy, passes);
    }
    optimized_ = std::move(copy);
  });
  return *optimized_;
}

const InterpretedKernel& Program::interpreter() const {
  std::call_once(interpreter_once_, [&] {
    if (ptx_check_requested()) check_ptx_for_gpu_targets(*this);
    interpreter_ = std::make_unique<InterpretedKernel>(optimized());
  });
  return *interpreter_;
}

std::shared_ptr<const Program> Program::specialized(const std::vector<ir::ArgumentFacts>& facts) const {
  if (!options_.specialize ||
      std::all_of(facts.begin(), facts.end(), [](const ir::ArgumentFacts& f) { return f.trivial(); }))
    return shared_from_this();
  std::lock_guard lock(mutex_);
  auto& slot = specializations_[facts];
  if (!slot) {
    auto copy = ir::clone(*traced_);
    ir::specialize(*copy, facts);
    ir::verify(*copy);
    ProgramOptions variant = options_;
    variant.specialize = false;
    slot = std::make_shared<Program>(std::move(copy), display_name_, std::move(variant));
  }
  return slot;
}

std::size_t Program::specialization_count() const {
  std::lock_guard lock(mutex_);
  return specializations_.size();
}

LaunchStats Program::launch(const Device& device, Grid grid, std::span<const KernelArgument> args) const {
  for (int g : grid)
    if (g < 1)
      throw std::invalid_argument("launch " + display_name_ + ": grid dimensions must be positive, got (" +
                                  std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
                                  std::to_string(grid[2]) + ")");
  if (device.kind() == Device::Kind::cpu) return interpreter().launch(grid, args, device.threads());
  return compiled_for(device).launch(device, grid, args);
}

void Program::compile_for(const Device& device) const {
  if (device.kind() != Device::Kind::cpu) compiled_for(device);
}

const CompiledKernel& Program::compiled_for(const Device& device) const {
  std::lock_guard lock(compiled_mutex_);
  auto& slot = compiled_[device.name()];
  if (!slot) slot = compile_for_device(*this, device);
  return *slot;
}

}  // namespace kiln::runtime
