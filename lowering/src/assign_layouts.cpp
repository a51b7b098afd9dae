// Layout assignment: one class per group of values element-wise ops combine,
// a blocked layout per class (sliced where a class feeds expand_dims or join
// or leaves a reduce).
// The rule is documented on assign_layouts in assign_layouts.hpp.
#include "kiln/lowering/assign_layouts.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "kiln/ir/op_schema.hpp"
#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/dot_layout.hpp"
#include "kiln/lowering/rematerialize.hpp"
#include "kiln/lowering/shape_layouts.hpp"
#include "kiln/lowering/wgmma_layout.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;
using ir::Operation;
using ir::Value;

/// The pointer tile of a global memory access (load, store, async_copy), or null.
const Value* accessed_pointers(const Operation& op) {
  const Value* pointers = op.code == OpCode::load || op.code == OpCode::store ? op.operands[0]
                          : op.code == OpCode::async_copy                     ? op.operands[2]
                                                                              : nullptr;
  return pointers && pointers->type.is_tile() ? pointers : nullptr;
}

/// Union-find over the tile values of the kernel body.
class Classes {
 public:
  const Value* find(const Value* v) {
    auto it = parent_.try_emplace(v, v).first;
    if (it->second == v) return v;
    const Value* root = find(it->second);
    parent_[v] = root;
    return root;
  }
  void unite(const Value* a, const Value* b) { parent_[find(a)] = find(b); }

 private:
  std::map<const Value*, const Value*> parent_;
};

