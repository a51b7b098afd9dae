// Launching a compiled kernel on a device.
#include "kiln/runtime/program.hpp"

namespace kiln::runtime {

Program::Program(std::unique_ptr<ir::Function> traced, std::unique_ptr<ir::Function> optimized, std::string display_name)
    : traced_(std::move(traced)),
      optimized_(std::move(optimized)),
      display_name_(std::move(display_name)),
      interpreter_(*optimized_) {}

LaunchStats Program::launch(const Device& device, Grid grid, std::span<const KernelArgument> args) const {
  for (int g : grid)
    if (g < 1)
      throw std::invalid_argument("launch " + display_name_ + ": grid dimensions must be positive, got (" +
                                  std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " + std::to_string(grid[2]) + ")");
  return interpreter_.launch(grid, args, device.threads());
}

}  // namespace kiln::runtime
