// Tracing a kernel function into a verified, optimized program.
#include "kiln/dsl/kernel.hpp"

#include <bit>
#include <cstdlib>
#include <string_view>

#include "kiln/ir/passes.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln {

std::string CompileOptions::key() const {
  return std::to_string(num_warps) + "/" + std::to_string(num_stages) + "/" + std::to_string(max_registers) + "/" +
         (optimize ? "O" : "-") + "/" + (specialize ? "S" : "-") + "/" + dump_after + "/" + (timing ? "t" : "-");
}

namespace detail {

namespace {
// "kernels::vector_add<1024>" -> "vector_add".
std::string ir_name(std::string_view display) {
  auto end = display.find('<');
  std::string_view base = display.substr(0, end);
  auto colon = base.rfind(':');
  if (colon != std::string_view::npos) base = base.substr(colon + 1);
  return std::string(base);
}
}  // namespace

std::unique_ptr<ir::Function> trace_function(std::string_view display_name, const std::vector<ir::Type>& params,
                                             const std::function<void(const std::vector<ir::Value*>&)>& body,
                                             std::vector<std::string> parameter_names) {
  TraceContext ctx(ir_name(display_name));
  std::vector<ir::Value*> args;
  for (const ir::Type& t : params) args.push_back(ctx.function().add_argument(ctx.function().body, t));
  ctx.function().argument_names = std::move(parameter_names);
  body(args);
  ctx.check_deferred();
  auto traced = ctx.take_function();
  try {
    ir::verify(*traced);
  } catch (const ir::IRError& e) {
    throw TraceError("kernel " + traced->name + ": traced IR is invalid: " + e.what());
  }
  return traced;
}

std::shared_ptr<const runtime::Program> build_program(std::string_view display_name,
                                                      const std::vector<ir::Type>& params,
                                                      std::vector<std::string> parameter_names,
                                                      const std::function<void(const std::vector<ir::Value*>&)>& body,
                                                      const CompileOptions& options) {
  // Checked here, so that every device refuses what the GPU's cannot compile.
  const std::string kernel = "kernel " + ir_name(display_name) + ": ";
  if (options.num_warps < 1 || options.num_warps > 32 || std::popcount(static_cast<unsigned>(options.num_warps)) != 1)
    throw TraceError(kernel + "CompileOptions::num_warps must be a power of two from 1 to 32, got " +
                     std::to_string(options.num_warps));
  if (options.num_stages < 1)
    throw TraceError(kernel + "CompileOptions::num_stages must be at least 1 (1 turns pipelining off), got " +
                     std::to_string(options.num_stages));
  auto traced = trace_function(display_name, params, body, std::move(parameter_names));
  runtime::ProgramOptions program;
  program.specialize = options.specialize;
  program.num_warps = options.num_warps;
  program.num_stages = options.num_stages;
  program.max_registers = options.max_registers;
  if (options.optimize) {
    ir::PipelineOptions& pipeline = program.passes.emplace();
    pipeline.dump_after = options.dump_after;
    pipeline.timing = options.timing;
    // KILN_DUMP=<pass>|all and KILN_PASS_TIMING=1 ask for the same from outside the program.
    if (const char* dump = std::getenv("KILN_DUMP"); dump && pipeline.dump_after.empty()) pipeline.dump_after = dump;
    if (const char* timing = std::getenv("KILN_PASS_TIMING"); timing && std::string_view(timing) == "1")
      pipeline.timing = true;
  } else {
    program.passes.reset();
  }
  const bool shows_passes = program.passes && (!program.passes->dump_after.empty() || program.passes->timing);
  auto built = std::make_shared<runtime::Program>(std::move(traced), std::string(display_name), std::move(program));
  // The passes run on the first use of the optimized IR, which a launch whose
  // kernel the compile cache holds never makes; asked to show them, they run now.
  if (shows_passes) built->optimized();
  return built;
}

void fail_argument_range(std::string_view kernel, const std::string& parameter, std::string_view dtype,
                         std::string_view value) {
  throw std::invalid_argument("launch " + std::string(kernel) + ": " + parameter + ": the value " + std::string(value) +
                              " does not fit in " + std::string(dtype));
}

}  // namespace detail
}  // namespace kiln
