// Naming the kernel specialisations an application compiles ahead of time.
// A kernels file given to kiln_add_kernels (CMake) defines
//
//   void kiln_aot_kernels(kiln::aot::KernelList& kernels) {
//     kernels.add<scale_bias<1024>>("scale_bias", {.facts = {kiln::aot::aligned_16, ...}});
//   }
//
// and the build traces, compiles and embeds each one, with a typed launcher
// kiln_kernels::scale_bias::launch(grid, args...) in the generated header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::aot {

/// What a specialisation assumes of one argument; its launches check it.
inline constexpr ir::ArgumentFacts anything{};
/// An integer that is a multiple of 16; a pointer aligned to 16 bytes.
inline constexpr ir::ArgumentFacts multiple_of_16{.divisibility = 16};
inline constexpr ir::ArgumentFacts aligned_16{.divisibility = 16};
/// An integer equal to 1 (the kernel is compiled with the constant).
inline constexpr ir::ArgumentFacts equal_to_1{.equal_to_1 = true};

struct KernelOptions {
  /// Warps per program on the GPU devices, as CompileOptions::num_warps.
  int num_warps = 4;
  /// Software-pipelining depth of loops feeding `dot`, as CompileOptions::num_stages.
  int num_stages = 3;
  /// Registers per thread the GPU code may use, as CompileOptions::max_registers.
  int max_registers = 0;
  /// One per kernel parameter, or empty: nothing assumed.
  std::vector<ir::ArgumentFacts> facts = {};
};

/// One specialisation: its launcher's name and the program to embed.
struct NamedKernel {
  std::string name;
  std::shared_ptr<const runtime::Program> program;  // traced, optimised, specialised
};

class KernelList {
 public:
  /// Adds kernel function Fn as `name` (a C++ identifier, unique in the list).
  template <auto Fn>
  void add(const std::string& name, const KernelOptions& options = {}) {
    CompileOptions compile_options;
    compile_options.num_warps = options.num_warps;
    compile_options.num_stages = options.num_stages;
    compile_options.max_registers = options.max_registers;
    add_program(name, compile<Fn>(compile_options).program_ptr(), options);
  }

  const std::vector<NamedKernel>& kernels() const { return kernels_; }

 private:
  void add_program(const std::string& name, std::shared_ptr<const runtime::Program> program,
                   const KernelOptions& options);
  std::vector<NamedKernel> kernels_;
};

}  // namespace kiln::aot

/// Defined by the kernels file: adds the specialisations to compile.
void kiln_aot_kernels(kiln::aot::KernelList& kernels);