/// The values a region op passes between its operands, its regions' block
/// arguments and yields, and its results: a loop-carried value is one value
/// across iterations, so each group shares a layout. `for`: init i, body
/// argument i+1, yield operand i, result i; `if`: result i and each branch's
/// yield operand i; `while`: init i, argument i of both regions, the second
/// region's yield operand i, result i.
std::vector<std::vector<const Value*>> region_carried_groups(const Operation& op) {
  std::vector<std::vector<const Value*>> groups;
  if (op.code == OpCode::for_) {
    const ir::Block& body = *op.regions[0];
    const Operation* yield = body.terminator();
    for (std::size_t i = 0; i + 3 < op.operands.size(); ++i) {
      std::vector<const Value*> group = {op.operands[i + 3], body.arguments[i + 1]};
      if (i < op.results.size()) group.push_back(op.results[i]);
      if (yield && i < yield->operands.size()) group.push_back(yield->operands[i]);
      groups.push_back(std::move(group));
    }
  } else if (op.code == OpCode::while_) {
    const Operation* yield = op.regions[1]->terminator();
    for (std::size_t i = 0; i < op.operands.size(); ++i) {
      std::vector<const Value*> group = {op.operands[i], op.regions[0]->arguments[i], op.regions[1]->arguments[i]};
      if (i < op.results.size()) group.push_back(op.results[i]);
      if (yield && i < yield->operands.size()) group.push_back(yield->operands[i]);
      groups.push_back(std::move(group));
    }
  } else if (op.code == OpCode::if_) {
    for (std::size_t i = 0; i < op.results.size(); ++i) {
      std::vector<const Value*> group = {op.results[i]};
      for (const auto& region : op.regions)
        if (const Operation* yield = region->terminator(); yield && i < yield->operands.size())
          group.push_back(yield->operands[i]);
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

}  // namespace

const LinearLayout* LayoutMap::find(const ir::Value& value) const {
  auto it = layouts_.find(&value);
  return it == layouts_.end() ? nullptr : &it->second;
}

const LinearLayout& LayoutMap::at(const ir::Value& value) const {
  if (const LinearLayout* layout = find(value)) return *layout;
  throw InternalError("no register layout was assigned to %" + std::to_string(value.id) + " (" +
                      ir::to_string(value.type) + ")");
}

void LayoutMap::add_conversion(const ir::Operation& user, LayoutConversion conversion) {
  const ir::Value* value = conversion.value;
  conversions_.insert_or_assign({&user, value}, std::move(conversion));
}

const LayoutConversion* LayoutMap::conversion(const ir::Operation& user, const ir::Value& value) const {
  auto it = conversions_.find({&user, &value});
  return it == conversions_.end() ? nullptr : &it->second;
}

namespace {

/// The steps of assign_layouts, in order, sharing what each learns about the
/// kernel: the classes of values that must share a layout, the vector width
/// each class and rank is accessed at, the kernel's blocked layout per rank,
/// the slices some classes are demanded in, and the layouts derived for the
/// results of shape ops.
class LayoutAssignment {
 public:
  LayoutAssignment(const ir::Function& fn, const AxisInfoMap& axes, const GpuTarget& target)
      : fn_(fn), axes_(axes), target_(target), num_warps_(target.num_warps) {
    ir::walk(fn.body, [&](ir::Operation& op) { all_ops_.push_back(&op); });
  }

  LayoutMap run() {
    group_into_classes();
    measure_access_widths();
    choose_rank_layouts();
    demand_accumulator_layouts();
    demand_transposed_access_layouts();
    demand_copy_layouts();
    demand_shape_op_layouts();
    settle_slice_demands();
    derive_shape_op_layouts();
    LayoutMap layouts;
    for (const Value* v : tiles_) {
      auto it = derived_.find(classes_.find(v));
      layouts.set(*v, it != derived_.end() ? it->second : class_layout(v));
    }
    record_expand_dims_conversions(layouts);
    record_dot_conversions(layouts);
    record_shape_op_conversions(fn_, num_warps_, layouts);
    return layouts;
  }

 private:
  /// Unites the values that share a layout: those an op joining layouts
  /// combines (of one shape), a region's carried values, a scan's results,
  /// a split's halves and a reduce's operands.
  void group_into_classes() {
    auto add_tile = [&](const Value* value) {
      if (!value->type.is_tile()) return;
      tiles_.push_back(value);
      classes_.find(value);
    };
    for (const Operation* op : all_ops_) {
      for (const Value* result : op->results) add_tile(result);
      for (const auto& region : op->regions)
        for (const Value* argument : region->arguments) add_tile(argument);
      for (const auto& group : region_carried_groups(*op))
        for (const Value* value : group)
          if (value->type.is_tile()) classes_.unite(value, group.front());
      // A scan's results, and a split's halves, are produced together in one layout.
      if (op->code == OpCode::scan || op->code == OpCode::split)
        for (const Value* result : op->results)
          if (result->type.is_tile()) classes_.unite(result, op->results.front());
      // A reduce of several tiles (argmax's values and indices) combines its
      // operands element by element, as an element-wise op does, though its
      // results have another shape.
      const bool joins = ir::joins_layout(op->code);
      if (!joins && op->code != OpCode::reduce) continue;
      const Value* first = nullptr;
      auto join = [&](const Value* v) {
        if (!v->type.is_tile()) return;
        if (!first) first = v;
        else if (v->type.shape == first->type.shape) classes_.unite(v, first);
      };
      if (joins)
        for (const Value* result : op->results) join(result);
      for (const Value* operand : op->operands)
        if (!is_uniform_tile(*operand)) join(operand);
    }
  }

  /// Widest access per class, and per rank above 1 the widest over all
  /// accesses of that rank (the tiles of one rank share a blocked layout).
  void measure_access_widths() {
    for (const Operation* op : all_ops_) {
      const Value* pointers = accessed_pointers(*op);
      if (!pointers) continue;
      const int last = static_cast<int>(pointers->type.shape.size()) - 1;
      if (fastest_dimension(axes_.at(*pointers)) != last) continue;
      // A thread holds no more than its share of the tile, so small tiles are
      // spread over all threads instead of replicated (Triton's coalesce rule).
      const std::int64_t share = std::max<std::int64_t>(1, pointers->type.numel() / (kLanesPerWarp * num_warps_));
      const std::int64_t width = std::min({access_vector_width(axes_, *op), pointers->type.shape[last], share});
      std::int64_t& w = class_width_[classes_.find(pointers)];
      w = std::max(w, width);
      if (last >= 1) widen_rank(pointers->type.shape.size(), width);
    }
    // A join's pairs are held by one thread (Triton's join layout): the new
    // last dimension takes 2 registers, so that the slice the operands take
    // is the kernel's layout one rank down when the other dimensions agree.
    // (Ranks above 2 only: 2-D kernels keep their vector widths.)
    for (const Operation* op : all_ops_)
      if (op->code == OpCode::join && op->result()->type.shape.size() >= 3)
        widen_rank(op->result()->type.shape.size(), 2);
  }

  void widen_rank(std::size_t rank, std::int64_t width) {
    std::int64_t& of_rank = rank_width_.try_emplace(rank, 1).first->second;
    of_rank = std::max(of_rank, width);
  }

  /// One blocked layout per rank above 1 for the whole kernel, sized by its
  /// largest tile of that rank.
  void choose_rank_layouts() {
    std::map<std::size_t, ir::Shape> largest;
    for (const Value* v : tiles_) {
      const std::size_t rank = v->type.shape.size();
      if (rank < 2) continue;
      auto [it, inserted] = largest.try_emplace(rank, v->type.shape);
      if (!inserted && v->type.numel() > ir::Type::tile(ir::DType::i32, it->second).numel()) it->second = v->type.shape;
    }
    for (const auto& [rank, shape] : largest) {
      auto width = rank_width_.find(rank);
      rank_parameters_.emplace(
          rank, kernel_blocked_parameters(shape, width == rank_width_.end() ? 1 : width->second, num_warps_));
    }
  }

  LinearLayout rank_layout(const ir::Shape& shape) const {
    const BlockedParameters& parameters = rank_parameters_.at(shape.size());
    return blocked_layout(shape, parameters.size_per_thread, parameters.threads_per_warp, parameters.warps_per_cta,
                          parameters.order);
  }

  /// The layout of `v`'s class: the slice demanded of it, else the kernel's
  /// layout of its rank (1-D: blocked at the class's access width).
  LinearLayout class_layout(const Value* v) {
    const ir::Shape& shape = v->type.shape;
    const Value* root = classes_.find(v);
    if (auto demanded = demands_.find(root); demanded != demands_.end()) return demanded->second;
    if (shape.size() >= 2) return rank_layout(shape);
    auto width = class_width_.find(root);
    const std::int64_t per_thread = width == class_width_.end() ? 1 : width->second;
    return blocked_layout(shape, {per_thread}, {kLanesPerWarp}, {num_warps_}, {0});
  }

  /// A tensor-core dot's result and accumulator classes live in the mma.sync
  /// accumulator layout, and so does everything element-wise they feed or
  /// that feeds them (the loop-carried accumulator, the epilogue, the store).
  /// A class whose first broadcast (in program order) is into such a class
  /// takes the accumulator layout with the broadcast dimensions dropped, so
  /// that the broadcast stays inside each thread (a bias row, attention's
  /// row statistics); a class first broadcast elsewhere keeps its own layout
  /// and is converted where it meets the accumulator.
  void demand_accumulator_layouts() {
    std::set<const Value*> accumulator_classes;
    for (const Operation* op : all_ops_) {
      if (op->code != OpCode::dot || !dot_uses_tensor_cores(*op, target_)) continue;
      const LinearLayout layout = dot_accumulator_layout(*op, target_);
      for (const Value* value : {op->result(), op->operands[2]}) {
        const Value* root = classes_.find(value);
        if (demands_.try_emplace(root, layout).first->second == layout) accumulator_classes.insert(root);
      }
    }
    demand_broadcast_sources(accumulator_classes);
  }

  /// A class whose first broadcast (in program order) is into one of
  /// `classes` is demanded that class's layout with the broadcast dimensions
  /// dropped, so that the broadcast stays inside each thread.
  void demand_broadcast_sources(const std::set<const Value*>& classes) {
    if (classes.empty()) return;
    std::set<const Value*> broadcast_seen;
    for (const Operation* op : all_ops_) {
      if (op->code != OpCode::broadcast || !op->operands[0]->type.is_tile()) continue;
      const Value* operand_root = classes_.find(op->operands[0]);
      if (!broadcast_seen.insert(operand_root).second) continue;
      const Value* result_root = classes_.find(op->result());
      if (!classes.contains(result_root)) continue;
      demands_.try_emplace(operand_root,
                           broadcast_operand_layout(demands_.at(result_root), op->operands[0]->type.shape));
    }
  }

  /// A 2-D load or store whose addresses run along dim0 in vectors (a tile
  /// read transposed: attention's K^T) demands for its class the blocked
  /// layout of the kernel's rule with the dimensions swapped, dim0 fastest,
  /// so that each thread's registers step along memory and its accesses are
  /// vectors rather than one element per row; its broadcast sources follow.
  /// A class that another access reads or writes along dim1 (a transpose's
  /// load and store) keeps the kernel's layout: one of the two would be
  /// scalar either way.
  void demand_transposed_access_layouts() {
    std::set<const Value*> along_rows, transposed;
    for (const Operation* op : all_ops_)
      if (const Value* pointers = accessed_pointers(*op);
          pointers && pointers->type.shape.size() == 2 && fastest_dimension(axes_.at(*pointers)) == 1)
        along_rows.insert(classes_.find(pointers));
    for (const Operation* op : all_ops_) {
      const Value* pointers = accessed_pointers(*op);
      if (!pointers || pointers->type.shape.size() != 2 || fastest_dimension(axes_.at(*pointers)) != 0) continue;
      if (along_rows.contains(classes_.find(pointers))) continue;
      const ir::Shape& shape = pointers->type.shape;
      const std::int64_t share = std::max<std::int64_t>(1, pointers->type.numel() / (kLanesPerWarp * num_warps_));
      const std::int64_t width = std::min({access_vector_width(axes_, *op), shape[0], share});
      if (width < 2) continue;
      const BlockedParameters swapped = kernel_blocked_parameters({shape[1], shape[0]}, width, num_warps_);
      auto unswap = [](const std::vector<std::int64_t>& list) { return std::vector<std::int64_t>{list[1], list[0]}; };
      const LinearLayout layout =
          blocked_layout(shape, unswap(swapped.size_per_thread), unswap(swapped.threads_per_warp),
                         unswap(swapped.warps_per_cta), {0, 1});
      const Value* root = classes_.find(pointers);
      if (demands_.try_emplace(root, layout).first->second == layout) transposed.insert(root);
    }
    demand_broadcast_sources(transposed);
  }

  /// The pointers of a 2-D async_copy (a pipelined loop's operand tile, which
  /// only the copy reads in registers) whose kernel layout of their rank,
  /// sized by its largest tile, holds each element in several threads
  /// (matmul's 64 x 32 a beside its 64 x 64 accumulator: each would copy it)
  /// demand the blocked layout of their own shape at their access width.
  /// Their broadcast sources follow. A copy whose kernel layout holds each
  /// element once keeps it, and so its offsets stay those of the tiles they
  /// are shared with. Copies along dim0 took the transposed layout above.
  void demand_copy_layouts() {
    std::set<const Value*> demanded;
    for (const Operation* op : all_ops_) {
      if (op->code != OpCode::async_copy) continue;
      const Value* pointers = op->operands[2];
      const ir::Shape& shape = pointers->type.shape;
      if (shape.size() != 2 || fastest_dimension(axes_.at(*pointers)) != 1) continue;
      if (rank_layout(shape).is_injective()) continue;
      const std::int64_t share = std::max<std::int64_t>(1, pointers->type.numel() / (kLanesPerWarp * num_warps_));
      const std::int64_t width = std::min({access_vector_width(axes_, *op), shape[1], share});
      if (demand_own_layout(pointers, width)) demanded.insert(classes_.find(pointers));
    }
    demand_broadcast_sources(demanded);
  }

  /// Demands for `value`'s class the blocked layout of its own shape with
  /// `width` elements per thread along the last dimension; whether the class
  /// is demanded that layout (an earlier demand stays).
  bool demand_own_layout(const Value* value, std::int64_t width) {
    const ir::Shape& shape = value->type.shape;
    const BlockedParameters own = kernel_blocked_parameters(shape, width, num_warps_);
    const LinearLayout layout =
        blocked_layout(shape, own.size_per_thread, own.threads_per_warp, own.warps_per_cta, own.order);
    return demands_.try_emplace(classes_.find(value), layout).first->second == layout;
  }

  /// The results of a reshape, trans, join or split whose kernel layout of
  /// their rank, sized by its largest tile, would hold each element in
  /// several threads although the tile has an element for every thread
  /// (sort's 32 x 8 halves beside its 8 x 64 rows) demand the blocked layout
  /// of their own shape; their broadcast sources follow. (A class that only
  /// shape ops read derives its layout from the op: derive_shape_op_layouts.)
  void demand_shape_op_layouts() {
    std::set<const Value*> demanded;
    for (const Operation* op : all_ops_) {
      if (!is_shape_op(op->code)) continue;
      for (const Value* result : op->results) {
        const ir::Shape& shape = result->type.shape;
        const std::int64_t share = result->type.numel() / (kLanesPerWarp * num_warps_);
        if (!result->type.is_tile() || shape.size() < 2 || share < 1 || rank_layout(shape).is_injective()) continue;
        auto of_rank = rank_width_.find(shape.size());
        const std::int64_t width =
            std::min({of_rank == rank_width_.end() ? std::int64_t{1} : of_rank->second, shape.back(), share});
        if (demand_own_layout(result, width)) demanded.insert(classes_.find(result));
      }
    }
    demand_broadcast_sources(demanded);
  }

  /// A class of rank r may be demanded a slice of a layout of rank r + 1: a
  /// reduce leaves its results in the slice of its input's layout;
  /// expand_dims needs its operand, and join its operands, in the slice of
  /// the result's layout. A reduce's layout is where its results are
  /// produced, so it decides the class's layout before any expand_dims or
  /// join does; of two reduces leaving one class in different layouts the
  /// first decides, and the other converts its results (codegen_reduce.cpp).
  /// Among the slices expand_dims and join ask of a class, it takes the one
  /// that leaves the fewest operands to convert that code generation cannot
  /// compute again (rematerialize.hpp), the first in program order on a tie:
  /// conv2d's reduction-term indices, which the a tile's divisions and the b
  /// tile's copy both use, live where the divisions are. `demands_` holds
  /// the layout chosen per class; ranks are settled from the highest down, as
  /// each slice is of a layout one rank up.
  void settle_slice_demands() {
    const int top_rank = rank_parameters_.empty() ? 1 : static_cast<int>(rank_parameters_.rbegin()->first);
    auto is_rank = [](const Value* v, int rank) {
      return v->type.is_tile() && static_cast<int>(v->type.shape.size()) == rank;
    };
    for (int rank = top_rank - 1; rank >= 1; --rank) {
      for (const Operation* op : all_ops_) {
        if (op->code != OpCode::reduce || !is_rank(op->operands[0], rank + 1)) continue;
        const int axis = static_cast<int>(op->int_attribute("axis"));
        const LinearLayout layout = slice_layout(class_layout(op->operands[0]), axis);
        for (const Value* result : op->results) demands_.try_emplace(classes_.find(result), layout);
      }
      // Per class, in program order: each operand and the slice its use asks for.
      std::map<const Value*, std::vector<std::pair<const Value*, LinearLayout>>> asked;
      for (const Operation* op : all_ops_) {
        // join's operands take the slice of its result's layout: each thread then holds its pairs.
        if (op->code == OpCode::join && is_rank(op->operands[0], rank) && is_rank(op->result(), rank + 1))
          for (const Value* operand : op->operands)
            asked[classes_.find(operand)].emplace_back(operand, slice_layout(class_layout(op->result()), rank));
        if (op->code == OpCode::expand_dims && is_rank(op->operands[0], rank) && is_rank(op->result(), rank + 1))
          asked[classes_.find(op->operands[0])].emplace_back(
              op->operands[0], slice_layout(class_layout(op->result()), static_cast<int>(op->int_attribute("axis"))));
      }
      for (const auto& [root, uses] : asked)
        if (!demands_.contains(root)) demands_.emplace(root, fewest_moved_operands(uses));
    }
  }

  /// Of the layouts `uses` ask for, the first that leaves the fewest of their
  /// operands to convert other than by computing them again.
  static LinearLayout fewest_moved_operands(const std::vector<std::pair<const Value*, LinearLayout>>& uses) {
    const LinearLayout* best = nullptr;
    std::size_t best_moved = 0;
    for (const auto& asking : uses) {
      const LinearLayout& candidate = asking.second;
      const auto moved = static_cast<std::size_t>(std::count_if(uses.begin(), uses.end(), [&](const auto& use) {
        return use.second != candidate && !is_rematerializable(*use.first);
      }));
      if (best == nullptr || moved < best_moved) {
        best = &candidate;
        best_moved = moved;
      }
    }
    return *best;
  }

  /// reshape, trans, join, split: the schema's rearrange family.
  static bool is_shape_op(OpCode code) { return ir::family_of(code) == ir::OpFamily::rearrange; }

  /// The result class of a reshape, trans, join or split that no op binding
  /// layouts (broadcasts, reductions, a dot's accumulator and result,
  /// regions) touches takes the layout in which the first such op moves no
  /// data, derived from its operand's. A shape op reading such a class does
  /// not bind it, so a chain of shape ops (flip's reshape, trans, split and
  /// join) derives link by link in program order and moves data only where a
  /// link must. Nor does a dot's a or b, which it converts to its operand
  /// layouts from wherever they live: a tile gathered transposed and passed
  /// through trans (conv2d's im2col tile, taps outer) then crosses shared
  /// memory once, into the dot's fragments, instead of once for the trans
  /// and again for the dot.
  void derive_shape_op_layouts() {
    std::map<const Value*, int> bound_uses;
    for (const Operation* op : all_ops_) {
      if (ir::joins_layout(op->code) || is_shape_op(op->code)) continue;
      for (std::size_t i = 0; i < op->operands.size(); ++i) {
        const Value* value = op->operands[i];
        const bool dot_operand = op->code == OpCode::dot && i < 2;
        if (value->type.is_tile() && !dot_operand) ++bound_uses[classes_.find(value)];
      }
      for (const Value* value : op->results)
        if (value->type.is_tile()) ++bound_uses[classes_.find(value)];
      for (const auto& region : op->regions)
        for (const Value* argument : region->arguments)
          if (argument->type.is_tile()) ++bound_uses[classes_.find(argument)];
    }
    for (const Operation* op : all_ops_) {
      if (!is_shape_op(op->code) || !op->operands[0]->type.is_tile() || !op->results[0]->type.is_tile()) continue;
      const Value* operand = op->operands[0];
      const Value* root = classes_.find(op->results[0]);
      if (root == classes_.find(operand) || bound_uses[root] != 0 || derived_.contains(root)) continue;
      auto operand_derived = derived_.find(classes_.find(operand));
      const LinearLayout operand_layout =
          operand_derived != derived_.end() ? operand_derived->second : class_layout(operand);
      if (std::optional<LinearLayout> layout = moveless_result_layout(*op, operand_layout))
        derived_.insert_or_assign(root, std::move(*layout));
    }
  }

  /// expand_dims reads its operand in the slice of its result's layout.
  void record_expand_dims_conversions(LayoutMap& layouts) const {
    for (const Operation* op : all_ops_) {
      if (op->code != OpCode::expand_dims || !op->operands[0]->type.is_tile()) continue;
      const Value* operand = op->operands[0];
      const LinearLayout& lives_in = layouts.at(*operand);
      LinearLayout needed = slice_layout(layouts.at(*op->result()), static_cast<int>(op->int_attribute("axis")));
      if (lives_in != needed) layouts.add_conversion(*op, LayoutConversion{operand, lives_in, std::move(needed)});
    }
  }

  /// dot reads its accumulator in its result's layout (on tensor cores its
  /// own mma layout, which its result's class has unless a dot splitting
  /// its warps otherwise decided it first), and a and b in the mma.sync
  /// fragment layouts (tensor cores) or in operand layouts derived from the
  /// result's (FMA units); an operand a local_load makes it reads
  /// from the shared slot itself (codegen_shared_buffer.cpp), and a wgmma
  /// dot b from shared memory (codegen_wgmma.cpp).
  void record_dot_conversions(LayoutMap& layouts) const {
    for (const Operation* op : all_ops_) {
      if (op->code != OpCode::dot || op->operands.size() != 3 || op->operands[0]->type.shape.size() != 2) continue;
      const LinearLayout& result = layouts.at(*op->result());
      const std::int64_t k_size = op->operands[0]->type.shape[1];
      const bool tensor_cores = dot_uses_tensor_cores(*op, target_);
      auto need = [&](const Value* value, LinearLayout needed) {
        const LinearLayout& lives_in = layouts.at(*value);
        if (lives_in != needed) layouts.add_conversion(*op, LayoutConversion{value, lives_in, std::move(needed)});
      };
      // A wgmma dot stores b into shared memory from where it lives.
      const bool b_from_shared = dot_uses_wgmma(fn_, *op, target_, axes_);
      for (const auto& [index, operand] : {std::pair{0, DotOperand::a}, std::pair{1, DotOperand::b}})
        if (!reads_shared_slot(*op, index) && !(index == 1 && b_from_shared))
          need(op->operands[index],
               tensor_cores ? dot_fragment_layout(*op, operand, target_) : dot_operand_layout(result, operand, k_size));
      need(op->operands[2], tensor_cores ? dot_accumulator_layout(*op, target_) : result);
    }
  }

  const ir::Function& fn_;
  const AxisInfoMap& axes_;
  const GpuTarget& target_;
  const int num_warps_;
  std::vector<const Operation*> all_ops_;  // nested regions included, parents first
  Classes classes_;
  std::vector<const Value*> tiles_;
  std::map<const Value*, std::int64_t> class_width_;  // per class root
  std::map<std::size_t, std::int64_t> rank_width_;    // per rank above 1
  std::map<std::size_t, BlockedParameters> rank_parameters_;
  std::map<const Value*, LinearLayout> demands_;  // per class root
  std::map<const Value*, LinearLayout> derived_;  // per class root
};

}  // namespace

bool is_uniform_tile(const Value& value) {
  return value.type.is_tile() && !value.type.is_pointer && value.def &&
         (value.def->code == OpCode::splat || value.def->code == OpCode::constant);
}

LayoutMap assign_layouts(const ir::Function& fn, const AxisInfoMap& axes, const GpuTarget& target) {
  const int num_warps = target.num_warps;
  if (num_warps < 1 || num_warps > 32 || (num_warps & (num_warps - 1)) != 0)
    throw LoweringError("num_warps is " + std::to_string(num_warps) + ", expected a power of two from 1 to 32");
  return LayoutAssignment(fn, axes, target).run();
}

namespace {

/// thread_local_register_map's map, or why there is none (`failure` set).
std::vector<int> register_map_or_failure(const LinearLayout& result, const ir::Shape& result_shape,
                                         const LinearLayout& source, const ir::Shape& source_shape, int inserted_axis,
                                         std::string& failure) {
  // The source coordinates of a result coordinate vector.
  auto project = [&](const std::vector<std::int32_t>& coords) {
    std::vector<std::int32_t> out;
    for (std::size_t d = 0; d < result_shape.size(); ++d) {
      if (static_cast<int>(d) == inserted_axis) continue;
      out.push_back(source_shape[out.size()] == 1 ? 0 : coords[d]);
    }
    return out;
  };
  auto coordinates = [](const LinearLayout& layout, std::int32_t reg, std::int32_t lane, std::int32_t warp) {
    std::vector<std::int32_t> coords;
    for (const auto& [name, value] : layout.apply({{"register", reg}, {"lane", lane}, {"warp", warp}}))
      coords.push_back(value);
    return coords;
  };
  // By linearity the thread's part agrees everywhere iff it agrees on each lane and warp bit.
  for (const char* in : {"lane", "warp"}) {
    for (int bit = 0; bit < result.in_dim_size_log2(in); ++bit) {
      const std::int32_t index = std::int32_t{1} << bit;
      const bool is_lane = std::string(in) == "lane";
      const auto wanted = project(coordinates(result, 0, is_lane ? index : 0, is_lane ? 0 : index));
      const auto held = coordinates(source, 0, is_lane ? index : 0, is_lane ? 0 : index);
      if (wanted != held) {
        failure = std::string("its operand lives in other threads (") + in + " bit " + std::to_string(bit) + ")";
        return {};
      }
    }
  }
  std::map<std::vector<std::int32_t>, int> register_of;
  for (int r = source.in_dim_size("register") - 1; r >= 0; --r) register_of[coordinates(source, r, 0, 0)] = r;
  std::vector<int> map;
  for (int r = 0; r < result.in_dim_size("register"); ++r) {
    auto it = register_of.find(project(coordinates(result, r, 0, 0)));
    if (it == register_of.end()) {
      failure = "register " + std::to_string(r) + " needs an element its thread does not hold";
      return {};
    }
    map.push_back(it->second);
  }
  return map;
}

}  // namespace

std::vector<int> thread_local_register_map(const LinearLayout& result, const ir::Shape& result_shape,
                                           const LinearLayout& source, const ir::Shape& source_shape, int inserted_axis,
                                           const std::string& what) {
  std::string failure;
  std::vector<int> map = register_map_or_failure(result, result_shape, source, source_shape, inserted_axis, failure);
  if (!failure.empty())
    throw InternalError(what + ": " + failure + "; layout assignment recorded no conversion for it");
  return map;
}

bool is_thread_local(const LinearLayout& result, const ir::Shape& result_shape, const LinearLayout& source,
                     const ir::Shape& source_shape, int inserted_axis) {
  std::string failure;
  register_map_or_failure(result, result_shape, source, source_shape, inserted_axis, failure);
  return failure.empty();
}

BlockedParameters kernel_blocked_parameters(const ir::Shape& largest, std::int64_t width, int num_warps) {
  const std::size_t rank = largest.size();
  if (rank == 0) throw std::invalid_argument("kernel_blocked_parameters: the shape is empty (a scalar has no layout)");
  BlockedParameters parameters;
  parameters.size_per_thread.assign(rank, 1);
  parameters.size_per_thread[rank - 1] = width;
  parameters.threads_per_warp.assign(rank, 1);
  parameters.warps_per_cta.assign(rank, 1);
  for (std::size_t d = rank; d-- > 0;) parameters.order.push_back(static_cast<std::int64_t>(d));
  // Lanes, then warps, fill the dimensions from the last; the first takes what is left.
  auto extent = [&](std::size_t d) {
    return static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(largest[d])));
  };
  std::int64_t lanes_left = kLanesPerWarp;
  for (std::size_t d = rank - 1; d >= 1; --d) {
    parameters.threads_per_warp[d] = std::clamp<std::int64_t>(extent(d) / parameters.size_per_thread[d], 1, lanes_left);
    lanes_left /= parameters.threads_per_warp[d];
  }
  parameters.threads_per_warp[0] = lanes_left;
  std::int64_t warps_left = num_warps;
  for (std::size_t d = rank - 1; d >= 1; --d) {
    const std::int64_t covered = parameters.size_per_thread[d] * parameters.threads_per_warp[d];
    parameters.warps_per_cta[d] = std::clamp<std::int64_t>(extent(d) / covered, 1, warps_left);
    warps_left /= parameters.warps_per_cta[d];
  }
  parameters.warps_per_cta[0] = warps_left;
  return parameters;
}

}  // namespace kiln::lowering
