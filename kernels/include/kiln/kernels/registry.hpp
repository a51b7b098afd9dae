// The sample kernels by name: their dimensions, dtypes, and how to run,
// check and time each one. The kiln tool and the tests use this list.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime/device.hpp"
#include "kiln/runtime/interpreter.hpp"
#include "kiln/runtime/program.hpp"

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

struct RunOptions {
  std::map<std::string, std::int64_t> dims;    // every Dim of the kernel
  std::map<std::string, std::string> choices;  // every Choice of the kernel
  std::string dtype;
  Device device = Device::cpu();
  std::uint64_t seed = 0;
  bool check = false;
  bool bench = false;
};

struct RunReport {
  std::string plan;               // what the kernel chose for this shape and why, when it chooses
  std::optional<double> error;    // relative error against the reference (when checked)
  double tolerance = 0;           // the largest error accepted for this dtype and shape
  std::optional<double> seconds;  // median time of one launch (when benched)
  double bytes = 0;               // global memory one launch must move at least
  double flops = 0;               // floating-point operations of one launch
  runtime::LaunchStats stats;     // traffic the launch really made
  bool passed() const { return !error || *error <= tolerance; }
};

struct KernelInfo {
  std::string name;
  std::string summary;
  std::vector<Dim> dims;
  std::vector<std::string> dtypes;  // the first is the default
  std::function<RunReport(const RunOptions&)> run;
  std::vector<Choice> choices;
  /// The kernel that computes the same result unfused (several launches), on
  /// the same inputs for the same options; empty when there is none.
  std::string unfused;
};

const std::vector<KernelInfo>& all_kernels();
/// Throws std::invalid_argument "unknown kernel 'x' (known: a, b)".
const KernelInfo& find_kernel(std::string_view name);

/// The kernel's default options with the given --name value flags (dims and
/// choices), dtype and device filled in; throws std::invalid_argument naming a
/// flag the kernel lacks, a value that is not an integer, a size out of range,
/// a value the choice does not accept or a dtype it does not support.
RunOptions make_options(const KernelInfo& kernel, const std::map<std::string, std::string>& flags, std::string dtype,
                        Device device);

/// The options' dims in the kernel's order: "rows=1000 cols=1111".
std::string shape_string(const KernelInfo& kernel, const RunOptions& options);

/// The value of a numeric choice (one whose `values` is empty).
double choice_number(const RunOptions& options, const std::string& name);

}  // namespace kiln::kernels
