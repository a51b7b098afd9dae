// The kiln tool's subcommands list, run, bench, info and help (dump: dump.cpp).
#include "commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <thread>

#include "bench_chart.hpp"
#include "compare_chart.hpp"
#include "kiln/kernels/registry.hpp"
#include "kiln/runtime/compile_cache.hpp"
#include "kiln/runtime/cuda/driver.hpp"
#include "kiln/runtime/cuda/ptxas.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/runtime/emu_machine.hpp"
#include "progress_line.hpp"
#include "svg.hpp"

namespace kiln::tool {

namespace {
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

int execute(const HelpCommand& command) {
  std::cout << command.text;
  return 0;
}

int execute(const ListCommand&) {
  for (const kernels::KernelInfo& k : kernels::all_kernels()) {
    std::string params;
    for (const kernels::Dim& d : k.dims) params += fmt::format(" --{} {}", d.name, d.default_value);
    for (const kernels::Choice& c : k.choices) params += fmt::format(" --{} {}", c.name, c.default_value);
    fmt::print("{:<24} {}\n{:<24} params:{}  dtypes: {}\n", k.name, k.summary, "", params, fmt::join(k.dtypes, ","));
    if (!k.unfused.empty()) fmt::print("{:<24} unfused: {}\n", "", k.unfused);
  }
  return 0;
}

namespace {
std::string human_megabytes(std::uint64_t bytes) { return fmt::format("{:.3f} MB", static_cast<double>(bytes) / 1e6); }

std::uint64_t traffic(const kernels::RunReport& report) { return report.stats.bytes_read + report.stats.bytes_written; }

nlohmann::json report_json(const kernels::KernelInfo& kernel, const kernels::RunOptions& options,
                           const kernels::RunReport& report) {
  nlohmann::json j;
  j["kernel"] = kernel.name;
  j["device"] = options.device.name();
  j["dtype"] = options.dtype;
  j["shape"] = options.dims;
  j["choices"] = options.choices;
  j["seed"] = options.seed;
  j["plan"] = report.plan;
  j["bytes_read"] = report.stats.bytes_read;
  j["bytes_written"] = report.stats.bytes_written;
  j["footprints"] = nlohmann::json::array();
  for (const runtime::BufferFootprint& f : report.stats.footprints)
    j["footprints"].push_back({{"kernel", f.kernel},
                               {"argument", f.argument},
                               {"bytes_read", f.bytes_read},
                               {"bytes_written", f.bytes_written}});
  j["check_error"] = report.error ? nlohmann::json(*report.error) : nlohmann::json(nullptr);
  j["tolerance"] = report.tolerance;
  j["passed"] = report.passed();
  j["time_s"] = report.seconds ? nlohmann::json(*report.seconds) : nlohmann::json(nullptr);
  j["throughput_gb_s"] =
      report.seconds ? nlohmann::json(report.bytes / *report.seconds / 1e9) : nlohmann::json(nullptr);
  return j;
}

/// "192 B", "55.3 kB", "0.301 MB".
std::string human_size(std::uint64_t bytes) {
  if (bytes < 1000) return fmt::format("{} B", bytes);
  if (bytes < 1000000) return fmt::format("{:.1f} kB", static_cast<double>(bytes) / 1e3);
  return human_megabytes(bytes);
}

/// The bytes the launches moved, then the distinct bytes of each buffer
/// each launch read and wrote: the compulsory traffic they add up to.
void print_stats(const runtime::LaunchStats& stats) {
  const std::uint64_t moved = stats.bytes_read + stats.bytes_written;
  fmt::print("  stats: {} read, {} written, {} in all\n", human_megabytes(stats.bytes_read),
             human_megabytes(stats.bytes_written), human_megabytes(moved));
  if (stats.footprints.empty()) return;
  fmt::print("  distinct bytes of each buffer, launch by launch:\n");
  std::size_t width = 0;
  for (const runtime::BufferFootprint& f : stats.footprints) width = std::max(width, f.kernel.size());
  std::uint64_t read = 0, written = 0;
  for (const runtime::BufferFootprint& f : stats.footprints) {
    if (f.bytes_read + f.bytes_written == 0) continue;
    read += f.bytes_read;
    written += f.bytes_written;
    std::string what;
    if (f.bytes_read) what = human_size(f.bytes_read) + " read";
    if (f.bytes_written) what += (what.empty() ? "" : ", ") + human_size(f.bytes_written) + " written";
    fmt::print("    {:<{}}  {:<12} {}\n", f.kernel, width, f.argument, what);
  }
  const std::uint64_t compulsory = read + written;
  fmt::print("  compulsory: {} read, {} written, {} in all; the launches moved {:.2f}x that\n", human_megabytes(read),
             human_megabytes(written), human_megabytes(compulsory),
             compulsory ? static_cast<double>(moved) / static_cast<double>(compulsory) : 0.0);
}

std::string choices_string(const kernels::RunOptions& options) {
  std::string out;
  for (const auto& [name, value] : options.choices) out += fmt::format(" {}={}", name, value);
  return out;
}
}  // namespace

int execute(const RunCommand& command) {
  const kernels::KernelInfo& kernel = kernels::find_kernel(command.run.kernel);
  const kernels::RunOptions& options = command.run.options;
  const Device& device = options.device;
  const runtime::FootprintCounting counting(command.stats);
  ProgressLine progress(!command.json);
  progress.stage("run " + kernel.name);
  kernels::RunReport report = kernel.run(options);
  progress.clear();

  if (command.json) {
    std::cout << report_json(kernel, options, report).dump() << "\n";
  } else {
    fmt::print("{} {}{} {} on {}\n", kernel.name, kernels::shape_string(kernel, options), choices_string(options),
               options.dtype, device.name());
    if (!report.plan.empty()) fmt::print("  plan: {}\n", report.plan);
    if (report.error)
      fmt::print("  check: relative error {:.3g} (tolerance {:.3g}) {}\n", *report.error, report.tolerance,
                 report.passed() ? "ok" : "FAILED");
    if (report.seconds)
      fmt::print("  bench: {} per launch, {} ({:.3g} MB moved)\n", human_seconds(*report.seconds),
                 human_bytes_per_second(report.bytes / *report.seconds), report.bytes / 1e6);
    if (command.stats && device.kind() == Device::Kind::cuda)
      fmt::print("  stats: not counted on {} (a GPU does not count the bytes its loads and stores move)\n",
                 device.name());
    else if (command.stats) print_stats(report.stats);
    if (!report.error && !report.seconds && !command.stats)
      fmt::print(
          "  ran; add --check to compare with the reference, --bench to time it, --stats for its memory traffic\n");
  }
  return report.passed() ? 0 : 1;
}

int execute(const BenchCommand& command) {
  auto timed = [](const kernels::KernelInfo& kernel, kernels::RunOptions options) {
    options.bench = true;
    return kernel.run(options);
  };
  // Read before the suite runs, so that a bad file stops it at once.
  const std::optional<BenchChart> compared =
      command.compare.empty() ? std::nullopt : std::optional(compare_chart(command.compare));
  ProgressLine progress(!command.json);
  BenchChart chart{
      .title = fmt::format("kiln bench --suite {} on {}", command.suite, command.runs.front().options.device.name()),
      .subtitle = "time per launch, every bar from this one run; ratios are to each kernel's first bar",
      .series = {"kiln kernel", "its unfused sequence (the same result in several launches)"},
      .groups = {}};
  for (std::size_t i = 0; i < command.runs.size(); ++i) {
    const KernelRun& run = command.runs[i];
    const kernels::KernelInfo& kernel = kernels::find_kernel(run.kernel);
    const kernels::RunOptions& options = run.options;
    const std::string done = fmt::format("bench {}/{} kernels", i, command.runs.size());
    progress.stage(fmt::format("{}: {}", done, kernel.name));
    const kernels::RunReport report = timed(kernel, options);
    chart.groups.push_back({fmt::format("{} {}", kernel.name, options.dtype), {{0, kernel.name, *report.seconds}}});
    if (&run == &command.runs.front() && !command.json)
      fmt::print("{:<24} {:<10} {:>12} {:>12}  {}\n", "kernel", "dtype", "time", "traffic", "fused vs unfused");
    nlohmann::json j = report_json(kernel, options, report);
    std::string comparison;
    if (!kernel.unfused.empty()) {
      // The unfused sequence takes the fused kernel's dims and choices.
      const kernels::KernelInfo& unfused = kernels::find_kernel(kernel.unfused);
      progress.stage(fmt::format("{}: {}", done, unfused.name));
      const kernels::RunReport unfused_report = timed(unfused, options);
      chart.groups.back().bars.push_back({1, unfused.name, *unfused_report.seconds});
      const double speedup = *unfused_report.seconds / *report.seconds;
      j["unfused"] = report_json(unfused, options, unfused_report);
      j["speedup"] = speedup;
      if (traffic(report) > 0) {
        const double traffic_ratio =
            static_cast<double>(traffic(unfused_report)) / static_cast<double>(traffic(report));
        comparison =
            fmt::format("speed-up {:.2f}x, {:.2f}x less traffic than {} ({}, {})", speedup, traffic_ratio, unfused.name,
                        human_seconds(*unfused_report.seconds), human_megabytes(traffic(unfused_report)));
        j["traffic_ratio"] = traffic_ratio;
      } else {  // a GPU does not count traffic
        comparison =
            fmt::format("speed-up {:.2f}x over {} ({})", speedup, unfused.name, human_seconds(*unfused_report.seconds));
        j["traffic_ratio"] = nullptr;
      }
    }
    progress.clear();
    if (command.json) std::cout << j.dump() << "\n";
    else
      fmt::print("{:<24} {:<10} {:>12} {:>12}  {}\n", kernel.name, options.dtype, human_seconds(*report.seconds),
                 traffic(report) > 0 ? human_megabytes(traffic(report)) : "-", comparison);
  }
  if (!command.svg.empty()) {
    std::vector<BenchChart> charts = {chart};
    if (compared) charts.push_back(*compared);
    write_picture(command.svg, bench_chart_svg(charts));
    if (!command.json) fmt::print("drew the timings of {} kernels into {}\n", chart.groups.size(), command.svg);
  }
  return 0;
}

int execute(const InfoCommand&) {
  fmt::print("kiln {}\n", KILN_VERSION);
  fmt::print("LLVM {} (for the GPU code generator)\n", KILN_LLVM_VERSION);
  std::string devices;
  for (const std::string& d : Device::available()) devices += (devices.empty() ? "" : ", ") + d;
  fmt::print("devices: {} (default: {})\n", devices, Device::default_device().name());
  fmt::print("cpu: {} hardware threads\n", std::thread::hardware_concurrency());
  fmt::print("emu: compiles for {}\n", runtime::describe_emu_machine());
  try {
    const std::optional<std::filesystem::path> ptxas = cuda::find_ptxas();
    fmt::print("ptxas: {}\n", ptxas ? ptxas->string() + " (cuda loads cubins built for the exact GPU)"
                                    : std::string("none (the CUDA driver compiles the PTX)"));
  } catch (const std::runtime_error& error) {
    fmt::print("ptxas: {}\n", error.what());
  }
  const std::filesystem::path cache = runtime::CompileCache::default_directory();
  fmt::print("compile cache: {}, keys hold the compiler sources' hash {}\n",
             cache.empty() ? std::string("memory only") : cache.string(), runtime::compiler_sources_hash());
  const cuda::ProbeResult cuda = cuda::probe();
  std::string_view message = cuda.message;
  if (message.starts_with("cuda: ")) message.remove_prefix(6);
  fmt::print("cuda: {}{}\n", cuda.available ? "" : "unavailable, ", message);
  fmt::print("kernels: {}\n", kernels::all_kernels().size());
  return 0;
}

}  // namespace kiln::tool
