// `kiln dump`: the code a sample kernel's run launches, at any stage from the
// traced IR to PTX, optionally as one JSON report with compile times, or one
// tile's layout drawn as an SVG picture.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "commands.hpp"
#include "kiln/dsl/launch_recorder.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/kernels/registry.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/compile_cache.hpp"
#include "kiln/runtime/cuda/target.hpp"
#include "layout_picture.hpp"
#include "svg.hpp"

namespace kiln::tool {

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Runs the kernel with launches recorded, not run. The buffers live on
/// `cpu:<sms>` (DumpCommand): a plan sized by the device's parallelism
/// (compute_units) is then the one made for a GPU with that many SMs.
struct Recorded {
  std::vector<LaunchRecorder::Launch> launches;
  std::vector<LaunchRecorder::Compile> compiles;
};

Recorded record_launches(const kernels::KernelInfo& kernel, const kernels::RunOptions& options) {
  LaunchRecorder recorder;
  kernel.run(options);
  if (recorder.launches.empty()) throw std::runtime_error("kernel " + kernel.name + " launched nothing");
  return {recorder.launches, recorder.compiles};
}

std::string grid_string(const std::array<int, 3>& grid) {
  return fmt::format("({}, {}, {})", grid[0], grid[1], grid[2]);
}

/// The compile cache's time to find a compiled kernel it holds on disk, as a
/// new process would: the key (the traced IR) printed and hashed, the entry read.
double warm_cache_milliseconds(const runtime::Program& program, const lowering::GpuTarget& target,
                               const std::string& payload) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / fmt::format("kiln-dump-cache-{}", ::getpid());
  const std::string image = "ptx " + target.arch;
  runtime::CompileCache(directory).get_or_compile(cuda::cache_key(program, target, image), [&] { return payload; });
  const Clock::time_point start = Clock::now();
  runtime::CompileCache fresh(directory);
  fresh.get_or_compile(cuda::cache_key(program, target, image), [&]() -> std::string {
    throw std::runtime_error("kiln dump: the compile cache in " + directory.string() + " lost its entry");
  });
  const double milliseconds = milliseconds_since(start);
  std::filesystem::remove_all(directory);
  return milliseconds;
}

nlohmann::json facts_json(const ir::Function& fn) {
  nlohmann::json facts = nlohmann::json::array();
  for (const ir::ArgumentFacts& f : fn.argument_facts)
    facts.push_back({{"divisibility", f.divisibility}, {"equal_to_1", f.equal_to_1}});
  return facts;
}

/// One JSON object: the kernel, its options, the kernels it traced and each
/// launch with its PTX and the time of every step from trace to PTX.
nlohmann::json report(const kernels::KernelInfo& kernel, const DumpCommand& command, const Recorded& recorder) {
  const kernels::RunOptions& options = command.run.options;
  nlohmann::json j;
  j["kernel"] = kernel.name;
  j["dtype"] = options.dtype;
  j["shape"] = options.dims;
  j["choices"] = options.choices;
  j["arch"] = command.arch;
  j["sms"] = command.sms;
  j["traced"] = nlohmann::json::array();
  for (const LaunchRecorder::Compile& c : recorder.compiles)
    j["traced"].push_back({{"name", c.name}, {"trace_ms", c.milliseconds}});
  j["launches"] = nlohmann::json::array();
  for (const LaunchRecorder::Launch& launch : recorder.launches) {
    const runtime::Program& program = *launch.program;
    const lowering::GpuTarget target = cuda::target_for(program, command.arch);
    const Clock::time_point start = Clock::now();
    const ir::Function& optimized = program.optimized();
    const double passes_ms = milliseconds_since(start);
    const lowering::GpuKernel gpu = lowering::compile_for_gpu(optimized, target, {.keep_llvm_ir = false});
    const double lower_ms = milliseconds_since(start) - passes_ms;
    nlohmann::json passes = nlohmann::json::object();
    for (const lowering::PassTime& p : gpu.pass_times) passes[p.pass] = p.milliseconds;
    j["launches"].push_back({{"name", program.display_name()},
                             {"entry", gpu.name},
                             {"num_warps", target.num_warps},
                             {"threads_per_block", gpu.threads_per_block},
                             {"shared_bytes", gpu.shared_bytes},
                             {"grid", launch.grid},
                             {"argument_facts", facts_json(optimized)},
                             {"specialize_ms", launch.specialize_milliseconds},
                             {"ir_passes_ms", passes_ms},
                             {"lower_to_ptx_ms", lower_ms},
                             {"pass_ms", passes},
                             {"warm_cache_ms", warm_cache_milliseconds(program, target, gpu.ptx)},
                             {"ptx", gpu.ptx}});
  }
  return j;
}

