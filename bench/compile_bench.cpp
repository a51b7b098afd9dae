// Compile latency of kiln's GPU path, stage by stage, against nvcc in the
// same run. For vector_add, softmax and the tiled layer norm forward:
//   trace        the C++ kernel function traced into tile IR and verified,
//   passes       ir::specialize + ir::optimize on a copy of the traced IR,
//   lowering     compile_for_gpu on the optimised IR as the cuda device calls
//                it (PTX only, no LLVM IR text), its pass times reported
//                as counters (analyses and layouts, codegen, LLVM O3, PTX),
//   trace_to_ptx all of the above from nothing to PTX text, each part a counter.
// nvcc_ptx times `nvcc -ptx -arch=sm_90a` on hand-written CUDA C++ equivalents
// (bench/cuda). A kernel the code generator cannot lower yet reports its
// LoweringError as the benchmark's error instead of a time.
#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/dsl/trace.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/kernels/layer_norm.hpp"
#include "kiln/kernels/softmax.hpp"
#include "kiln/kernels/vector_add.hpp"
#include "kiln/lowering/compile.hpp"

namespace kl = kiln;

namespace {

using Clock = std::chrono::steady_clock;

// Traces kernel function Fn into verified tile IR named `name`: what
// kl::compile does before its cache and the interpreter, done afresh on
// every call (kl::compile traces a kernel once per process).
template <auto Fn, class... Params>
std::unique_ptr<kl::ir::Function> trace_with(std::tuple<Params...>*, const std::string& name) {
  return kl::detail::trace_function(name, {kl::ir_type<Params>()...}, [](const std::vector<kl::ir::Value*>& args) {
    [&]<std::size_t... I>(std::index_sequence<I...>) { Fn(Params(args[I])...); }(std::index_sequence_for<Params...>{});
  });
}

template <auto Fn>
std::unique_ptr<kl::ir::Function> trace(const std::string& name) {
  using Params = typename kl::detail::signature<decltype(Fn)>::params;
  return trace_with<Fn>(static_cast<Params*>(nullptr), name);
}

// The facts of a typical launch (16-byte aligned buffers, sizes and strides
// that are multiples of 16), which a GPU launch specialises on as the
// interpreter does: they decide how wide the generated loads and stores are.
std::vector<kl::ir::ArgumentFacts> aligned_launch_facts(const kl::ir::Function& fn) {
  std::vector<kl::ir::ArgumentFacts> facts;
  for (const kl::ir::Value* argument : fn.body.arguments) {
    kl::ir::ArgumentFacts f;
    const kl::ir::Type& type = argument->type;
    if (type.is_pointer || (kl::ir::is_integer(type.dtype) && !kl::ir::is_bool(type.dtype))) f.divisibility = 16;
    facts.push_back(f);
  }
  return facts;
}

// The specialised, optimised copy of `traced` that the code generator takes.
std::unique_ptr<kl::ir::Function> optimized_copy(const kl::ir::Function& traced) {
  auto copy = kl::ir::clone(traced);
  kl::ir::specialize(*copy, aligned_launch_facts(traced));
  kl::ir::optimize(*copy);
  return copy;
}

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// What the cuda device asks of the lowering: PTX, without the LLVM IR text.
const kl::lowering::LoweringOptions kPtxOnly{.keep_llvm_ir = false};

// Sums of compile_for_gpu's pass times over a benchmark's iterations,
// reported as per-iteration averages in milliseconds.
class PassTimeCounters {
 public:
  void add(const kl::lowering::GpuKernel& kernel) {
    for (const kl::lowering::PassTime& t : kernel.pass_times) totals_[t.pass] += t.milliseconds;
  }

  // analyses_ms: verify + axes + layouts, kiln's own work before LLVM; every
  // other pass as <pass>_ms (target, codegen, o3, ptx today), so a pass the
  // code generator adds or renames shows up without a change here.
  void report(benchmark::State& state) const {
    double analyses = 0;
    for (const auto& [pass, total] : totals_) {
      if (pass == "verify" || pass == "axes" || pass == "layouts") analyses += total;
      else state.counters[pass + "_ms"] = benchmark::Counter(total, benchmark::Counter::kAvgIterations);
    }
    state.counters["analyses_ms"] = benchmark::Counter(analyses, benchmark::Counter::kAvgIterations);
  }

