// The GPU lowering pipeline, read top to bottom as the pass list of
// docs/architecture.md ("The GPU lowering"): verify, axis analysis, layouts, target, LLVM
// codegen, libdevice linking, O3, PTX. Each step is timed and dumped on request (KILN_DUMP=<pass>
// or `all`, like ir::optimize's passes).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "codegen.hpp"
#include "kiln/ir/verifier.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/layout_conversion.hpp"
#include "kiln/lowering/rematerialize.hpp"
#include "kiln/lowering/shared_rings.hpp"

namespace kiln::lowering {

namespace {

/// Times the steps, records them in the kernel and prints what was asked for.
class PassRunner {
 public:
  PassRunner(const LoweringOptions& options, GpuKernel& kernel)
      : options_(options), kernel_(kernel), log_(options.log ? *options.log : std::cerr) {
    dump_ = options.dump_after;
    if (dump_.empty())
      if (const char* env = std::getenv("KILN_DUMP")) dump_ = env;
  }

  /// Runs `step`, then prints `describe()` when `name` is to be dumped.
  template <typename Step, typename Describe>
  void run(const char* name, Step step, Describe describe) {
    const auto start = std::chrono::steady_clock::now();
    step();
    const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    kernel_.pass_times.push_back({name, elapsed.count()});
    if (options_.timing) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.2f", elapsed.count());
      log_ << "gpu pass " << name << ": " << ms << " ms\n";
    }
    if (dump_ == "all" || dump_ == name) log_ << "// after " << name << "\n" << describe();
  }

 private:
  const LoweringOptions& options_;
  GpuKernel& kernel_;
  std::ostream& log_;
  std::string dump_;
};

std::string describe_axes(const ir::Function& fn, const AxisInfoMap& axes) {
  std::ostringstream out;
  auto line = [&](const ir::Value* v) {
    if (const AxisInfo* info = axes.find(*v)) out << "%" << v->id << ": " << to_string(*info) << "\n";
  };
  for (const ir::Value* argument : fn.body.arguments) line(argument);
  for (const auto& op : fn.body.ops)
    for (const ir::Value* result : op->results) line(result);
  return out.str();
}

/// A conversion's mechanism and its cost: the shuffles each thread issues
/// (and whether threads pick among their registers around them), or the
/// program's scratch bytes and two barriers of a trip through shared memory.
std::string describe_conversion(const LayoutConversion& conversion) {
  const ConversionKind kind = planned_conversion_kind(conversion);
  std::string text(to_string(kind));
  if (kind == ConversionKind::warp_shuffle) {
    const ShufflePlan plan = *plan_warp_shuffle(conversion.from, conversion.to);
    text += ", " + std::to_string(plan.shuffles()) + (plan.shuffles() == 1 ? " shuffle" : " shuffles");
    if (plan.picks_registers()) text += " with selects";
  }
  if (kind == ConversionKind::shared_memory) {
    const std::int64_t bytes =
        (std::int64_t{1} << conversion.from.total_out_bits()) * conversion.value->type.element_bytes();
    text += ", " + std::to_string(bytes) + " bytes, 2 barriers";
  }
  return text;
}

std::string describe_layouts(const ir::Function& fn, const AxisInfoMap& axes, const LayoutMap& layouts,
                             const GpuTarget& target) {
  std::ostringstream out;
  auto line = [&](const ir::Value* v) {
    if (const LinearLayout* layout = layouts.find(*v))
      out << "%" << v->id << " : " << ir::to_string(v->type) << "\n" << *layout << "\n";
  };
  ir::walk(fn.body, [&](ir::Operation& op) {
    for (const auto& region : op.regions)
      for (const ir::Value* argument : region->arguments) line(argument);
    for (const ir::Value* result : op.results) line(result);
  });
  // The conversions in program order of their users.
  ir::walk(fn.body, [&](ir::Operation& op) {
    for (const ir::Value* operand : op.operands)
      if (const LayoutConversion* conversion = layouts.conversion(op, *operand))
        out << "convert %" << operand->id << " (" << ir::to_string(operand->type) << ") for `"
            << ir::op_info(op.code).name << "` at " << op_place(op) << ": " << describe_conversion(*conversion) << "\n";
  });
  out << describe_shared_rings(plan_shared_rings(fn, axes, layouts, target));
  return out.str();
}

}  // namespace

GpuKernel compile_for_gpu(const ir::Function& optimized, const GpuTarget& target, const LoweringOptions& options) {
  GpuKernel kernel;
  kernel.name = ptx_identifier(optimized.name);
  kernel.threads_per_block = target.num_warps * 32;
  if (target.max_registers != 0 && (target.max_registers < kMinMaxRegisters || target.max_registers > kMaxRegisters))
    throw LoweringError("kernel @" + optimized.name + ": max_registers is " + std::to_string(target.max_registers) +
                        ", expected 0 (ptxas chooses) or " + std::to_string(kMinMaxRegisters) + " to " +
                        std::to_string(kMaxRegisters));
  PassRunner passes(options, kernel);
  auto nothing = [] { return std::string(); };

  passes.run("verify", [&] { ir::verify(optimized); }, nothing);
  if (options.stop_after == "verify") return kernel;

  AxisInfoMap axes;
  passes.run("axes", [&] { axes = analyze_axes(optimized); }, [&] { return describe_axes(optimized, axes); });
  if (options.stop_after == "axes") return kernel;

  LayoutMap layouts;
  passes.run(
      "layouts", [&] { layouts = assign_layouts(optimized, axes, target); },
      [&] { return describe_layouts(optimized, axes, layouts, target); });
  if (options.stop_after == "layouts") return kernel;

  std::unique_ptr<llvm::TargetMachine> machine;
  passes.run("target", [&] { machine = create_target_machine(target); }, nothing);

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  passes.run(
      "codegen",
      [&] {
        module = generate_llvm_module(optimized, axes, layouts, target, context, *machine);
        kernel.shared_bytes = shared_memory_bytes(*module);
        if (options.keep_llvm_ir) kernel.llvm_ir = to_string(*module);
      },
      [&] { return to_string(*module); });
  if (options.stop_after == "codegen") return kernel;

  passes.run("libdevice", [&] { link_libdevice(*module); }, nothing);

  passes.run(
      "o3",
      [&] {
        optimize_module(*module, *machine);
        if (options.keep_llvm_ir) kernel.optimized_llvm_ir = to_string(*module);
      },
      [&] { return to_string(*module); });
  if (options.stop_after == "o3") return kernel;

  passes.run("ptx", [&] { kernel.ptx = emit_ptx(*module, *machine); }, [&] { return kernel.ptx; });
  return kernel;
}

}  // namespace kiln::lowering
