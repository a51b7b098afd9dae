// A compiled kernel: its traced and optimized IR and what runs it on each device.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "kiln/ir/ir.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime {

class Program {
 public:
  /// `traced` is the kernel as the tracer built it, `optimized` after the
  /// IR passes; `display_name` is the C++ name (vector_add<1024>).
  Program(std::unique_ptr<ir::Function> traced, std::unique_ptr<ir::Function> optimized, std::string display_name);

  const ir::Function& traced() const { return *traced_; }
  const ir::Function& optimized() const { return *optimized_; }
  const std::string& display_name() const { return display_name_; }

  LaunchStats launch(const Device& device, Grid grid, std::span<const KernelArgument> args) const;

 private:
  std::unique_ptr<ir::Function> traced_;
  std::unique_ptr<ir::Function> optimized_;
  std::string display_name_;
  InterpretedKernel interpreter_;
};

}  // namespace kiln::runtime
