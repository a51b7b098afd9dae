// The C++ the ahead-of-time generator writes: a header with a typed launcher
// per kernel, and a source file embedding each kernel's IR, GPU images and
// emu description.
#pragma once

#include <string>
#include <vector>

#include "emu/kernel_description.hpp"
#include "kiln/ir/ir.hpp"

namespace kiln::aot {

/// One kernel's embedded image for one GPU architecture.
struct GeneratedImage {
  std::string arch;
  bool cubin = false;
  std::string bytes;
};

/// One kernel as the generated files embed it.
struct GeneratedKernel {
  std::string name;                        // the launcher's name
  std::string display_name;                // the C++ kernel (scale_bias<1024>)
  const ir::Function* function = nullptr;  // the specialised, optimised tile IR
  int num_warps = 4;
  std::string gpu_entry;
  int gpu_shared_bytes = 0;
  std::vector<GeneratedImage> images;
  std::string emu_entry;  // the symbol of its code in the emu object
  runtime::emu::KernelDescription emu;
};

/// The header: in namespace `name_space`, a struct per kernel with
/// launch(grid, args...) and launch_on(device, grid, args...).
std::string generated_header(const std::vector<GeneratedKernel>& kernels, const std::string& name_space);
/// The source file: the embedded data and each launcher's kernel().
std::string generated_source(const std::vector<GeneratedKernel>& kernels, const std::string& name_space,
                             const std::string& header_name);

}  // namespace kiln::aot