 private:
  std::map<std::string, double> totals_;
};

// Stage (a): tracing only.
template <auto Fn>
void trace_only(benchmark::State& state, const std::string& name) {
  try {
    for (auto _ : state) benchmark::DoNotOptimize(trace<Fn>(name));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Stage (b): the IR passes on a fresh copy of the traced kernel. Timed by
// hand around the passes alone: copying the kernel is not part of the stage,
// and pausing the benchmark's clock each iteration costs about as much as
// the passes on a small kernel.
template <auto Fn>
void passes_only(benchmark::State& state, const std::string& name) {
  try {
    const auto traced = trace<Fn>(name);
    const std::vector<kl::ir::ArgumentFacts> facts = aligned_launch_facts(*traced);
    for (auto _ : state) {
      auto copy = kl::ir::clone(*traced);
      const auto start = Clock::now();
      kl::ir::specialize(*copy, facts);
      kl::ir::optimize(*copy);
      state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
      benchmark::DoNotOptimize(copy);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Stage (c): compile_for_gpu on the optimised kernel, split by its passes.
// A LoweringError (an op the code generator does not support yet) becomes the
// benchmark's visible error.
template <auto Fn>
void lowering_only(benchmark::State& state, const std::string& name) {
  PassTimeCounters counters;
  try {
    const auto optimized = optimized_copy(*trace<Fn>(name));
    for (auto _ : state) {
      kl::lowering::GpuKernel kernel = kl::lowering::compile_for_gpu(*optimized, {}, kPtxOnly);
      counters.add(kernel);
      benchmark::DoNotOptimize(kernel.ptx.data());
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  counters.report(state);
}

// Stage (d): the whole cold path, trace to PTX, with each part as a counter.
template <auto Fn>
void trace_to_ptx(benchmark::State& state, const std::string& name) {
  PassTimeCounters counters;
  double trace_total = 0, passes_total = 0;
  try {
    for (auto _ : state) {
      auto start = Clock::now();
      auto traced = trace<Fn>(name);
      trace_total += elapsed_ms(start);
      start = Clock::now();
      auto optimized = optimized_copy(*traced);
      passes_total += elapsed_ms(start);
      kl::lowering::GpuKernel kernel = kl::lowering::compile_for_gpu(*optimized, {}, kPtxOnly);
      counters.add(kernel);
      benchmark::DoNotOptimize(kernel.ptx.data());
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  counters.report(state);
  state.counters["trace_ms"] = benchmark::Counter(trace_total, benchmark::Counter::kAvgIterations);
  state.counters["passes_ms"] = benchmark::Counter(passes_total, benchmark::Counter::kAvgIterations);
}

// nvcc from /usr/local/cuda/bin, else the first on PATH; empty when absent.
std::filesystem::path find_nvcc() {
  const std::filesystem::path installed = "/usr/local/cuda/bin/nvcc";
  if (::access(installed.c_str(), X_OK) == 0) return installed;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / "nvcc";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// `nvcc -ptx -arch=sm_90a` on bench/cuda/<file>, once per iteration, into a
// temporary .ptx removed afterwards. nvcc runs in a child process, so the
// benchmark is timed in wall-clock time.
void nvcc_ptx(benchmark::State& state, const std::string& file) {
  const std::filesystem::path nvcc = find_nvcc();
  if (nvcc.empty()) {
    state.SkipWithError("nvcc not found in /usr/local/cuda/bin or on PATH: nothing to compare kiln against");
    return;
  }
  const std::filesystem::path source = std::filesystem::path(KILN_BENCH_CUDA_DIR) / file;
  if (!std::filesystem::exists(source)) {
    state.SkipWithError(("CUDA source " + source.string() + " does not exist").c_str());
    return;
  }
  const std::filesystem::path output =
      std::filesystem::temp_directory_path() /
      ("kiln_compile_bench_" + std::to_string(::getpid()) + "_" + source.stem().string() + ".ptx");
  const std::string command =
      "'" + nvcc.string() + "' -ptx -arch=sm_90a -o '" + output.string() + "' '" + source.string() + "'";
  for (auto _ : state) {
    const int status = std::system(command.c_str());
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      const std::string how = status != -1 && WIFEXITED(status) ? "exited with " + std::to_string(WEXITSTATUS(status))
                                                                : "did not run to completion";
      state.SkipWithError((command + " " + how).c_str());
      break;
    }
  }
  std::filesystem::remove(output);
}

// The kernels, by the IR names kl::compile gives them.
constexpr auto kVectorAdd = kiln::kernels::vector_add<kl::f32, 1024>;
constexpr auto kSoftmax = kiln::kernels::softmax<kl::f32, 1024>;
constexpr auto kLayerNorm = kiln::kernels::layer_norm_forward<kl::f32, 1024>;

// Registers the four stage benchmarks of kernel Fn: <stage>/<label>.
template <auto Fn>
void register_stages(const std::string& label, const std::string& name) {
  auto add = [&](const std::string& stage, void (*run)(benchmark::State&, const std::string&)) {
    return benchmark::RegisterBenchmark((stage + "/" + label).c_str(),
                                        [run, name](benchmark::State& state) { run(state, name); })
        ->Unit(benchmark::kMillisecond);
  };
  add("trace", trace_only<Fn>)->UseRealTime();
  add("passes", passes_only<Fn>)->UseManualTime();
  add("lowering", lowering_only<Fn>)->UseRealTime();
  add("trace_to_ptx", trace_to_ptx<Fn>)->UseRealTime();
}

void register_benchmarks() {
  register_stages<kVectorAdd>("vector_add<f32,1024>", "vector_add");
  register_stages<kSoftmax>("softmax<f32,1024>", "softmax");
  register_stages<kLayerNorm>("layer_norm_forward<f32,1024>", "layer_norm_forward");
  // About a second per nvcc run: a few iterations are enough.
  for (const std::string file : {"vector_add.cu", "softmax.cu"}) {
    benchmark::RegisterBenchmark(("nvcc_ptx/" + file).c_str(),
                                 [file](benchmark::State& state) { nvcc_ptx(state, file); })
        ->Iterations(3)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

}  // namespace

// The first trace-to-PTX compile in a process also pays for LLVM's one-time
// set-up (target registration, pass registries); it is measured before the
// benchmarks and printed in the context header, since the benchmarks' own
// iterations all run after it.
int main(int argc, char** argv) {
  const auto start = Clock::now();
  std::string first_compile;
  try {
    auto optimized = optimized_copy(*trace<kVectorAdd>("vector_add"));
    kl::lowering::compile_for_gpu(*optimized, {}, kPtxOnly);
    first_compile = std::to_string(elapsed_ms(start)) + " ms";
  } catch (const std::exception& e) {
    first_compile = std::string("failed: ") + e.what();
  }
  benchmark::AddCustomContext("first_vector_add_trace_to_ptx_in_process", first_compile);
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
