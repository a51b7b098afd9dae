// The kiln tool's command line, parsed with CLI11 and checked against the
// kernels' specs.
#include "arguments.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

namespace kiln::tool {

namespace {

// What CLI11 fills in, before the checks.
struct RunArgs {
  std::string kernel;
  std::string dtype;
  std::string device;
  std::string arch;
  std::uint64_t seed = 0;
  bool check = false;
  bool bench = false;
  bool stats = false;
  bool json = false;
};

struct DumpArgs {
  std::string kernel;
  std::string dtype;
  std::string stage = "opt";
  std::string arch = "sm_90a";
  bool locations = false;
  bool json = false;
  int sms = 132;
  std::string svg;
  std::string value;
  int launch = -1;
};

struct BenchArgs {
  std::string suite = "fusion";
  std::string device;
  std::string dtype;
  bool json = false;
  std::string svg;
  std::string compare;
};

constexpr const char* device_help =
    "cpu, cpu:N, emu, emu:N, emu-sm_90a (the sm_90a code on the emu), cuda or cuda:N (default: $KILN_DEVICE, else cuda "
    "when a GPU is present, else cpu)";

// Extra --name value pairs after `run NAME` / `dump NAME` are the kernel's
// dims and choices; make_options checks names and values.
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

std::string comma_separated(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

/// Throws unless every word after argv[0] is free of control characters: the
/// error lines quote words, and a newline or carriage return in one would
/// split the line. No option, kernel, value or device name holds one.
void require_printable(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    for (const char* c = argv[i]; *c; ++c) {
      const auto code = static_cast<unsigned char>(*c);
      if (code >= 0x20 && code != 0x7f) continue;
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", code);
      throw std::invalid_argument("argument " + std::to_string(i) + " holds the control character " + hex +
                                  "; kiln's arguments are printable text");
    }
  }
}

Device choose_device(const std::string& name) {
  return name.empty() ? Device::default_device() : Device::from_name(name);
}

/// Throws std::invalid_argument unless `arch` is one the code generator targets.
void check_arch(const std::string& arch) {
  if (arch != "sm_80" && arch != "sm_90a")
    throw std::invalid_argument("unknown arch '" + arch + "' (archs: sm_80, sm_90a)");
}

RunCommand check_run(const RunArgs& args, const std::vector<std::string>& extras) {
  const std::map<std::string, std::string> flags = parse_kernel_flags(extras);
  const kernels::KernelSpec& kernel = kernels::find_spec(args.kernel);
  const Device device = choose_device(args.device);
  RunCommand command{.run = {kernel.name, kernels::make_options(kernel, flags, args.dtype, device)},
                     .stats = args.stats,
                     .json = args.json};
  if (!args.arch.empty()) check_arch(args.arch);
  command.run.options.arch = args.arch;
  command.run.options.seed = args.seed;
  command.run.options.check = args.check;
  command.run.options.bench = args.bench;
  return command;
}

/// The N of "%N" or "N", a value number of the IR's text form.
int value_number(const std::string& text) {
  const std::string digits = text.starts_with("%") ? text.substr(1) : text;
  const bool is_number = !digits.empty() && digits.size() <= 9 &&
                         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!is_number) throw std::invalid_argument("--value needs a value of the IR such as %12, got '" + text + "'");
  return std::stoi(digits);
}

DumpCommand check_dump(const DumpArgs& args, const std::vector<std::string>& extras) {
  const std::map<std::string, std::string> flags = parse_kernel_flags(extras);
  const kernels::KernelSpec& kernel = kernels::find_spec(args.kernel);
  const std::vector<std::string> stages = {"ir", "opt", "layout", "llvm", "ptx"};
  if (std::find(stages.begin(), stages.end(), args.stage) == stages.end())
    throw std::invalid_argument("unknown stage '" + args.stage + "' (stages: " + comma_separated(stages) + ")");
  check_arch(args.arch);
  if (args.json && args.stage != "ptx")
    throw std::invalid_argument("--json reports the ptx stage; got --stage " + args.stage);
  if (args.sms < 1) throw std::invalid_argument("--sms must be at least 1, got " + std::to_string(args.sms));
  if (!args.svg.empty() && args.stage != "layout")
    throw std::invalid_argument("--svg draws a tile of the layout stage; got --stage " + args.stage);
  if (args.svg.empty() && (!args.value.empty() || args.launch >= 0))
    throw std::invalid_argument(std::string(args.value.empty() ? "--launch" : "--value") +
                                " chooses the tile --svg draws; add --svg FILE");
  if (args.launch < -1) throw std::invalid_argument("--launch must be at least 0, got " + std::to_string(args.launch));
  kernels::RunOptions options = kernels::make_options(kernel, flags, args.dtype, Device::cpu(args.sms));
  options.arch = args.arch;
  return {.run = {kernel.name, std::move(options)},
          .stage = args.stage,
          .arch = args.arch,
          .locations = args.locations,
          .json = args.json,
          .sms = args.sms,
          .svg = args.svg,
          .launch = std::max(args.launch, 0),
          .value = args.value.empty() ? -1 : value_number(args.value)};
}

BenchCommand check_bench(const BenchArgs& args) {
  const Device device = choose_device(args.device);
  BenchCommand command;
  command.json = args.json;
  command.svg = args.svg;
  command.suite = args.suite;
  if (!args.compare.empty() && args.svg.empty())
    throw std::invalid_argument("--compare adds a chart to the picture --svg draws; add --svg FILE");
  command.compare = args.compare;
  for (const kernels::KernelSpec& kernel : kernels::kernel_specs()) {
    const bool supports =
        args.dtype.empty() || std::find(kernel.dtypes.begin(), kernel.dtypes.end(), args.dtype) != kernel.dtypes.end();
    if ((args.suite == "fusion" && kernel.unfused.empty()) || !supports) continue;
    command.runs.push_back({kernel.name, kernels::make_options(kernel, {}, args.dtype, device)});
  }
  if (command.runs.empty())
    throw std::invalid_argument("suite '" + args.suite + "' has no kernel" +
                                (args.dtype.empty() ? std::string() : " for dtype '" + args.dtype + "'"));
  return command;
}

}  // namespace

