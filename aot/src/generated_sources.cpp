// Writing the generated header and source of kiln_add_kernels.
#include "generated_sources.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "kiln/ir/printer.hpp"

namespace kiln::aot {

namespace {

/// The C++ storage type of a dtype, as launch arguments and Buffers spell it.
std::string storage_type(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::i1: return "bool";
    case ir::DType::i8: return "std::int8_t";
    case ir::DType::i16: return "std::int16_t";
    case ir::DType::i32: return "std::int32_t";
    case ir::DType::i64: return "std::int64_t";
    case ir::DType::u8: return "std::uint8_t";
    case ir::DType::u16: return "std::uint16_t";
    case ir::DType::u32: return "std::uint32_t";
    case ir::DType::u64: return "std::uint64_t";
    case ir::DType::f16: return "kiln::half";
    case ir::DType::bf16: return "kiln::bfloat16";
    case ir::DType::f32: return "float";
    case ir::DType::f64: return "double";
    case ir::DType::f8e4m3: return "kiln::float8_e4m3";
    case ir::DType::f8e5m2: return "kiln::float8_e5m2";
  }
  throw std::invalid_argument("kiln_add_kernels: no C++ type for dtype " + std::string(ir::dtype_name(dtype)));
}

std::string parameter_list(const ir::Function& fn) {
  std::string out;
  for (const ir::Value* argument : fn.body.arguments) {
    const ir::Type& type = argument->type;
    out += (out.empty() ? "" : ", ") + std::string(type.is_pointer ? "kiln::aot::Pointer<" : "kiln::aot::Scalar<") +
           storage_type(type.dtype) + ">";
  }
  return out;
}

/// A C++ string literal holding `text` exactly.
std::string string_literal(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\n') out += "\\n\"\n    \"";
    else if (c == '"' || c == '\\') out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c >= 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\%03o", c);
      out += escaped;
    } else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string byte_array(const std::string& bytes) {
  std::ostringstream out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out << static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << ",";
    if (i % 24 == 23) out << "\n    ";
  }
  return out.str();
}

std::string facts_comment(const ir::Function& fn) {
  std::string out;
  for (std::size_t i = 0; i < fn.argument_facts.size(); ++i) {
    const ir::ArgumentFacts& facts = fn.argument_facts[i];
    if (facts.trivial()) continue;
    out += (out.empty() ? "" : ", ") + std::string("argument ") + std::to_string(i) +
           (facts.equal_to_1                        ? " equal to 1"
            : fn.body.arguments[i]->type.is_pointer ? " aligned to 16 bytes"
                                                    : " a multiple of 16");
  }
  return out.empty() ? "nothing" : out;
}

}  // namespace

std::string generated_header(const std::vector<GeneratedKernel>& kernels, const std::string& name_space) {
  std::ostringstream out;
  out << "// Typed launchers of kernels compiled ahead of time by kiln_add_kernels: do not edit.\n"
      << "#pragma once\n\n#include <cstdint>\n\n#include \"kiln/ir/numeric.hpp\"\n"
      << "#include \"kiln/runtime/aot_kernel.hpp\"\n\nnamespace " << name_space << " {\n";
  for (const GeneratedKernel& kernel : kernels) {
    const std::string parameters = parameter_list(*kernel.function);
    out << "\n/// " << kernel.display_name << ", " << kernel.num_warps
        << " warps per program on GPUs; assumes: " << facts_comment(*kernel.function) << ".\n"
        << "struct " << kernel.name << " {\n"
        << "  static const kiln::aot::Kernel& kernel();\n"
        << "  /// Runs over `grid` on the device of the Buffer arguments.\n"
        << "  template <class... Args>\n"
        << "  static kiln::runtime::LaunchStats launch(kiln::aot::Grid grid, const Args&... args) {\n"
        << "    return launch_on(kiln::aot::detail::device_of(args...), grid, args...);\n  }\n"
        << "  template <class... Args>\n"
        << "  static kiln::runtime::LaunchStats launch_on(const kiln::Device& device, kiln::aot::Grid grid,\n"
        << "                                              const Args&... args) {\n"
        << "    const auto marshalled = kiln::aot::marshal<" << parameters << ">(\"" << kernel.name << "\", args...);\n"
        << "    return kernel().launch(device, grid, marshalled);\n  }\n};\n";
  }
  out << "\n}  // namespace " << name_space << "\n";
  return out.str();
}

