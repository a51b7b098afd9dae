// Fuzz target cli_args_fuzz: any bytes, split at NUL bytes into the words
// after `kiln`, through the kiln tool's command line (examples/kiln/arguments.hpp):
// CLI11's parse, the kernel flags, and the checks of kernel names, dims,
// choices, dtypes, devices and dump stages. An input ends either as a checked
// command, whose kernel options the kernel's spec accepts, or as
// std::invalid_argument with a one-line message. Anything else (a crash, a
// hang, a sanitizer report, another exception, a message over several lines)
// is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "arguments.hpp"
#include "findings.hpp"

namespace {

using namespace kiln;

/// The words of `text` between NUL bytes (empty words included: `kiln run ''`).
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find('\0', start);
    words.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return words;
    start = end + 1;
  }
}

/// Fails unless `run`'s options hold every dim and choice of its kernel's
/// spec, each within what the spec accepts, and one of its dtypes.
void require_accepted(const tool::KernelRun& run, std::string_view command_line) {
  const kernels::KernelSpec& spec = kernels::find_spec(run.kernel);
  const kernels::RunOptions& options = run.options;
  if (options.dims.size() != spec.dims.size() || options.choices.size() != spec.choices.size())
    fuzz::fail("checked options of " + spec.name + " lack or add a dim or choice", command_line);
  for (const kernels::Dim& dim : spec.dims) {
    const auto value = options.dims.find(dim.name);
    if (value == options.dims.end() || value->second < dim.min_value || value->second > INT32_MAX)
      fuzz::fail("checked options of " + spec.name + ": --" + dim.name + " missing or out of range", command_line);
  }
  for (const kernels::Choice& choice : spec.choices) {
    const auto value = options.choices.find(choice.name);
    if (value == options.choices.end())
      fuzz::fail("checked options of " + spec.name + " lack --" + choice.name, command_line);
    if (choice.values.empty()) kernels::choice_number(options, choice.name);  // throws unless a number in [0, 1)
    else if (std::ranges::find(choice.values, value->second) == choice.values.end())
      fuzz::fail("checked options of " + spec.name + ": --" + choice.name + " not accepted", command_line);
  }
  if (std::ranges::find(spec.dtypes, options.dtype) == spec.dtypes.end())
    fuzz::fail("checked options of " + spec.name + ": dtype '" + options.dtype + "' not supported", command_line);
}

void require_accepted(const tool::Command& command, std::string_view command_line) {
  if (const auto* run = std::get_if<tool::RunCommand>(&command)) require_accepted(run->run, command_line);
  if (const auto* dump = std::get_if<tool::DumpCommand>(&command)) require_accepted(dump->run, command_line);
  if (const auto* bench = std::get_if<tool::BenchCommand>(&command)) {
    if (bench->runs.empty()) fuzz::fail("a checked bench command runs no kernel", command_line);
    for (const tool::KernelRun& run : bench->runs) require_accepted(run, command_line);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words = words_of(text);
  words.insert(words.begin(), "kiln");
  std::vector<const char*> argv;
  for (const std::string& word : words) argv.push_back(word.c_str());
  tool::Command command;
  try {
    command = tool::parse_command_line(static_cast<int>(argv.size()), argv.data());
  } catch (const std::invalid_argument& e) {
    fuzz::require_one_line("command line", e.what());
    return 0;
  }
  try {
    require_accepted(command, text);
  } catch (const std::invalid_argument& e) {
    fuzz::fail(std::string("checked options do not hold: ") + e.what(), text);
  }
  return 0;
}