Command parse_command_line(int argc, const char* const* argv) {
  CLI::App app{"kiln: run, check, time and dump tile-language kernels"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION);
  app.require_subcommand(1);

  app.add_subcommand("list", "list the kernels, their dimensions and dtypes");

  RunArgs run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "run a kernel on random inputs: kiln run softmax --rows 1000 --cols 1111 --check");
  run_cmd->add_option("kernel", run.kernel, "kernel name (see kiln list)")->required();
  run_cmd->add_option("--dtype", run.dtype, "element dtype (default: the kernel's first)");
  run_cmd->add_option("--device", run.device, device_help);
  run_cmd->add_option("--arch", run.arch,
                      "launch the library configuration of this architecture, sm_80 or sm_90a, instead of the "
                      "device's own (the code is still compiled for the device)");
  run_cmd->add_option("--seed", run.seed, "seed of the random inputs");
  run_cmd->add_flag("--check", run.check, "compare with the C++ reference; exit 1 above the tolerance");
  run_cmd->add_flag("--bench", run.bench, "time the launch and print throughput");
  run_cmd->add_flag("--stats", run.stats,
                    "print the global-memory bytes the launches moved and the distinct bytes of each buffer they read "
                    "and wrote");
  run_cmd->add_flag("--json", run.json, "print one JSON object");
  run_cmd->allow_extras();

  DumpArgs dump;
  CLI::App* dump_cmd = app.add_subcommand(
      "dump", "print the code a kernel's run launches (as the cuda device compiles it): kiln dump softmax --stage opt");
  dump_cmd->add_option("kernel", dump.kernel, "kernel name (see kiln list)")->required();
  dump_cmd->add_option(
      "--stage", dump.stage,
      "ir (as traced), opt (after the IR passes), layout (the GPU layout of each tile), llvm (LLVM IR for "
      "nvptx64) or ptx");
  dump_cmd->add_option(
      "--arch", dump.arch,
      "GPU target: the library configuration the kernel launches in, and the target of the layout/llvm/ptx "
      "stages: sm_80 or sm_90a (default)");
  dump_cmd->add_option("--dtype", dump.dtype, "element dtype");
  dump_cmd->add_flag("--locations", dump.locations, "print source locations");
  dump_cmd->add_flag("--json", dump.json,
                     "print one JSON object: each launch's PTX, warps, grid, shared memory, argument facts and the "
                     "time of each step from trace to PTX (with --stage ptx)");
  dump_cmd->add_option("--sms", dump.sms,
                       "SMs of the GPU to show the launches for: plans sized by the device are made for it (default "
                       "132, an H200)");
  dump_cmd->add_option("--svg", dump.svg,
                       "with --stage layout: draw one tile's layout into this SVG file, a grid of its elements each "
                       "naming the warp, lane and register that hold it, instead of printing the layouts");
  dump_cmd->add_option("--value", dump.value,
                       "with --svg: the tile to draw, a value of the IR as the layout stage prints it (%12; default: "
                       "the first tile it lists)");
  dump_cmd->add_option("--launch", dump.launch,
                       "with --svg: which of the run's launches the value belongs to, counted from 0 in launch order "
                       "(default 0)");
  dump_cmd->allow_extras();

  BenchArgs bench;
  CLI::App* bench_cmd = app.add_subcommand("bench", "time a suite of kernels: kiln bench --suite fusion");
  bench_cmd->add_option("--suite", bench.suite, "fusion (each fused kernel against its unfused sequence) or all")
      ->check(CLI::IsMember({"fusion", "all"}));
  bench_cmd->add_option("--device", bench.device, device_help);
  bench_cmd->add_option("--dtype", bench.dtype, "element dtype (default: each kernel's first)");
  bench_cmd->add_flag("--json", bench.json, "print one JSON object per kernel");
  bench_cmd->add_option("--svg", bench.svg,
                        "also draw the timings into this SVG file: a bar chart with each fused kernel against its "
                        "unfused sequence, times and ratios labelled");
  bench_cmd->add_option("--compare", bench.compare,
                        "with --svg: also chart this results file of bench/compare's GPU half (compare.py gpu --json "
                        "FILE), kiln against Triton and torch on that GPU, below the suite's chart");

  app.add_subcommand("info", "show devices, toolchain and version");

  require_printable(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != static_cast<int>(CLI::ExitCodes::Success))
      throw std::invalid_argument(std::string(e.what()) + " (see kiln --help)");
    std::ostringstream out, err;  // --help, --version
    app.exit(e, out, err);
    return HelpCommand{out.str()};
  }

  if (app.got_subcommand("list")) return ListCommand{};
  if (app.got_subcommand("info")) return InfoCommand{};
  if (app.got_subcommand("bench")) return check_bench(bench);
  if (app.got_subcommand("run")) return check_run(run, run_cmd->remaining());
  return check_dump(dump, dump_cmd->remaining());
}

}  // namespace kiln::tool
