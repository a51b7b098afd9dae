// The generic optimisation pipeline: canonicalize, cse, licm, dce to a fixed
// point, then loop unrolling and software pipelining, each followed by the
// four again when it changed the kernel; each pass timed, dumped and
// verified on request.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string_view>

#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"

namespace kiln::ir {

namespace {

struct Pass {
  const char* name;
  bool (*run)(Function&);
};

constexpr Pass kPasses[] = {
    {"canonicalize", canonicalize},
    {"cse", eliminate_common_subexpressions},
    {"licm", hoist_loop_invariants},
    {"dce", eliminate_dead_code},
};

// Each pass shrinks the kernel or moves ops outward, so the fixed point comes
// quickly; the cap only guards against two rewrites undoing each other.
constexpr int kMaxRounds = 10;

template <class Run>
bool run_pass(const char* name, Run run, Function& fn, const PipelineOptions& options, std::ostream& log) {
  const auto start = std::chrono::steady_clock::now();
  const bool changed = run(fn);
  if (options.timing) {
    const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.2f", elapsed.count());
    log << "pass " << name << ": " << ms << " ms\n";
  }
  if (options.dump_after == "all" || options.dump_after == name) {
    log << "// after " << name << "\n";
    print(log, fn, options.dump);
  }
  if (options.verify_each) {
    try {
      verify(fn);
    } catch (const IRError& e) {
      throw IRError(std::string("after ") + name + ": " + e.what());
    }
  }
  return changed;
}

void simplify(Function& fn, const PipelineOptions& options, std::ostream& log) {
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (const Pass& pass : kPasses) changed |= run_pass(pass.name, pass.run, fn, options, log);
    if (!changed) break;
  }
}

bool any_loop_has(const Function& fn, std::string_view attribute) {
  bool found = false;
  walk(fn.body, [&](Operation& op) { found |= op.code == OpCode::for_ && op.has_attribute(attribute); });
  return found;
}

}  // namespace

void optimize(Function& fn, const PipelineOptions& options) {
  std::ostream& log = options.log ? *options.log : std::cerr;
  if (options.verify_each) verify(fn);
  simplify(fn, options, log);
  if (any_loop_has(fn, "unroll") && run_pass("unroll", unroll_loops, fn, options, log)) simplify(fn, options, log);
  auto pipeline = [&](Function& f) { return pipeline_dot_loads(f, options.num_stages); };
  if ((options.num_stages > 1 || any_loop_has(fn, "num_stages")) && run_pass("pipeline", pipeline, fn, options, log))
    simplify(fn, options, log);
}

}  // namespace kiln::ir
