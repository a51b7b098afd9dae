// Compiling and launching tile-IR text kernels (ir_kernel.hpp).
#include "ir_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "api_error.hpp"
#include "kiln/ir/numeric.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/verifier.hpp"
#include "program_launch.hpp"
#include "tensor_argument.hpp"

namespace kiln::capi {

namespace {

std::string parameter_label(const ir::Function& function, std::size_t index) {
  return "@" + function.name + " argument " + std::to_string(index) + " (" +
         ir::to_string(function.body.arguments[index]->type) + ")";
}

std::string kind_name(kiln_argument_kind kind) {
  switch (kind) {
    case KILN_ARGUMENT_TENSOR: return "a tensor";
    case KILN_ARGUMENT_INT: return "an int";
    case KILN_ARGUMENT_FLOAT: return "a float";
  }
  return "kind " + std::to_string(static_cast<int>(kind));
}

template <class T>
std::uint64_t bits_of(T value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

/// The bits of integer `value` for a parameter of integer dtype `dtype`.
std::uint64_t integer_bits(std::int64_t value, ir::DType dtype, const std::string& label) {
  const int bits = ir::dtype_bits(dtype);
  bool fits;
  if (ir::is_bool(dtype)) fits = value == 0 || value == 1;
  else if (ir::is_unsigned_int(dtype)) fits = value >= 0 && (bits == 64 || value < (std::int64_t{1} << bits));
  else fits = bits == 64 || (value >= -(std::int64_t{1} << (bits - 1)) && value < (std::int64_t{1} << (bits - 1)));
  require(fits,
          label + " is " + std::to_string(value) + ", which " + std::string(ir::dtype_name(dtype)) + " cannot hold");
  const std::uint64_t raw = static_cast<std::uint64_t>(value);
  return bits == 64 ? raw : raw & ((std::uint64_t{1} << bits) - 1);
}

/// The bits of float `value` rounded to float dtype `dtype`.
std::uint64_t float_bits(double value, ir::DType dtype, const std::string& label) {
  switch (dtype) {
    case ir::DType::f64: return bits_of(value);
    case ir::DType::f32: return bits_of(static_cast<float>(value));
    case ir::DType::f16: return half(value).bits;
    case ir::DType::bf16: return bfloat16(value).bits;
    case ir::DType::f8e4m3: return float8_e4m3(value).bits;
    case ir::DType::f8e5m2: return float8_e5m2(value).bits;
    default: fail(KILN_ERROR_INVALID_ARGUMENT, label + " is not a float parameter");
  }
}

runtime::KernelArgument scalar_argument(const kiln_argument& argument, const ir::Type& type, const std::string& label) {
  if (ir::is_float(type.dtype)) {
    require(argument.kind == KILN_ARGUMENT_FLOAT || argument.kind == KILN_ARGUMENT_INT,
            label + " is " + kind_name(argument.kind) + ", the kernel expects a float scalar");
    const double value = argument.kind == KILN_ARGUMENT_FLOAT ? argument.value.float_value
                                                              : static_cast<double>(argument.value.int_value);
    return {float_bits(value, type.dtype, label), {}};
  }
  require(argument.kind == KILN_ARGUMENT_INT,
          label + " is " + kind_name(argument.kind) + ", the kernel expects an integer scalar");
  return {integer_bits(argument.value.int_value, type.dtype, label), {}};
}

}  // namespace

std::shared_ptr<const runtime::Program> compile_ir(std::string_view text) {
  std::unique_ptr<ir::Function> function = ir::parse_function(text, "ir text");
  ir::verify(*function);
  std::string name = function->name;
  return std::make_shared<const runtime::Program>(std::move(function), std::move(name));
}

void launch_ir(const runtime::Program& program, const Device& device, std::span<const kiln_argument> arguments,
               const std::int32_t* grid) {
  const ir::Function& function = program.traced();
  const std::vector<ir::Value*>& parameters = function.body.arguments;
  require(arguments.size() == parameters.size(), "@" + function.name + " takes " + std::to_string(parameters.size()) +
                                                     " arguments, " + std::to_string(arguments.size()) + " were given");
  require(grid != nullptr, "@" + function.name + " is an IR kernel and needs a grid (3 numbers of programs)");
  for (int axis = 0; axis < 3; ++axis)
    require(grid[axis] >= 1, "the grid is (" + std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
                                 std::to_string(grid[2]) + "), each of its numbers must be at least 1");
  std::vector<runtime::KernelArgument> marshalled;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const ir::Type& type = parameters[i]->type;
    const std::string label = parameter_label(function, i);
    const kiln_argument& argument = arguments[i];
    if (type.is_pointer) {
      require(argument.kind == KILN_ARGUMENT_TENSOR,
              label + " is " + kind_name(argument.kind) + ", the kernel expects a tensor");
      const TensorArgument tensor(argument.value.tensor, device, label);
      tensor.require_dtype(type.dtype, "");
      tensor.require_contiguous();
      marshalled.push_back(pointer_argument(tensor));
    } else {
      marshalled.push_back(scalar_argument(argument, type, label));
    }
  }
  launch_program(program, device, {grid[0], grid[1], grid[2]}, marshalled);
}

}  // namespace kiln::capi
