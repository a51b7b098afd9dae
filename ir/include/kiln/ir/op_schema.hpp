// What ops.def's family, effect and layout columns say about each op, as
// compile-time tables, and the effect queries every pass shares (dead-code
// elimination, CSE, LICM, the interpreter's per-frame hoisting).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "kiln/ir/ir.hpp"

namespace kiln::ir {

/// Which interpreter routine and which code generator file implement an op.
enum class OpFamily : std::uint8_t {
  creation,       // constants, grid queries, arange
  shape,          // splat, broadcast, expand_dims
  rearrange,      // reshape, trans, join, split
  elementwise,    // arithmetic, bitwise, comparisons, select, math
  cast,           // cast, bitcast
  memory,         // addptr, load, store
  atomic,         // atomic read-modify-write and compare-and-swap
  dot,            // matrix product
  reduce,         // reduction over one axis with a combine region
  scan,           // scan over one axis with a combine region
  control,        // for, if, while
  terminator,     // yield
  debug,          // print, assert, barrier
  hint,           // multiple_of, max_contiguous: facts for the GPU code generator, checked by the cpu and emu devices
  shared_buffer,  // local_alloc, async_copy, async_commit, async_wait, local_load
  inline_asm,     // inline assembly, one call per element; the host reference on the cpu and emu devices
};

/// What an op does besides computing its results (not counting its regions'):
/// `orders` is a barrier, which the program's loads and stores do not cross;
/// `allocates` makes a fresh buffer, so two such ops are never one.
enum class OpEffect : std::uint8_t { none, reads, writes, reports, orders, allocates };

/// Whether an op's tile operands and results share one layout (`joins`) or
/// each has its own (`own`: shape changes, dot, reductions, regions).
enum class OpLayout : std::uint8_t { joins, own };

namespace schema_detail {
struct Row {
  OpCode code;
  OpFamily family;
  OpEffect effect;
  OpLayout layout;
};
inline constexpr std::array kRows = {
#define KILN_OP(Enum, Text, NOperands, NResults, NRegions, Verifier, Attrs, Family, Effect, Layout) \
  Row{OpCode::Enum, OpFamily::Family, OpEffect::Effect, OpLayout::Layout},
#include "kiln/ir/ops.def"
#undef KILN_OP
};
}  // namespace schema_detail

inline constexpr std::size_t kOpCount = schema_detail::kRows.size();

constexpr OpFamily family_of(OpCode code) { return schema_detail::kRows[static_cast<std::size_t>(code)].family; }
constexpr OpEffect effect_of(OpCode code) { return schema_detail::kRows[static_cast<std::size_t>(code)].effect; }
constexpr bool joins_layout(OpCode code) {
  return schema_detail::kRows[static_cast<std::size_t>(code)].layout == OpLayout::joins;
}

/// The first op of `family` for which `implemented(op)` is false, or
/// kOpCount when there is none. A family's implementation asserts at compile
/// time that it covers every op the schema gives it:
///   static_assert(ir::first_op_missing(OpFamily::elementwise, has_routine) == ir::kOpCount);
template <class Implemented>
constexpr std::size_t first_op_missing(OpFamily family, Implemented implemented) {
  for (std::size_t i = 0; i < kOpCount; ++i)
    if (schema_detail::kRows[i].family == family && !implemented(schema_detail::kRows[i].code)) return i;
  return kOpCount;
}

/// What this op does besides computing its results (not counting its
/// regions'): its code's effect, except for a pure inline_asm, which has none.
OpEffect effect_of(const Operation& op);

/// Writes memory, talks to the host or orders memory (a non-pure inline_asm
/// counts as writing): never removed, merged or moved.
bool has_lasting_effect(const Operation& op);

/// The op, or an op in one of its regions, writes memory, reports or orders.
bool has_side_effects(const Operation& op);

/// The op, or an op in one of its regions, writes memory.
bool writes_memory(const Operation& op);

/// May be deleted when its results are unused (loads included: an unused
/// load observes nothing). A terminator is part of its region's structure.
bool is_removable_when_unused(const Operation& op);

/// Its results depend only on its operands and attributes: two such ops with
/// equal inputs are interchangeable. A load is not (memory may change between
/// two loads), nor is anything with a region.
bool is_pure(const Operation& op);

/// Pure and unable to fault, so it may run where the original program would
/// not have run it (in front of a loop that runs zero times). Integer
/// division by zero faults, and so does a hint that does not hold (on the
/// devices that check hints).
bool is_speculatable(const Operation& op);

}  // namespace kiln::ir
