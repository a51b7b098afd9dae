// Layout assignment: the register layout (a linear layout over register, lane
// and warp) of every tile value of a kernel, chosen for coalesced accesses.
#pragma once

#include <map>
#include <unordered_map>
#include <utility>

#include "kiln/ir/ir.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// A use that reads `value` in `to` while the value lives in `from` (the
/// layout of its class): the using op reads a converted copy.
struct LayoutConversion {
  const ir::Value* value = nullptr;
  LinearLayout from;
  LinearLayout to;
};

/// The layout of each tile value of one kernel, and the conversions its uses need.
class LayoutMap {
 public:
  /// Throws LoweringError naming the value (%N) when it has no layout.
  const LinearLayout& at(const ir::Value& value) const;
  const LinearLayout* find(const ir::Value& value) const;
  void set(const ir::Value& value, LinearLayout layout) { layouts_[&value] = std::move(layout); }
  std::size_t size() const { return layouts_.size(); }
  /// Records that `user` reads `conversion.value` converted to `conversion.to`.
  void add_conversion(const ir::Operation& user, LayoutConversion conversion);
  /// The conversion `user` needs to read `value`, or null when it reads the value as it lives.
  const LayoutConversion* conversion(const ir::Operation& user, const ir::Value& value) const;
  std::size_t conversion_count() const { return conversions_.size(); }

 private:
  std::unordered_map<const ir::Value*, LinearLayout> layouts_;
  std::map<std::pair<const ir::Operation*, const ir::Value*>, LayoutConversion> conversions_;
};

/// Chooses a layout for every tile value of `fn` (tiles of any rank,
/// in the body and in nested regions, block arguments included) for
/// `num_warps` warps of 32 lanes. The rule:
///  - Values an element-wise op combines (operands and results of one shape,
///    including a load's or store's pointers, mask and data) form one class
///    and share one layout, so element-wise code never moves data. A tile
///    of numbers that holds one value throughout (is_uniform_tile: a splat,
///    a constant) joins no class as an operand: every thread reads its value
///    in any layout, and two unrelated tiles of one shape that use it (the
///    pipeliner's copies of K^T and V, both masked by one splat of "this
///    iteration runs") keep their own layouts. A value a
///    `for` or `while` carries (init, region arguments, yield operand,
///    result) and an `if` result with its yields are one class too, so loops
///    and branches move no data either.
///  - The classes of each rank R >= 2 use one blocked layout for the whole
///    kernel (kernel_blocked_parameters), sized by the largest tile of rank
///    R: order [R-1, …, 0], size per thread [1, …, 1, v], lanes and warps
///    filling the last dimension first. Broadcasts between tiles of one rank
///    then stay inside each thread.
///  - A class of rank r may instead be demanded a slice of a layout of rank
///    r + 1: the results of a `reduce` along a take the slice of the input's
///    layout at a; a class feeding `expand_dims` at axis a takes the slice of
///    the result's layout at a; a class feeding `join` takes the slice of the
///    result's layout along its new last dimension. Ranks are settled from
///    the highest down; reduces demand before expand_dims and join. 1-D
///    classes with no demand are blocked with size per thread [v] over all
///    lanes and warps. (In a kernel whose tiles are at most 2-D no 2-D class
///    is demanded a slice.)
///  - The results of a scan, and the halves of a split, form one class. The
///    result class of a reshape, trans, join or split that no broadcast,
///    reduction, dot or region reads takes the layout in which the op moves
///    no data, or for a split the fewest (moveless_result_layout,
///    shape_layouts.hpp); a shape op reading it does not bind it, so a chain
///    of shape ops (flip, sort) derives its layouts link by link in program
///    order. A bound result class whose kernel layout of its rank would hold
///    each element in several threads although the tile has an element for
///    every thread takes the blocked layout of its own shape, and its
///    broadcast sources follow. Where the op's operand does not live in the
///    layout the op needs it is converted (record_shape_op_conversions), as
///    a scan's operands are into its results' layout, and a broadcast's
///    operand when it does not live in the threads that hold its copies.
///  - v is the widest access_vector_width of the class's loads and stores
///    whose fastest dimension is the last (for R >= 2, of all rank-R
///    accesses together), so contiguous aligned f32 gets 4 per thread:
///    16-byte accesses; it is capped at the tile's elements per thread
///    (numel / (32 * num_warps)), so a small tile is spread over all threads
///    rather than replicated. A rank R >= 3 that a join produces takes v >= 2,
///    so each thread holds both elements of its pairs (Triton's join layout)
///    and the slice its operands take matches the kernel's rank R-1 layout.
///  - A `dot` on tensor cores (dot_uses_tensor_cores) demands the mma.sync
///    accumulator layout (dot_accumulator_layout) of its result's class and
///    its accumulator's, before any slice demand, so a loop-carried
///    accumulator and every element-wise op on it stay in the MMA layout and
///    the loop converts nothing. A class whose first broadcast (in program
///    order) is into such a class is demanded the accumulator layout with
///    the broadcast dimensions dropped (broadcast_operand_layout): a bias
///    row or a row statistic then broadcasts inside each thread, and the
///    slice a reduce of the accumulator leaves is what its expand_dims needs.
///  - A 2-D load or store whose addresses run along dim0 in vectors of v > 1
///    (a tile read transposed, as attention's K^T) demands for its class the
///    blocked layout of the rule above with the two dimensions swapped: dim0
///    fastest, size per thread [v, 1]; a class whose first broadcast is into
///    such a class takes that layout with the broadcast dimension dropped.
///    A class that another access runs through along dim1 (a transpose's
///    load and store) keeps the kernel's layout.
///  - `dot` reads a and b in the mma.sync fragment layouts
///    (dot_fragment_layout) on tensor cores, else in the dot operand layouts
///    of its result's layout (dot_operand_layout); the accumulator in the
///    result's layout. Each operand not already in the layout it is read in
///    gets a conversion.
/// A class that two ops need in different layouts (two expand_dims at
/// different axes, a reduce and an expand_dims that disagree) keeps the
/// layout of its class: the one its reduce leaves, else the one its first
/// expand_dims or join (in program order) needs. Each use that needs another
/// layout reads a converted copy, recorded with add_conversion. Of two
/// reduces leaving one class in different layouts the first (in program
/// order) decides; the other reduce converts its results to it as it emits them.
/// `target` gives the warps and whether dots run on tensor cores.
LayoutMap assign_layouts(const ir::Function& fn, const AxisInfoMap& axes, const GpuTarget& target);

