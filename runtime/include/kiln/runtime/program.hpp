// A compiled kernel: its traced and optimized IR, what runs it on each
// device, and its specialisations for what launch arguments let it assume.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/ir/ir.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/runtime/interpreter.hpp"

namespace kiln::runtime {

struct ProgramOptions {
  /// The IR passes run on a copy of the traced kernel; none: run it as traced.
  std::optional<ir::PipelineOptions> passes = ir::PipelineOptions{};
  /// Build a variant per set of argument facts (Triton's specialisation).
  bool specialize = true;
  /// Warps per program on the GPU devices (`emu`, `cuda`): each program
  /// runs num_warps * 32 threads.
  int num_warps = 4;
  /// Software-pipelining depth of loops feeding `dot` (ir::pipeline_dot_loads,
  /// run with the passes): the program every device runs is the pipelined one.
  int num_stages = 3;
  /// Registers per thread the GPU code may use (`.maxnreg`); 0: ptxas picks.
  int max_registers = 0;
};

class Program;

/// What a device other than `cpu` runs: the program compiled for it on its
/// first launch there, then kept with the program.
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  virtual LaunchStats launch(const Device& device, Grid grid, std::span<const KernelArgument> args) const = 0;
};

/// Compiles `program` for `device` (`emu`: runtime/emu, `cuda`: runtime/cuda).
std::unique_ptr<CompiledKernel> compile_for_device(const Program& program, const Device& device);

class Program : public std::enable_shared_from_this<Program> {
 public:
  /// `traced` is the verified kernel as the tracer built it; `display_name`
  /// is the C++ name (vector_add<1024>).
  Program(std::unique_ptr<ir::Function> traced, std::string display_name, ProgramOptions options = {});

  const ir::Function& traced() const { return *traced_; }
  /// The traced kernel after the IR passes, run on first use: a launch on a
  /// GPU device whose compiled kernel is in the compile cache needs none.
  const ir::Function& optimized() const;
  const std::string& display_name() const { return display_name_; }

  /// The program for launches whose arguments have `facts` (one per
  /// argument): this one when nothing is known or specialisation is off,
  /// else a copy specialised and optimized once, then cached.
  std::shared_ptr<const Program> specialized(const std::vector<ir::ArgumentFacts>& facts) const;
  /// How many specialised variants have been built so far.
  std::size_t specialization_count() const;

  const ProgramOptions& options() const { return options_; }

  /// Runs the program over `grid` on `device`: interpreted on `cpu`, else
  /// compiled for the device on its first launch there.
  LaunchStats launch(const Device& device, Grid grid, std::span<const KernelArgument> args) const;
  /// Compiles the program for `device` now, as its first launch there would
  /// (nothing to do on `cpu`), and keeps it; throws what that compile throws
  /// (e.g. more shared memory than the target gives a program).
  void compile_for(const Device& device) const;

 private:
  const CompiledKernel& compiled_for(const Device& device) const;

  const InterpretedKernel& interpreter() const;

  std::unique_ptr<ir::Function> traced_;
  std::string display_name_;
  ProgramOptions options_;
  mutable std::once_flag optimized_once_;
  mutable std::unique_ptr<ir::Function> optimized_;
  mutable std::once_flag interpreter_once_;
  mutable std::unique_ptr<InterpretedKernel> interpreter_;
  mutable std::mutex mutex_;
  mutable std::map<std::vector<ir::ArgumentFacts>, std::shared_ptr<const Program>> specializations_;
  mutable std::mutex compiled_mutex_;
  mutable std::map<std::string, std::unique_ptr<CompiledKernel>> compiled_;  // by device name
};

}  // namespace kiln::runtime
