// A run's options from the command line's flags, checked against the kernel's spec.
#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "kiln/kernels/kernel_spec.hpp"

namespace kiln::kernels {

namespace {
std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::int64_t parse_size(const KernelSpec& kernel, const Dim& dim, const std::string& text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw std::invalid_argument("--" + dim.name + " needs an integer, got '" + text + "'");
  if (value < dim.min_value || value > (std::int64_t{1} << 31) - 1)
    throw std::invalid_argument(kernel.name + ": --" + dim.name + " must be between " + std::to_string(dim.min_value) +
                                " and 2^31-1, got " + std::to_string(value));
  return value;
}

double parse_probability(const std::string& name, const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0 && value < 1))
    throw std::invalid_argument("--" + name + " needs a number in [0, 1), got '" + text + "'");
  return value;
}

void set_choice(const KernelSpec& kernel, const Choice& choice, const std::string& text, RunOptions& options) {
  if (choice.values.empty()) {
    parse_probability(choice.name, text);
  } else if (std::find(choice.values.begin(), choice.values.end(), text) == choice.values.end()) {
    throw std::invalid_argument(kernel.name + ": --" + choice.name + " does not accept '" + text +
                                "' (accepted: " + joined(choice.values, ", ") + ")");
  }
  options.choices[choice.name] = text;
}
}  // namespace

RunOptions make_options(const KernelSpec& kernel, const std::map<std::string, std::string>& flags, std::string dtype,
                        Device device) {
  RunOptions options;
  options.device = device;
  for (const Dim& d : kernel.dims) options.dims[d.name] = d.default_value;
  for (const Choice& c : kernel.choices) options.choices[c.name] = c.default_value;
  for (const auto& flag : flags) {
    // Named, not a structured binding: clang 14 (the fuzz build) cannot capture those in a lambda.
    const std::string& name = flag.first;
    const std::string& text = flag.second;
    auto dim = std::find_if(kernel.dims.begin(), kernel.dims.end(), [&](const Dim& d) { return d.name == name; });
    auto choice =
        std::find_if(kernel.choices.begin(), kernel.choices.end(), [&](const Choice& c) { return c.name == name; });
    if (dim != kernel.dims.end()) {
      options.dims[name] = parse_size(kernel, *dim, text);
    } else if (choice != kernel.choices.end()) {
      set_choice(kernel, *choice, text, options);
    } else {
      std::vector<std::string> known;
      for (const Dim& d : kernel.dims) known.push_back("--" + d.name);
      for (const Choice& c : kernel.choices) known.push_back("--" + c.name);
      throw std::invalid_argument(kernel.name + " has no parameter --" + name +
                                  " (its parameters: " + joined(known, ", ") + ")");
    }
  }
  if (dtype.empty()) dtype = kernel.dtypes.front();
  if (std::find(kernel.dtypes.begin(), kernel.dtypes.end(), dtype) == kernel.dtypes.end())
    throw std::invalid_argument(kernel.name + " does not support dtype '" + dtype +
                                "' (supported: " + joined(kernel.dtypes, ", ") + ")");
  options.dtype = dtype;
  return options;
}

std::string shape_string(const KernelSpec& kernel, const RunOptions& options) {
  std::vector<std::string> sizes;
  for (const Dim& d : kernel.dims) sizes.push_back(d.name + "=" + std::to_string(options.dims.at(d.name)));
  return joined(sizes, " ");
}

double choice_number(const RunOptions& options, const std::string& name) {
  return parse_probability(name, options.choices.at(name));
}

}  // namespace kiln::kernels
