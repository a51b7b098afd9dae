// The sample kernels by name: their specs (kernel_spec.hpp), and how to run,
// check and time each one. The kiln tool and the tests use this list.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/kernels/kernel_spec.hpp"
#include "kiln/runtime/interpreter.hpp"
#include "kiln/runtime/program.hpp"

namespace kiln::kernels {

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

/// A kernel's spec (kernel_spec.hpp) and how to run it.
struct KernelInfo : KernelSpec {
  std::function<RunReport(const RunOptions&)> run;
};

const std::vector<KernelInfo>& all_kernels();
/// Throws std::invalid_argument "unknown kernel 'x' (known: a, b)".
const KernelInfo& find_kernel(std::string_view name);

}  // namespace kiln::kernels
