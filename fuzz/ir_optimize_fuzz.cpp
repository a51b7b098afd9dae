// Fuzz target ir_optimize_fuzz, differential: a kernel the parser and the
// verifier accept is optimised (ir::optimize on a clone, the verifier after
// every pass), which must not throw; then, when its interpreter work is
// bounded (work_bound.hpp), both kernels run the fuzz launch
// (interpreted_outcome.hpp) and must leave the same outcome.
//
// The same outcome: the same error message ("" for none; every op is
// labelled with its own line fuzz.kiln:N first, so messages name the op),
// the same lines printed by `print` ops and the same buffer bytes, NaNs of a
// float buffer counting as equal. One difference is allowed, because the
// optimiser may delete an op whose results are unused and that has no
// lasting effect (is_removable_when_unused: loads, integer division,
// side-effect-free loops) although running it would have faulted: the
// unoptimised run's error may differ from the optimised one's when one of
// the ops it names (the faulting op; for an in-place hazard, the load or the
// store) is such an op and either no op of the optimised kernel carries its
// line any more, and the pass that deleted the last ones carrying it
// found each removable in the kernel it ran on (a loop whose only effect
// sat in a nested loop an earlier pass proved never runs is removable by
// then: the kernel is followed pass by pass through the pipeline's dumps;
// the optimised run may then end without an error), or it sits in an
// unrolled loop and the optimised run ends without an error or with one
// naming that line too: unrolling copies a body with its lines, and the
// copies whose results the next copy overwrites unread go, so the fault
// comes at a later iteration, with other values, or not at all. The
// buffers and printed lines are then not compared, since the unoptimised run
// stopped at the fault. This lets through a wrongly deleted load whose
// results were used, if it faulted; the buffers catch it when it did not.
// Any other difference is a finding, printed with both kernels and both
// outcomes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "findings.hpp"
#include "interpreted_outcome.hpp"
#include "kiln/ir/op_schema.hpp"
#include "kiln/ir/parser.hpp"
#include "kiln/ir/passes.hpp"
#include "kiln/ir/printer.hpp"
#include "kiln/ir/verifier.hpp"
#include "work_bound.hpp"

