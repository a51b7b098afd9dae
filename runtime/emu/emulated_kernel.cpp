// The emu device's CompiledKernel: the code generator's module (stopped after
// `codegen`, no O3 and PTX) parsed in its own LLVMContext, retargeted, JIT
// compiled; a launch hands programs from one counter to host threads, each
// running them one at a time with its own CTA scheduler.
#include "emulated_kernel.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/SourceMgr.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include "../src/footprint_counter.hpp"
#include "cta_scheduler.hpp"
#include "floating_point_mode.hpp"
#include "jit.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/launch_progress.hpp"
#include "retarget_module.hpp"

namespace kiln::runtime::emu {

namespace {

/// The architecture the emu takes the code generator's output for: sm_80
/// (mma.sync and cp.async, no sm_90a-only instructions without hooks).
constexpr const char* kEmulatedArch = "sm_80";

class EmulatedKernel final : public CompiledKernel {
 public:
  EmulatedKernel(KernelDescription description, std::unique_ptr<JitCode> code)
      : description_(std::move(description)), code_(std::move(code)) {}

  LaunchStats launch(const Device& device, Grid grid, std::span<const KernelArgument> args) const override {
    if (args.size() != description_.argument_types.size())
      throw std::invalid_argument("kernel " + description_.name + ": takes " +
                                  std::to_string(description_.argument_types.size()) + " arguments, launched with " +
                                  std::to_string(args.size()));
    std::vector<std::uint64_t> words;
    for (const KernelArgument& argument : args) words.push_back(argument.bits);
    std::optional<FootprintCounter> footprints;
    if (FootprintCounting::on()) footprints.emplace(args, description_.argument_types);
    const LaunchContext context{&description_, grid, args, footprints ? &*footprints : nullptr};
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
    LaunchProgressCounter progress(description_.name, total);
    auto work = [&] {
      const FloatingPointMode mode;
      try {
        CtaScheduler scheduler(context, code_->entry(), words.data());
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
    if (footprints) stats.footprints = footprints->footprints(description_.name, args, description_.argument_names);
    return stats;
  }

 private:
  KernelDescription description_;
  std::unique_ptr<JitCode> code_;
};

KernelDescription describe(const ir::Function& fn, int num_warps) {
  KernelDescription description;
  description.name = fn.name;
  for (std::size_t i = 0; i < fn.body.arguments.size(); ++i) {
    description.argument_types.push_back(fn.body.arguments[i]->type);
    const bool named = i < fn.argument_names.size() && !fn.argument_names[i].empty();
    description.argument_names.push_back(named ? fn.argument_names[i] : "%" + std::to_string(fn.body.arguments[i]->id));
  }
  description.threads_per_program = num_warps * lowering::kLanesPerWarp;
  return description;
}

}  // namespace

std::unique_ptr<CompiledKernel> compile_for_emu(const Program& program, const EmuMachine& machine) {
  lowering::GpuTarget target;
  target.arch = kEmulatedArch;
  target.num_warps = program.options().num_warps;
  lowering::LoweringOptions options;
  options.stop_after = "codegen";
  const lowering::GpuKernel gpu = lowering::compile_for_gpu(program.optimized(), target, options);
  return compile_llvm_ir_for_emu(gpu.llvm_ir, gpu.name, program.optimized(), target.num_warps, machine);
}

std::unique_ptr<CompiledKernel> compile_llvm_ir_for_emu(const std::string& llvm_ir, const std::string& function,
                                                        const ir::Function& kernel, int num_warps,
                                                        const EmuMachine& machine) {
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseIR(llvm::MemoryBufferRef(llvm_ir, function), diagnostic, *context);
  if (!module)
    throw lowering::LoweringError("emu: kernel " + kernel.name + ": its LLVM IR does not parse: line " +
                                  std::to_string(diagnostic.getLineNo()) + ": " + diagnostic.getMessage().str());
  KernelDescription description = describe(kernel, num_warps);
  const HostTarget host = host_target();
  retarget_module(*module, function, host.triple, host.layout, description);
  auto code = std::make_unique<JitCode>(std::move(context), std::move(module), machine);
  return std::make_unique<EmulatedKernel>(std::move(description), std::move(code));
}

}  // namespace kiln::runtime::emu
