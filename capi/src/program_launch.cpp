// Specialising and launching a program on C API arguments (program_launch.hpp).
#include "program_launch.hpp"

#include <cstdint>
#include <memory>

namespace kiln::capi {

runtime::KernelArgument pointer_argument(const TensorArgument& tensor) { return {tensor.address(), tensor.range()}; }

void launch_program(const runtime::Program& program, const Device& device, runtime::Grid grid,
                    const std::vector<runtime::KernelArgument>& arguments) {
  const std::vector<ir::Value*>& parameters = program.traced().body.arguments;
  std::vector<ir::ArgumentFacts> facts(parameters.size());
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const ir::Type& type = parameters[i]->type;
    const std::uint64_t bits = arguments[i].bits;
    if (type.is_pointer) {
      if (bits % 16 == 0) facts[i].divisibility = 16;
    } else if (ir::is_integer(type.dtype) && !ir::is_bool(type.dtype)) {
      // Equal to 1, or a multiple of 16, read the same in the value's own
      // width whether signed or unsigned (the bits above it are zero).
      if (bits == 1) facts[i].equal_to_1 = true;
      else if (bits % 16 == 0) facts[i].divisibility = 16;
    }
  }
  program.specialized(facts)->launch(device, grid, arguments);
}

}  // namespace kiln::capi