std::string generated_source(const std::vector<GeneratedKernel>& kernels, const std::string& name_space,
                             const std::string& header_name) {
  std::ostringstream out;
  out << "// The embedded kernels of " << header_name << ": do not edit.\n#include \"" << header_name << "\"\n\n";
  for (const GeneratedKernel& kernel : kernels)
    out << "extern \"C\" void " << kernel.emu_entry << "(const std::uint64_t* arguments);\n";
  out << "\nnamespace " << name_space << " {\n\nnamespace {\n";
  for (const GeneratedKernel& kernel : kernels) {
    const std::string& k = kernel.name;
    out << "\n// " << k << "\n";
    for (std::size_t i = 0; i < kernel.images.size(); ++i)
      out << "const unsigned char " << k << "_image_" << i << "[] = {\n    " << byte_array(kernel.images[i].bytes)
          << "};\n";
    out << "const kiln::aot::GpuImage " << k << "_images[] = {\n";
    for (std::size_t i = 0; i < kernel.images.size(); ++i)
      out << "    {\"" << kernel.images[i].arch << "\", " << (kernel.images[i].cubin ? "true" : "false") << ", " << k
          << "_image_" << i << ", sizeof " << k << "_image_" << i << "},\n";
    out << "    {nullptr, false, nullptr, 0}};\nconst kiln::aot::EmuAccessSite " << k << "_access_sites[] = {\n";
    for (const runtime::emu::AccessSite& site : kernel.emu.access_sites)
      out << "    {" << static_cast<int>(site.kind) << ", " << string_literal(site.op_name) << ", "
          << string_literal(site.place) << ", " << site.active_lanes << ", "
          << (site.dtype ? "\"" + std::string(ir::dtype_name(*site.dtype)) + "\"" : std::string("nullptr")) << ", "
          << site.source << "},\n";
    out << "    {0, nullptr, nullptr, 0, nullptr, -1}};\nconst char* const " << k << "_barrier_places[] = {\n";
    for (const std::string& place : kernel.emu.barrier_places) out << "    " << string_literal(place) << ",\n";
    out << "    nullptr};\n"
        << "const kiln::aot::EmbeddedKernel " << k << "_embedded{\n"
        << "    .name = \"" << k << "\",\n"
        << "    .ir_text = " << string_literal(ir::print(*kernel.function, {.locations = true})) << ",\n"
        << "    .num_warps = " << kernel.num_warps << ",\n"
        << "    .gpu_entry = \"" << kernel.gpu_entry << "\",\n"
        << "    .gpu_shared_bytes = " << kernel.gpu_shared_bytes << ",\n"
        << "    .gpu_images = {" << k << "_images, " << kernel.images.size() << "},\n"
        << "    .emu_entry = " << kernel.emu_entry << ",\n"
        << "    .emu_access_sites = {" << k << "_access_sites, " << kernel.emu.access_sites.size() << "},\n"
        << "    .emu_barrier_places = {" << k << "_barrier_places, " << kernel.emu.barrier_places.size() << "},\n"
        << "    .emu_shared_bytes = " << kernel.emu.shared_bytes << ",\n};\n";
  }
  out << "\n}  // namespace\n";
  for (const GeneratedKernel& kernel : kernels)
    out << "\nconst kiln::aot::Kernel& " << kernel.name << "::kernel() {\n  static const kiln::aot::Kernel kernel("
        << kernel.name << "_embedded);\n  return kernel;\n}\n";
  out << "\n}  // namespace " << name_space << "\n";
  return out.str();
}

}  // namespace kiln::aot