/// Whether `value` is a tile of numbers made by splat or constant: every
/// element holds the same value, in every register of every layout. (Pointer
/// tiles are left out: the code of addptr, load and store takes its register
/// count from its pointers.)
bool is_uniform_tile(const ir::Value& value);

/// For each register of a thread in `result` (a layout of `result_shape`),
/// the register of the same thread in `source` (a layout of `source_shape`)
/// holding the element it takes: broadcast (source dims of size 1 read at 0)
/// or expand_dims (`inserted_axis` >= 0: that result dimension is dropped).
/// Throws LoweringError (prefixed by `what`) when some element lives in
/// another thread, which needs a layout conversion.
std::vector<int> thread_local_register_map(const LinearLayout& result, const ir::Shape& result_shape,
                                           const LinearLayout& source, const ir::Shape& source_shape, int inserted_axis,
                                           const std::string& what);

/// Whether thread_local_register_map finds a map (every thread holds, in
/// `source`, every element its registers of `result` take), so the op needs
/// no conversion.
bool is_thread_local(const LinearLayout& result, const ir::Shape& result_shape, const LinearLayout& source,
                     const ir::Shape& source_shape, int inserted_axis);

/// The kernel-wide blocked layout parameters for the tiles of one rank,
/// sized by `largest` (the rank's largest tile): order [R-1, …, 0], size per
/// thread [1, …, 1, width]; the 32 lanes fill the dimensions from the last,
/// each taking up to bit_floor(largest[d]) / size_per_thread[d] of those
/// left, the first dimension the rest; then the warps likewise, each up to
/// what the lanes leave of that dimension.
BlockedParameters kernel_blocked_parameters(const ir::Shape& largest, std::int64_t width, int num_warps);

}  // namespace kiln::lowering
