// kiln: list, run, check, time and dump the sample kernels.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "commands.hpp"

namespace {

// Extra --name value pairs after `run NAME` / `dump NAME` are the kernel's
// dims and choices; the registry checks names and values.
std::map<std::string, std::string> parse_kernel_flags(const std::vector<std::string>& extras) {
  std::map<std::string, std::string> flags;
  for (std::size_t i = 0; i < extras.size(); ++i) {
    const std::string& flag = extras[i];
    if (!flag.starts_with("--") || flag.size() < 3) throw std::invalid_argument("unexpected argument '" + flag + "'");
    std::string name = flag.substr(2);
    if (auto eq = name.find('='); eq != std::string::npos) {
      flags[name.substr(0, eq)] = name.substr(eq + 1);
    } else {
      if (i + 1 >= extras.size()) throw std::invalid_argument("--" + name + " needs a value");
      flags[name] = extras[++i];
    }
  }
  return flags;
}

constexpr const char* device_help =
    "cpu, cpu:N, emu, emu:N, cuda or cuda:N (default: $KILN_DEVICE, else cuda when a GPU is present, else cpu)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln: run, check, time and dump tile-language kernels"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION);
  app.require_subcommand(1);

  app.add_subcommand("list", "list the kernels, their dimensions and dtypes");

  kiln::tool::RunArgs run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "run a kernel on random inputs: kiln run softmax --rows 1000 --cols 1111 --check");
  run_cmd->add_option("kernel", run.kernel, "kernel name (see kiln list)")->required();
  run_cmd->add_option("--dtype", run.dtype, "element dtype (default: the kernel's first)");
  run_cmd->add_option("--device", run.device, device_help);
  run_cmd->add_option("--seed", run.seed, "seed of the random inputs");
  run_cmd->add_flag("--check", run.check, "compare with the C++ reference; exit 1 above the tolerance");
  run_cmd->add_flag("--bench", run.bench, "time the launch and print throughput");
  run_cmd->add_flag("--stats", run.stats,
                    "print the global-memory bytes the launches moved and the distinct bytes of each buffer they read "
                    "and wrote");
  run_cmd->add_flag("--json", run.json, "print one JSON object");
  run_cmd->allow_extras();

  kiln::tool::DumpArgs dump;
  CLI::App* dump_cmd = app.add_subcommand(
      "dump", "print the code a kernel's run launches (as the cuda device compiles it): kiln dump softmax --stage opt");
  dump_cmd->add_option("kernel", dump.kernel, "kernel name (see kiln list)")->required();
  dump_cmd->add_option(
      "--stage", dump.stage,
      "ir (as traced), opt (after the IR passes), layout (the GPU layout of each tile), llvm (LLVM IR for "
      "nvptx64) or ptx");
  dump_cmd->add_option("--arch", dump.arch, "GPU target of the layout/llvm/ptx stages: sm_80 or sm_90a (default)");
  dump_cmd->add_option("--dtype", dump.dtype, "element dtype");
  dump_cmd->add_flag("--locations", dump.locations, "print source locations");
  dump_cmd->add_flag("--json", dump.json,
                     "print one JSON object: each launch's PTX, warps, grid, shared memory, argument facts and the "
                     "time of each step from trace to PTX (with --stage ptx)");
  dump_cmd->add_option("--sms", dump.sms,
                       "SMs of the GPU to show the launches for: plans sized by the device are made for it (default "
                       "132, an H200)");
  dump_cmd->allow_extras();

  kiln::tool::BenchArgs bench;
  CLI::App* bench_cmd = app.add_subcommand("bench", "time a suite of kernels: kiln bench --suite fusion");
  bench_cmd->add_option("--suite", bench.suite, "fusion (each fused kernel against its unfused sequence) or all")
      ->check(CLI::IsMember({"fusion", "all"}));
  bench_cmd->add_option("--device", bench.device, device_help);
  bench_cmd->add_option("--dtype", bench.dtype, "element dtype (default: each kernel's first)");
  bench_cmd->add_flag("--json", bench.json, "print one JSON object per kernel");

  app.add_subcommand("info", "show devices, toolchain and version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    std::cerr << "kiln: " << e.what() << " (see kiln --help)\n";
    return 2;
  }

  try {
    if (app.got_subcommand("list")) return kiln::tool::list_kernels();
    if (app.got_subcommand("info")) return kiln::tool::show_info();
    if (app.got_subcommand("bench")) return kiln::tool::bench_suite(bench);
    if (app.got_subcommand("run")) {
      run.flags = parse_kernel_flags(run_cmd->remaining());
      return kiln::tool::run_kernel(run);
    }
    dump.flags = parse_kernel_flags(dump_cmd->remaining());
    return kiln::tool::dump_kernel(dump);
  } catch (const std::invalid_argument& e) {
    std::cerr << "kiln: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "kiln: " << e.what() << "\n";
    return 1;
  }
}
