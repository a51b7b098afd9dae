// Running a compiled emu kernel over a grid: programs handed from one counter
// to host threads, each running them one at a time with its own CTA
// scheduler; the first fault ends the launch.
#include "emu_launch.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "../src/footprint_counter.hpp"
#include "cta_scheduler.hpp"
#include "floating_point_mode.hpp"
#include "kiln/ir/parameter_label.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/launch_progress.hpp"

namespace kiln::runtime::emu {

KernelDescription describe_kernel(const ir::Function& fn, int num_warps) {
  KernelDescription description;
  description.name = fn.name;
  for (std::size_t i = 0; i < fn.body.arguments.size(); ++i) {
    description.argument_types.push_back(fn.body.arguments[i]->type);
    description.argument_names.push_back(ir::parameter_label(fn, i));
  }
  description.threads_per_program = num_warps * lowering::kLanesPerWarp;
  return description;
}

LaunchStats launch_emulated(const KernelDescription& description, KernelEntry entry, const Device& device, Grid grid,
                            std::span<const KernelArgument> args) {
  if (args.size() != description.argument_types.size())
    throw std::invalid_argument("kernel " + description.name + ": takes " +
                                std::to_string(description.argument_types.size()) + " arguments, launched with " +
                                std::to_string(args.size()));
  std::vector<std::uint64_t> words;
  for (const KernelArgument& argument : args) words.push_back(argument.bits);
  std::optional<FootprintCounter> footprints;
  if (FootprintCounting::on()) footprints.emplace(args, description.argument_types);
  const LaunchContext context{&description, grid, args, footprints ? &*footprints : nullptr};
  const std::int64_t total = static_cast<std::int64_t>(grid[0]) * grid[1] * grid[2];
  int threads =
      device.threads() > 0 ? device.threads() : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::int64_t>(threads, total));

  std::atomic<std::int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::string first_fault;
  std::exception_ptr first_error;
  LaunchStats stats;
  LaunchProgressCounter progress(description.name, total);
  auto work = [&] {
    const FloatingPointMode mode;
    try {
      CtaScheduler scheduler(context, entry, words.data());
      while (!stop.load(std::memory_order_relaxed)) {
        const std::int64_t id = next.fetch_add(1, std::memory_order_relaxed);
        if (id >= total) break;
        const std::array<int, 3> program = {static_cast<int>(id % grid[0]), static_cast<int>(id / grid[0] % grid[1]),
                                            static_cast<int>(id / (static_cast<std::int64_t>(grid[0]) * grid[1]))};
        if (!scheduler.run(program)) {
          stop.store(true, std::memory_order_relaxed);
          std::lock_guard lock(mutex);
          if (first_fault.empty() && !first_error) first_fault = scheduler.fault_message();
          break;
        }
        progress.add(1);
      }
      std::lock_guard lock(mutex);
      stats += scheduler.stats();
    } catch (...) {
      stop.store(true, std::memory_order_relaxed);
      std::lock_guard lock(mutex);
      if (first_fault.empty() && !first_error) first_error = std::current_exception();
    }
  };
  if (threads == 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  }
  if (first_error) std::rethrow_exception(first_error);
  if (!first_fault.empty()) throw KernelError(first_fault);
  if (footprints) stats.footprints = footprints->footprints(description.name, args, description.argument_names);
  return stats;
}

}  // namespace kiln::runtime::emu
