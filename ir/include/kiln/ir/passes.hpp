// Generic IR passes (one file each) and the pipeline that runs them.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "kiln/ir/ir.hpp"
#include "kiln/ir/printer.hpp"

namespace kiln::ir {

/// Folds constants and applies algebraic simplifications (x+0, x*1, splat of
/// constant, broadcast to the same shape, reshape of reshape, trans of trans,
/// a trans moving only size-1 axes into a reshape, loop-carried values yielded
/// unchanged, if with a constant condition…). Returns true if anything changed.
bool canonicalize(Function& fn);
/// Replaces ops identical to an earlier op in a dominating position (same code,
/// operands, attributes and result types; no side effects, no regions).
bool eliminate_common_subexpressions(Function& fn);
/// Removes ops whose results are unused and that have no side effects, and
/// the carried values of `for` loops that nothing reads but their own update.
bool eliminate_dead_code(Function& fn);
/// Moves side-effect-free ops whose operands are defined outside a `for`
/// or `while` loop in front of it.
bool hoist_loop_invariants(Function& fn);

/// Sets the kernel's argument facts (one per argument) and replaces every use
/// of an integer argument known to equal 1 by the constant 1; the argument
/// stays in the signature. Throws IRError if the count differs.
void specialize(Function& fn, std::vector<ArgumentFacts> facts);

/// Software pipelining (OPS.md, "Shared buffers"; software_pipeline.cpp):
/// in each `for` loop that writes no memory, the loads feeding only `dot`
/// operands a and b of inputs narrower than 4 bytes or rounded to tf32, with
/// addresses computed from the induction variable and from carried values
/// whose updates are speculatable arithmetic (carried S - 1 iterations
/// ahead as well), become async_copies issued `S - 1` iterations ahead into rings of `S`
/// shared slots, read back with local_load. S is the loop's `num_stages`
/// attribute, else `num_stages`; nothing below 2 stages. Returns true if a
/// loop was pipelined.
bool pipeline_dot_loads(Function& fn, int num_stages);

/// The largest `unroll` a `for` loop may ask for.
inline constexpr int kMaxLoopUnroll = 128;

/// Unrolls every `for` loop with an `unroll = U` attribute (OPS.md; unroll.cpp):
/// a loop running the body U times per iteration over the largest multiple
/// of U iterations, then the loop itself over the rest. Returns true if a
/// loop was unrolled.
bool unroll_loops(Function& fn);

struct PipelineOptions {
  std::string dump_after;       // pass name, or "all": print the IR after it to `log`
  bool timing = false;          // print each pass's wall time to `log`
  bool verify_each = true;      // run the verifier after every pass
  std::ostream* log = nullptr;  // defaults to std::cerr
  int num_stages = 1;           // above 1: pipeline_dot_loads with this many stages
  PrintOptions dump;            // how the dumps print (with locations: to follow ops through the passes)
};

/// Runs, in order: canonicalize, cse, licm, dce to a fixed point; when a
/// loop asks for unrolling, unroll_loops and the four again; when
/// options.num_stages > 1 or a loop has its own num_stages,
/// pipeline_dot_loads and, if a loop was pipelined, the four again.
/// Pass names for `dump_after`: "canonicalize", "cse", "licm", "dce", "unroll", "pipeline".
void optimize(Function& fn, const PipelineOptions& options = {});

}  // namespace kiln::ir