namespace kiln::fuzz {
namespace {

constexpr std::string_view kLabelFile = "fuzz.kiln";

/// Gives every op the location fuzz.kiln:N, N counting ops in walk order from 1.
void label_ops(ir::Function& fn) {
  int line = 0;
  ir::walk(fn.body, [&](ir::Operation& op) { op.loc = {std::string(kLabelFile), ++line}; });
}

/// The ops of `fn` labelled `line`: one, none, or the copies unrolling made.
std::vector<const ir::Operation*> ops_at_line(const ir::Function& fn, int line) {
  std::vector<const ir::Operation*> found;
  ir::walk(fn.body, [&](ir::Operation& op) {
    if (op.loc.line == line && op.loc.file == kLabelFile) found.push_back(&op);
  });
  return found;
}

/// The lines fuzz.kiln:N that `error` names.
std::vector<int> named_lines(const std::string& error) {
  static const std::regex kLine(R"(fuzz\.kiln:([0-9]+))");
  std::vector<int> lines;
  for (auto it = std::sregex_iterator(error.begin(), error.end(), kLine); it != std::sregex_iterator(); ++it)
    lines.push_back(std::stoi((*it)[1].str()));
  return lines;
}

/// Whether `op` sits in the body of a loop that unrolling copies.
bool in_unrolled_loop(const ir::Operation& op) {
  for (const ir::Block* block = op.parent; block && block->parent; block = block->parent->parent) {
    const ir::Operation& owner = *block->parent;
    if (owner.code == ir::OpCode::for_ && owner.has_attribute("unroll") && owner.int_attribute("unroll") > 1)
      return true;
  }
  return false;
}

/// `original`, then the kernel after each pass of ir::optimize, read back
/// from the pipeline's dumps, which carry the locations.
std::vector<std::unique_ptr<ir::Function>> pass_by_pass(const ir::Function& original) {
  std::vector<std::unique_ptr<ir::Function>> states;
  states.push_back(ir::clone(original));
  std::ostringstream log;
  ir::optimize(*ir::clone(original), {.dump_after = "all", .log = &log, .dump = {.locations = true}});
  static const std::regex kPassHeader(R"(// after [a-z]+\n)");
  const std::string text = log.str();
  for (std::sregex_token_iterator it(text.begin(), text.end(), kPassHeader, -1), end; it != end; ++it)
    if (it->length() > 0) states.push_back(ir::parse_function(it->str(), "dump"));
  return states;
}

/// Whether the pass that deleted the last ops labelled `line` deleted only
/// ops it may delete when unused: each was removable in the kernel it ran on.
bool deleted_while_removable(int line, const std::vector<std::unique_ptr<ir::Function>>& states) {
  for (std::size_t i = 0; i + 1 < states.size(); ++i) {
    const std::vector<const ir::Operation*> ops = ops_at_line(*states[i], line);
    if (ops.empty() || !ops_at_line(*states[i + 1], line).empty()) continue;
    return std::ranges::all_of(ops, [](const ir::Operation* op) { return ir::is_removable_when_unused(*op); });
  }
  return false;
}

/// Whether `before`, the unoptimised run's error, may have become `after`
/// (see the top of the file): one of the ops it names is an op the optimiser
/// may delete when unused, and it deleted that op, or copies of it.
bool optimised_away(const std::string& before, const std::string& after, const ir::Function& original,
                    const ir::Function& optimized) {
  const std::vector<int> after_lines = named_lines(after);
  for (const int line : named_lines(before)) {
    const std::vector<const ir::Operation*> ops = ops_at_line(original, line);
    if (ops.empty()) continue;
    if (ops_at_line(optimized, line).empty()) {
      if (deleted_while_removable(line, pass_by_pass(original))) return true;
      continue;
    }
    const bool same_op_or_none = after.empty() || std::ranges::count(after_lines, line) > 0;
    if (ir::is_removable_when_unused(*ops.front()) && in_unrolled_loop(*ops.front()) && same_op_or_none) return true;
  }
  return false;
}

std::string describe(const Outcome& outcome) { return outcome.error.empty() ? "no error" : outcome.error; }

/// What the inputs came to, printed when the fuzzer exits.
struct Tally {
  unsigned long long inputs = 0;
  unsigned long long optimised = 0;    // verified, then optimised
  unsigned long long interpreted = 0;  // run before and after
  unsigned long long faulted = 0;      // of those, the unoptimised run ended in an error
  unsigned long long faults_gone = 0;  // of those, the error went or moved with ops the optimiser deleted
  ~Tally() {
    std::fprintf(stderr,
                 "ir_optimize_fuzz: %llu inputs, %llu verified and optimised, %llu interpreted (%llu with an error, "
                 "%llu of those gone or moved with ops the optimiser deleted)\n",
                 inputs, optimised, interpreted, faulted, faults_gone);
  }
};
Tally tally;

}  // namespace
}  // namespace kiln::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kiln;
  using namespace kiln::fuzz;
  ++tally.inputs;
  std::unique_ptr<ir::Function> original;
  try {
    original = ir::parse_function(std::string_view(reinterpret_cast<const char*>(data), size), "input.kiln");
    ir::verify(*original);
  } catch (const ir::IRError& e) {
    require_one_line("parse or verify", e.what());
    return 0;
  }
  label_ops(*original);
  const ir::PrintOptions with_locations{.locations = true};
  const std::string original_text = ir::print(*original, with_locations);

  const std::unique_ptr<ir::Function> optimized = ir::clone(*original);
  std::ostringstream log;
  try {
    ir::optimize(*optimized, {.log = &log});
  } catch (const ir::IRError& e) {
    fail(std::string("optimize throws on a verified kernel: ") + e.what(), original_text);
  }
  const std::string optimized_text = ir::print(*optimized, with_locations);
  ++tally.optimised;

  if (!launchable(*original)) return 0;
  LaunchMemory memory(*original);
  if (!interpretation_work(*original, kGrid, memory.arguments())) return 0;
  const Outcome before = run(*original, memory);
  const Outcome after = run(*optimized, memory);
  ++tally.interpreted;
  if (!before.error.empty()) ++tally.faulted;
  if (before.error == after.error) {
    if (before.printed != after.printed)
      fail("optimising changes the printed lines (" + describe(before) + "):\n" + before.printed + "---- after:\n" +
               after.printed,
           original_text, optimized_text);
    const std::string difference = first_difference(*original, before, after);
    if (!difference.empty())
      fail("optimising changes the buffers (" + describe(before) + "): " + difference, original_text, optimized_text);
    return 0;
  }
  if (!before.error.empty() && optimised_away(before.error, after.error, *original, *optimized)) {
    ++tally.faults_gone;
    return 0;
  }
  fail("optimising changes the outcome from '" + describe(before) + "' to '" + describe(after) + "'", original_text,
       optimized_text);
}
