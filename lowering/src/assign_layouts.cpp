// Layout assignment: one class per group of values element-wise ops combine,
// a blocked layout per class (sliced where a 1-D class feeds expand_dims).
// The rule is documented on assign_layouts in assign_layouts.hpp.
#include "kiln/lowering/assign_layouts.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <string>

#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/compile.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;
using ir::Operation;
using ir::Value;

constexpr int kLanesPerWarp = 32;

/// Ops whose tile operands and results of one shape are combined element by
/// element; the others (shape changes, dot, reductions, regions) separate classes.
bool combines_elementwise(OpCode code) {
  switch (code) {
    case OpCode::broadcast:
    case OpCode::expand_dims:
    case OpCode::reshape:
    case OpCode::trans:
    case OpCode::join:
    case OpCode::split:
    case OpCode::dot:
    case OpCode::reduce:
    case OpCode::scan:
    case OpCode::for_:
    case OpCode::if_:
    case OpCode::while_:
    case OpCode::yield: return false;
    default: return true;
  }
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

/// The layout a 1-D class must take because an op needs it: the slice of the
/// 2-D layout an expand_dims produces, or the one a reduce leaves.
struct SliceDemand {
  const Operation* op;
  LinearLayout layout;
};

/// "expand_dims {axis = 1} (k.hpp:5)": a demanding op, for messages.
std::string describe_demand(const Operation& op) {
  return std::string(op.name()) + " {axis = " + std::to_string(op.int_attribute("axis")) + "} (" + op_place(op) + ")";
}

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
  throw LoweringError("no register layout was assigned to %" + std::to_string(value.id) + " (" +
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

LayoutMap assign_layouts(const ir::Function& fn, const AxisInfoMap& axes, int num_warps) {
  if (num_warps < 1 || num_warps > 32 || (num_warps & (num_warps - 1)) != 0)
    throw LoweringError("num_warps is " + std::to_string(num_warps) + ", expected a power of two from 1 to 32");

  // Every op of the kernel, nested regions included, parents first.
  std::vector<const Operation*> all_ops;
  ir::walk(fn.body, [&](ir::Operation& op) { all_ops.push_back(&op); });

  Classes classes;
  std::vector<const Value*> tiles;
  auto add_tile = [&](const Value* value, const Operation& place) {
    if (!value->type.is_tile()) return;
    if (value->type.shape.size() > 2)
      throw LoweringError("the GPU code generator supports 1-D and 2-D tiles only, %" + std::to_string(value->id) +
                          " is " + ir::to_string(value->type) + " (" + op_place(place) + ")");
    tiles.push_back(value);
    classes.find(value);
  };
  for (const Operation* op : all_ops) {
    for (const Value* result : op->results) add_tile(result, *op);
    for (const auto& region : op->regions)
      for (const Value* argument : region->arguments) add_tile(argument, *op);
    for (const auto& group : region_carried_groups(*op))
      for (const Value* value : group)
        if (value->type.is_tile()) classes.unite(value, group.front());
    if (!combines_elementwise(op->code)) continue;
    const Value* first = nullptr;
    auto join = [&](const Value* v) {
      if (!v->type.is_tile()) return;
      if (!first)
        first = v;
      else if (v->type.shape == first->type.shape)
        classes.unite(v, first);
    };
    for (const Value* result : op->results) join(result);
    for (const Value* operand : op->operands) join(operand);
  }

  // Widest access per class, and the widest over all 2-D accesses (they share a layout).
  std::map<const Value*, std::int64_t> class_width;
  std::int64_t width_2d = 1;
  for (const Operation* op : all_ops) {
    if (op->code != OpCode::load && op->code != OpCode::store) continue;
    const Value* pointers = op->operands[0];
    if (!pointers->type.is_tile()) continue;
    const int last = static_cast<int>(pointers->type.shape.size()) - 1;
    if (fastest_dimension(axes.at(*pointers)) != last) continue;
    // A thread holds no more than its share of the tile, so small tiles are
    // spread over all threads instead of replicated (Triton's coalesce rule).
    const std::int64_t share = std::max<std::int64_t>(1, pointers->type.numel() / (kLanesPerWarp * num_warps));
    const std::int64_t width = std::min({access_vector_width(axes, *op), pointers->type.shape[last], share});
    std::int64_t& w = class_width[classes.find(pointers)];
    w = std::max(w, width);
    if (last == 1) width_2d = std::max(width_2d, width);
  }

  // One 2-D blocked layout for the whole kernel, sized by its largest 2-D tile.
  ir::Shape largest_2d;
  for (const Value* v : tiles)
    if (v->type.shape.size() == 2 &&
        (largest_2d.empty() || v->type.numel() > ir::Type::tile(ir::DType::i32, largest_2d).numel()))
      largest_2d = v->type.shape;
  std::vector<std::int64_t> spt_2d, tpw_2d, wpc_2d;
  if (!largest_2d.empty()) {
    const auto columns = static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(largest_2d[1])));
    const std::int64_t lanes_1 = std::clamp<std::int64_t>(columns / width_2d, 1, kLanesPerWarp);
    const std::int64_t warps_1 = std::clamp<std::int64_t>(columns / (width_2d * lanes_1), 1, num_warps);
    spt_2d = {1, width_2d};
    tpw_2d = {kLanesPerWarp / lanes_1, lanes_1};
    wpc_2d = {num_warps / warps_1, warps_1};
  }
  auto layout_2d = [&](const ir::Shape& shape) { return blocked_layout(shape, spt_2d, tpw_2d, wpc_2d, {1, 0}); };

  // A reduce of a 2-D tile leaves its results in the slice of its input's
  // layout; expand_dims needs its operand in the slice of its result's. A
  // reduce's layout is where its results are produced, so it decides the
  // class's layout before any expand_dims does.
  std::map<const Value*, SliceDemand> demands;
  for (const Operation* op : all_ops) {
    if (op->code != OpCode::reduce || op->operands[0]->type.shape.size() != 2) continue;
    const int axis = static_cast<int>(op->int_attribute("axis"));
    for (const Value* result : op->results) {
      const LinearLayout layout = slice_layout(layout_2d(op->operands[0]->type.shape), axis);
      auto [it, inserted] = demands.try_emplace(classes.find(result), SliceDemand{op, layout});
      if (!inserted && it->second.layout != layout)
        throw LoweringError("%" + std::to_string(result->id) + " (" + ir::to_string(result->type) +
                            ") is needed in two register layouts, by " + describe_demand(*it->second.op) + " and " +
                            describe_demand(*op) + "; converting the result of a reduce is not supported yet");
    }
  }
  std::vector<std::pair<const Operation*, LinearLayout>> expand_demands;
  for (const Operation* op : all_ops) {
    if (op->code != OpCode::expand_dims || !op->operands[0]->type.is_tile()) continue;
    const int axis = static_cast<int>(op->int_attribute("axis"));
    LinearLayout layout = slice_layout(layout_2d(op->result()->type.shape), axis);
    demands.try_emplace(classes.find(op->operands[0]), SliceDemand{op, layout});
    expand_demands.emplace_back(op, std::move(layout));
  }

  LayoutMap layouts;
  for (const Value* v : tiles) {
    const ir::Shape& shape = v->type.shape;
    const Value* root = classes.find(v);
    if (shape.size() == 2) {
      layouts.set(*v, layout_2d(shape));
    } else if (auto demanded = demands.find(root); demanded != demands.end()) {
      layouts.set(*v, demanded->second.layout);
    } else {
      auto width = class_width.find(root);
      const std::int64_t per_thread = width == class_width.end() ? 1 : width->second;
      layouts.set(*v, blocked_layout(shape, {per_thread}, {kLanesPerWarp}, {num_warps}, {0}));
    }
  }
  for (const auto& [op, needed] : expand_demands) {
    const Value* operand = op->operands[0];
    const LinearLayout& lives_in = layouts.at(*operand);
    if (lives_in != needed) layouts.add_conversion(*op, LayoutConversion{operand, lives_in, needed});
  }
  return layouts;
}

std::vector<int> thread_local_register_map(const LinearLayout& result, const ir::Shape& result_shape,
                                           const LinearLayout& source, const ir::Shape& source_shape, int inserted_axis,
                                           const std::string& what) {
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
      if (wanted != held)
        throw LoweringError(what + ": its operand lives in other threads (" + in + " bit " + std::to_string(bit) +
                            "); layout assignment recorded no conversion for it");
    }
  }
  std::map<std::vector<std::int32_t>, int> register_of;
  for (int r = source.in_dim_size("register") - 1; r >= 0; --r) register_of[coordinates(source, r, 0, 0)] = r;
  std::vector<int> map;
  for (int r = 0; r < result.in_dim_size("register"); ++r) {
    auto it = register_of.find(project(coordinates(result, r, 0, 0)));
    if (it == register_of.end())
      throw LoweringError(what + ": register " + std::to_string(r) +
                          " needs an element its thread does not hold; layout assignment recorded no conversion "
                          "for it");
    map.push_back(it->second);
  }
  return map;
}

}  // namespace kiln::lowering