/// Draws the layout of the value command.value (or the first tile the
/// layout stage lists) of launch command.launch into command.svg.
void draw_layout(const kernels::KernelInfo& kernel, const DumpCommand& command, const Recorded& recorder) {
  if (command.launch >= static_cast<int>(recorder.launches.size()))
    throw std::invalid_argument(fmt::format("--launch {}: the run of {} makes {} launch{} (0 to {})", command.launch,
                                            kernel.name, recorder.launches.size(),
                                            recorder.launches.size() == 1 ? "" : "es", recorder.launches.size() - 1));
  const LaunchRecorder::Launch& launch = recorder.launches[static_cast<std::size_t>(command.launch)];
  const ir::Function& fn = launch.program->optimized();
  const lowering::GpuTarget target = cuda::target_for(*launch.program, command.arch);
  const lowering::LayoutMap layouts = lowering::assign_layouts(fn, lowering::analyze_axes(fn), target);
  // The tiles in the layout stage's order: region arguments, then results.
  std::vector<const ir::Value*> tiles;
  ir::walk(fn.body, [&](ir::Operation& op) {
    for (const auto& region : op.regions)
      for (const ir::Value* argument : region->arguments)
        if (layouts.find(*argument)) tiles.push_back(argument);
    for (const ir::Value* result : op.results)
      if (layouts.find(*result)) tiles.push_back(result);
  });
  if (tiles.empty()) throw std::invalid_argument("kernel " + fn.name + " has no tile to draw");
  const ir::Value* chosen = tiles.front();
  if (command.value >= 0) {
    auto found = std::find_if(tiles.begin(), tiles.end(), [&](const ir::Value* v) { return v->id == command.value; });
    if (found == tiles.end())
      throw std::invalid_argument(
          fmt::format("--value %{}: kernel {} has no tile %{} (its first tile is %{}; see "
                      "kiln dump {} --stage layout)",
                      command.value, fn.name, command.value, tiles.front()->id, kernel.name));
    chosen = *found;
  }
  const std::string title = fmt::format("%{} : {} in {}, {} warp{}, {}", chosen->id, ir::to_string(chosen->type),
                                        fn.name, target.num_warps, target.num_warps == 1 ? "" : "s", command.arch);
  write_picture(command.svg, layout_svg(layouts.at(*chosen), title));
  fmt::print("drew the layout of %{} ({}) in {} into {}\n", chosen->id, ir::to_string(chosen->type), fn.name,
             command.svg);
}

}  // namespace

int execute(const DumpCommand& command) {
  const kernels::KernelInfo& kernel = kernels::find_kernel(command.run.kernel);
  const Recorded recorder = record_launches(kernel, command.run.options);
  if (!command.svg.empty()) {
    draw_layout(kernel, command, recorder);
    return 0;
  }
  if (command.json) {
    std::cout << report(kernel, command, recorder).dump() << "\n";
    return 0;
  }
  for (const LaunchRecorder::Launch& launch : recorder.launches) {
    const runtime::Program& program = *launch.program;
    if (command.stage == "ir" || command.stage == "opt") {
      std::cout << ir::print(command.stage == "ir" ? program.traced() : program.optimized(),
                             {.locations = command.locations});
      continue;
    }
    lowering::LoweringOptions lowering;
    lowering.log = &std::cout;
    if (command.stage == "layout") lowering.dump_after = "layouts";
    const lowering::GpuKernel gpu =
        lowering::compile_for_gpu(program.optimized(), cuda::target_for(program, command.arch), lowering);
    if (command.stage == "llvm") std::cout << gpu.llvm_ir;
    // The PTX declares its shared memory without a size, and the launch's
    // warps and grid are not in it: say them, as PTX comments.
    if (command.stage == "ptx")
      std::cout << gpu.ptx
                << fmt::format("// {}: {} warps, grid {}\n", gpu.name, program.options().num_warps,
                               grid_string(launch.grid))
                << "// " << gpu.name << ": " << gpu.shared_bytes << " bytes of dynamic shared memory per program\n";
  }
  return 0;
}

}  // namespace kiln::tool
