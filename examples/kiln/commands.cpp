// The kiln tool's subcommands: list, run, dump, info.
#include "commands.hpp"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "kiln/ir/printer.hpp"
#include "kiln/kernels/registry.hpp"
#include "kiln/runtime/device.hpp"

namespace kiln::tool {

namespace {
Device choose_device(const std::string& name) {
  return name.empty() ? Device::default_device() : Device::from_name(name);
}

std::string human_bytes_per_second(double bytes_per_second) {
  if (bytes_per_second >= 1e9) return fmt::format("{:.2f} GB/s", bytes_per_second / 1e9);
  return fmt::format("{:.1f} MB/s", bytes_per_second / 1e6);
}

std::string human_seconds(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}
}  // namespace

int list_kernels() {
  for (const kernels::KernelInfo& k : kernels::all_kernels()) {
    std::string dims;
    for (const kernels::Dim& d : k.dims) dims += fmt::format(" --{} {}", d.name, d.default_value);
    std::string dtypes;
    for (const std::string& d : k.dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
    fmt::print("{:<12} {}\n{:<12} dims:{}  dtypes: {}\n", k.name, k.summary, "", dims, dtypes);
  }
  return 0;
}

int run_kernel(const RunArgs& args) {
  const kernels::KernelInfo& kernel = kernels::find_kernel(args.kernel);
  Device device = choose_device(args.device);
  kernels::RunOptions options = kernels::make_options(kernel, args.dims, args.dtype, device);
  options.seed = args.seed;
  options.check = args.check;
  options.bench = args.bench;
  kernels::RunReport report = kernel.run(options);

  if (args.json) {
    nlohmann::json j;
    j["kernel"] = kernel.name;
    j["device"] = device.name();
    j["dtype"] = options.dtype;
    j["shape"] = options.dims;
    j["seed"] = options.seed;
    j["bytes_read"] = report.stats.bytes_read;
    j["bytes_written"] = report.stats.bytes_written;
    j["check_error"] = report.error ? nlohmann::json(*report.error) : nlohmann::json(nullptr);
    j["tolerance"] = report.tolerance;
    j["passed"] = report.passed();
    j["time_s"] = report.seconds ? nlohmann::json(*report.seconds) : nlohmann::json(nullptr);
    j["throughput_gb_s"] = report.seconds ? nlohmann::json(report.bytes / *report.seconds / 1e9) : nlohmann::json(nullptr);
    std::cout << j.dump() << "\n";
  } else {
    fmt::print("{} {} {} on {}\n", kernel.name, report.shape, options.dtype, device.name());
    if (report.error)
      fmt::print("  check: relative error {:.3g} (tolerance {:.3g}) {}\n", *report.error, report.tolerance,
                 report.passed() ? "ok" : "FAILED");
    if (report.seconds)
      fmt::print("  bench: {} per launch, {} ({:.3g} MB moved)\n", human_seconds(*report.seconds),
                 human_bytes_per_second(report.bytes / *report.seconds), report.bytes / 1e6);
    if (!report.error && !report.seconds) fmt::print("  ran; add --check to compare with the reference, --bench to time it\n");
  }
  return report.passed() ? 0 : 1;
}

int dump_kernel(const DumpArgs& args) {
  const kernels::KernelInfo& kernel = kernels::find_kernel(args.kernel);
  if (args.stage != "ir" && args.stage != "opt")
    throw std::invalid_argument("unknown stage '" + args.stage + "' (stages: ir, opt)");
  kernels::RunOptions options = kernels::make_options(kernel, args.dims, args.dtype, Device::cpu());
  auto program = kernel.program(options);
  const ir::Function& fn = args.stage == "ir" ? program->traced() : program->optimized();
  std::cout << ir::print(fn, {.locations = args.locations});
  return 0;
}

int show_info() {
  fmt::print("kiln {}\n", KILN_VERSION);
  fmt::print("LLVM {} (for the GPU code generator)\n", KILN_LLVM_VERSION);
  std::string devices;
  for (const std::string& d : Device::available()) devices += (devices.empty() ? "" : ", ") + d;
  fmt::print("devices: {} (default: {})\n", devices, Device::default_device().name());
  fmt::print("cpu: {} hardware threads\n", std::thread::hardware_concurrency());
  fmt::print("cuda: not available in this build\n");
  fmt::print("kernels: {}\n", kernels::all_kernels().size());
  return 0;
}

}  // namespace kiln::tool
