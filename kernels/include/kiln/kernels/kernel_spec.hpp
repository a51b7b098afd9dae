// The sample kernels' command-line face, without their code: each kernel's
// name, dims, choices and dtypes (KernelSpec), the options of one run, and
// their validation. Needs no LLVM and no traced kernel, so that the kiln
// tool's argument checks build on their own (fuzz/cli_args_fuzz.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime/device.hpp"

namespace kiln::kernels {

/// One size parameter of a kernel, given on the command line as --name N.
struct Dim {
  std::string name;
  std::int64_t default_value;
  std::string help;
  std::int64_t min_value = 1;  // 0 for sizes such as padding
};

/// One non-size parameter, given as --name VALUE: a variant, an epilogue
/// part, a probability.
struct Choice {
  std::string name;
  std::string default_value;
  std::string help;
  std::vector<std::string> values;  // the accepted values; empty: a number in [0, 1)
};

/// What a sample kernel is called and which parameters it takes.
struct KernelSpec {
  std::string name;
  std::string summary;
  std::vector<Dim> dims;
  std::vector<std::string> dtypes;  // the first is the default
  std::vector<Choice> choices;
  /// The kernel that computes the same result unfused (several launches), on
  /// the same inputs for the same options; empty when there is none.
  std::string unfused;
};

struct RunOptions {
  std::map<std::string, std::int64_t> dims;    // every Dim of the kernel
  std::map<std::string, std::string> choices;  // every Choice of the kernel
  std::string dtype;
  Device device = Device::cpu();
  /// The GPU architecture whose configuration (tiles, warps, stages) the
  /// library's kernels launch in, "sm_80" or "sm_90a"; empty: the device's
  /// own (target_arch.hpp). `kiln dump --arch` and `kiln run --arch` set it.
  std::string arch;
  std::uint64_t seed = 0;
  bool check = false;
  bool bench = false;
};

/// Every sample kernel's spec, in the order `kiln list` shows them
/// (kernel_catalog.cpp).
const std::vector<KernelSpec>& kernel_specs();
/// Throws std::invalid_argument "unknown kernel 'x' (known: a, b)".
const KernelSpec& find_spec(std::string_view name);

/// The kernel's default options with the given --name value flags (dims and
/// choices), dtype and device filled in; throws std::invalid_argument naming a
/// flag the kernel lacks, a value that is not an integer, a size out of range,
/// a value the choice does not accept or a dtype it does not support.
RunOptions make_options(const KernelSpec& kernel, const std::map<std::string, std::string>& flags, std::string dtype,
                        Device device);

/// The options' dims in the kernel's order: "rows=1000 cols=1111".
std::string shape_string(const KernelSpec& kernel, const RunOptions& options);

/// The value of a numeric choice (one whose `values` is empty).
double choice_number(const RunOptions& options, const std::string& name);

}  // namespace kiln::kernels
