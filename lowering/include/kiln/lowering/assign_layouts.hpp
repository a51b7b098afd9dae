// Layout assignment: the register layout (a linear layout over register, lane
// and warp) of every tile value of a kernel, chosen for coalesced accesses.
#pragma once

#include <map>
#include <unordered_map>
#include <utility>

#include "kiln/ir/ir.hpp"
#include "kiln/lowering/axis_analysis.hpp"
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

/// Chooses a blocked layout for every tile value of `fn` (1-D and 2-D tiles,
/// in the body and in nested regions, block arguments included) for
/// `num_warps` warps of 32 lanes. The rule:
///  - Values an element-wise op combines (operands and results of one shape,
///    including a load's or store's pointers, mask and data) form one class
///    and share one layout, so element-wise code never moves data. A value a
///    `for` or `while` carries (init, region arguments, yield operand,
///    result) and an `if` result with its yields are one class too, so loops
///    and branches move no data either.
///  - Every 2-D class uses one blocked layout for the whole kernel, order
///    [1, 0]: size per thread [1, v], lanes and warps filling the last
///    dimension of the largest 2-D tile first. Broadcasts between 2-D shapes
///    then stay inside each thread.
///  - A 1-D class that feeds `expand_dims` at axis a takes the slice of the
///    2-D layout of that result at a; the results of a `reduce` of a 2-D tile
///    along a take the slice of the input's layout at a. Other 1-D classes
///    are blocked with size per thread [v] over all lanes and warps.
///  - v is the widest access_vector_width of the class's loads and stores
///    whose fastest dimension is the last (all 2-D accesses together), so
///    contiguous aligned f32 gets 4 per thread: 16-byte accesses; it is
///    capped at the tile's elements per thread (numel / (32 * num_warps)), so
///    a small tile is spread over all threads rather than replicated.
/// A 1-D class that two ops need in different layouts (two expand_dims at
/// different axes, a reduce and an expand_dims that disagree) keeps the
/// layout of its class: the one its reduce leaves, else the one its first
/// expand_dims (in program order) needs. Each use that needs another layout
/// reads a converted copy, recorded with add_conversion. Two reduces leaving
/// one class in different layouts would need their results converted, which
/// is not supported yet: LoweringError naming both. Ranks above 2:
/// LoweringError naming the defining op.
LayoutMap assign_layouts(const ir::Function& fn, const AxisInfoMap& axes, int num_warps);

/// For each register of a thread in `result` (a layout of `result_shape`),
/// the register of the same thread in `source` (a layout of `source_shape`)
/// holding the element it takes: broadcast (source dims of size 1 read at 0)
/// or expand_dims (`inserted_axis` >= 0: that result dimension is dropped).
/// Throws LoweringError (prefixed by `what`) when some element lives in
/// another thread, which needs a layout conversion.
std::vector<int> thread_local_register_map(const LinearLayout& result, const ir::Shape& result_shape,
                                           const LinearLayout& source, const ir::Shape& source_shape, int inserted_axis,
                                           const std::string& what);

}  // namespace kiln::lowering
