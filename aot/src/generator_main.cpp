// The ahead-of-time generator's main: linked with a kernels file (its
// kiln_aot_kernels) by kiln_add_kernels, run at build time. For every kernel
// the file names it writes the tile IR (cpu), PTX for each --arch and a cubin
// when ptxas is there (cuda), and the emu's host code into one object file,
// plus the generated header and source with the typed launchers.
//
//   <generator> --output-dir DIR --name BASE [--namespace NS] [--arch sm_80]... [--ptxas PATH|none]
//
// writes DIR/BASE.hpp, DIR/BASE.cpp and DIR/BASE_emu.o.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu/emu_object.hpp"
#include "generated_sources.hpp"
#include "kiln/aot/kernel_list.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/cuda/ptxas.hpp"
#include "kiln/runtime/cuda/target.hpp"

namespace {

struct Arguments {
  std::filesystem::path output_dir;
  std::string name;
  std::string name_space = "kiln_kernels";
  std::vector<std::string> archs;
  std::optional<std::filesystem::path> ptxas;  // nullopt: no cubins
  bool ptxas_given = false;
};

Arguments parse_arguments(int argc, char** argv) {
  Arguments arguments;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("option " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--output-dir") arguments.output_dir = value;
    else if (flag == "--name") arguments.name = value;
    else if (flag == "--namespace") arguments.name_space = value;
    else if (flag == "--arch") {
      if (value != "sm_80" && value != "sm_86" && value != "sm_89" && value != "sm_90" && value != "sm_90a")
        throw std::invalid_argument("--arch " + value + ": kiln compiles for sm_80, sm_86, sm_89, sm_90 and sm_90a");
      arguments.archs.push_back(value);
    } else if (flag == "--ptxas") {
      arguments.ptxas_given = true;
      if (value != "none") arguments.ptxas = value;
    } else throw std::invalid_argument("unknown option " + flag);
  }
  if (arguments.output_dir.empty() || arguments.name.empty())
    throw std::invalid_argument("--output-dir and --name are required");
  if (!arguments.ptxas_given) arguments.ptxas = kiln::cuda::find_ptxas();
  return arguments;
}

void write_file(const std::filesystem::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

int generate(const Arguments& arguments) {
  kiln::aot::KernelList list;
  kiln_aot_kernels(list);
  if (list.kernels().empty()) throw std::invalid_argument("kiln_aot_kernels added no kernel");
  kiln::runtime::emu::EmuObjectBuilder emu;
  std::vector<kiln::aot::GeneratedKernel> kernels;
  for (const kiln::aot::NamedKernel& named : list.kernels()) {
    const kiln::runtime::Program& program = *named.program;
    kiln::aot::GeneratedKernel kernel;
    kernel.name = named.name;
    kernel.display_name = program.display_name();
    kernel.function = &program.optimized();
    kernel.num_warps = program.options().num_warps;
    kernel.emu_entry = "kiln_aot_" + arguments.name_space + "_" + named.name + "_emu";
    kernel.emu = emu.add(program.optimized(), kernel.num_warps, kernel.emu_entry);
    for (const std::string& arch : arguments.archs) {
      const kiln::lowering::GpuKernel gpu = kiln::lowering::compile_for_gpu(
          program.optimized(), kiln::cuda::target_for(program, arch), {.keep_llvm_ir = false});
      kernel.gpu_entry = gpu.name;
      kernel.gpu_shared_bytes = gpu.shared_bytes;
      kernel.images.push_back({arch, false, gpu.ptx});
      if (arguments.ptxas)
        kernel.images.push_back(
            {arch, true, kiln::cuda::assemble_cubin(*arguments.ptxas, gpu.ptx, arch, program.display_name())});
    }
    kernels.push_back(std::move(kernel));
  }
  std::filesystem::create_directories(arguments.output_dir);
  const std::string header = arguments.name + ".hpp";
  write_file(arguments.output_dir / (arguments.name + "_emu.o"), emu.emit());
  write_file(arguments.output_dir / (arguments.name + ".cpp"),
             kiln::aot::generated_source(kernels, arguments.name_space, header));
  write_file(arguments.output_dir / header, kiln::aot::generated_header(kernels, arguments.name_space));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return generate(parse_arguments(argc, argv));
  } catch (const std::exception& error) {
    std::cerr << "kiln_add_kernels: " << error.what() << "\n";
    return 1;
  }
}
