// The kiln tool's command line: its subcommands and options, the kernel flags
// after `run NAME` and `dump NAME`, and the checks of kernel names, dims,
// choices, dtypes, devices and dump stages, all before anything is compiled.
// Needs no LLVM: fuzz/cli_args_fuzz.cpp runs it on any argv.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "kiln/kernels/kernel_spec.hpp"

namespace kiln::tool {

/// `kiln --help`, `kiln run --help`, `kiln --version`: the text to print.
struct HelpCommand {
  std::string text;
};

struct ListCommand {};

struct InfoCommand {};

/// One kernel and the checked options of its run.
struct KernelRun {
  std::string kernel;
  kernels::RunOptions options;
};

struct RunCommand {
  KernelRun run;
  /// Print the bytes the launches moved and each buffer's distinct bytes.
  bool stats = false;
  /// Print one JSON object.
  bool json = false;
};

struct DumpCommand {
  /// The options on `cpu:<sms>`, for `arch`: a plan sized by the device's
  /// parallelism is the one made for a GPU with that many SMs, in the
  /// configuration for that architecture.
  KernelRun run;
  std::string stage;  // ir, opt, layout, llvm or ptx
  std::string arch;   // sm_80 or sm_90a
  bool locations = false;
  /// Print one JSON object (the ptx stage with compile times) instead of text.
  bool json = false;
  /// SMs of the GPU whose launches to show (132: an H200).
  int sms = 132;
  /// With stage layout: draw one tile's layout into this SVG file instead of
  /// printing the layouts (empty: print them).
  std::string svg;
  /// The launch (index in the run's order) and the value (%N; -1: the first
  /// tile with a layout) whose layout `svg` draws.
  int launch = 0;
  int value = -1;
};

struct BenchCommand {
  /// The suite's kernels that support the dtype, each with its default options.
  std::vector<KernelRun> runs;
  bool json = false;
  /// Also draw the timings as a bar chart into this SVG file (empty: none).
  std::string svg;
  /// A results file of bench/compare's GPU half to draw below them (empty: none).
  std::string compare;
  /// What the chart's title names: the suite and the device.
  std::string suite;
};

using Command = std::variant<HelpCommand, ListCommand, InfoCommand, RunCommand, DumpCommand, BenchCommand>;

/// The command `argv` (argv[0]: the program) asks for, checked. Throws
/// std::invalid_argument with one line naming what is wrong: an option,
/// subcommand or value the parser rejects (ending "(see kiln --help)"), or an
/// unknown kernel, kernel flag, value, dtype, device, stage or arch.
Command parse_command_line(int argc, const char* const* argv);

}  // namespace kiln::tool
