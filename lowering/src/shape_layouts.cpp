// Layout rules of the shape ops and scan (shape_layouts.hpp): the operand
// layout each needs so that it moves no data, and the conversions into it.
#include "kiln/lowering/shape_layouts.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/blocked_layout.hpp"
#include "kiln/lowering/compile.hpp"

namespace kiln::lowering {

namespace {

std::string dim_name(std::size_t d) { return "dim" + std::to_string(d); }

/// The output dimension names dim0 … dim{rank-1}, with their sizes, of `shape`.
std::vector<std::pair<std::string, std::int32_t>> named_dims(const ir::Shape& shape) {
  std::vector<std::pair<std::string, std::int32_t>> dims;
  for (std::size_t d = 0; d < shape.size(); ++d) dims.emplace_back(dim_name(d), static_cast<std::int32_t>(shape[d]));
  return dims;
}

/// The layout of a split's halves when its operand lives in `operand`
/// (moveless_result_layout).
LinearLayout split_result_layout(const LinearLayout& operand) {
  const std::size_t pair = operand.out_dims().size() - 1;
  std::vector<LinearLayout::InDim> ins = operand.in_dims();
  auto holds_pair = [&](const LinearLayout::Basis& basis) { return basis[pair] != 0; };
  auto registers = std::find_if(ins.begin(), ins.end(), [](const auto& in) { return in.name == "register"; });
  if (registers != ins.end() && !registers->bases.empty() &&
      std::none_of(registers->bases.begin(), registers->bases.end(), holds_pair))
    for (LinearLayout::InDim& threads : ins) {
      auto spread = std::find_if(threads.bases.begin(), threads.bases.end(), holds_pair);
      if (&threads == &*registers || spread == threads.bases.end()) continue;
      std::swap(*spread, registers->bases.back());
      break;
    }
  return slice_layout(LinearLayout(std::move(ins), operand.out_dims()), static_cast<int>(pair));
}

}  // namespace

LinearLayout trans_operand_layout(const LinearLayout& result, const std::vector<std::int64_t>& order) {
  const std::size_t rank = result.out_dims().size();
  std::vector<int> result_dim_of(rank, -1);
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order.size() == rank && order[i] >= 0 && order[i] < static_cast<std::int64_t>(rank) &&
        result_dim_of[static_cast<std::size_t>(order[i])] < 0)
      result_dim_of[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  for (int source : result_dim_of)
    if (source < 0)
      throw std::invalid_argument("trans_operand_layout: order of " + std::to_string(order.size()) +
                                  " entries is not a permutation of a rank-" + std::to_string(rank) + " layout");
  std::vector<LinearLayout::OutDim> outs;
  for (std::size_t j = 0; j < rank; ++j)
    outs.push_back({dim_name(j), result.out_dims()[static_cast<std::size_t>(result_dim_of[j])].log2_size});
  std::vector<LinearLayout::InDim> ins;
  for (const LinearLayout::InDim& in : result.in_dims()) {
    LinearLayout::InDim permuted{in.name, {}};
    for (const LinearLayout::Basis& basis : in.bases) {
      LinearLayout::Basis values(rank);
      for (std::size_t j = 0; j < rank; ++j) values[j] = basis[static_cast<std::size_t>(result_dim_of[j])];
      permuted.bases.push_back(std::move(values));
    }
    ins.push_back(std::move(permuted));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

LinearLayout reshape_operand_layout(const LinearLayout& result, const ir::Shape& operand_shape) {
  return result.reshape_outs(named_dims(operand_shape));
}

LinearLayout join_operand_layout(const LinearLayout& result) {
  return slice_layout(result, static_cast<int>(result.out_dims().size()) - 1);
}

LinearLayout split_operand_layout(const LinearLayout& half) {
  return half * LinearLayout::identity_1d(2, "register", dim_name(half.out_dims().size()));
}

LinearLayout split_to_scalars_operand_layout(int num_warps) {
  return LinearLayout::identity_1d(2, "register", "dim0") * LinearLayout::zeros_1d(kLanesPerWarp, "lane", "dim0") *
         LinearLayout::zeros_1d(num_warps, "warp", "dim0");
}

LinearLayout broadcast_operand_layout(const LinearLayout& result, const ir::Shape& operand_shape) {
  const std::size_t rank = result.out_dims().size();
  if (operand_shape.size() != rank)
    throw std::invalid_argument("broadcast_operand_layout: the operand has rank " +
                                std::to_string(operand_shape.size()) + ", the result's layout " + std::to_string(rank));
  std::vector<LinearLayout::OutDim> outs = result.out_dims();
  for (std::size_t d = 0; d < rank; ++d)
    if (operand_shape[d] == 1) outs[d].log2_size = 0;
  std::vector<LinearLayout::InDim> ins;
  for (const LinearLayout::InDim& in : result.in_dims()) {
    LinearLayout::InDim projected{in.name, {}};
    for (LinearLayout::Basis basis : in.bases) {
      bool zero = true;
      for (std::size_t d = 0; d < rank; ++d) {
        if (operand_shape[d] == 1) basis[d] = 0;
        zero = zero && basis[d] == 0;
      }
      // Lanes and warps stay, since the thread count is fixed.
      if (!(zero && in.name == "register")) projected.bases.push_back(std::move(basis));
    }
    ins.push_back(std::move(projected));
  }
  return LinearLayout(std::move(ins), std::move(outs));
}

std::optional<LinearLayout> moveless_result_layout(const ir::Operation& op, const LinearLayout& operand) {
  switch (op.code) {
    case ir::OpCode::trans: {
      const std::vector<std::int64_t>& order = op.ints_attribute("order");
      std::vector<std::int64_t> inverse(order.size());
      for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i] >= 0 && order[i] < static_cast<std::int64_t>(order.size()))
          inverse[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(i);
      return trans_operand_layout(operand, inverse);
    }
    case ir::OpCode::reshape: return operand.reshape_outs(named_dims(op.result()->type.shape));
    case ir::OpCode::join: return split_operand_layout(operand);
    case ir::OpCode::split: return split_result_layout(operand);
    default: return std::nullopt;
  }
}

void record_shape_op_conversions(const ir::Function& fn, int num_warps, LayoutMap& layouts) {
  auto need = [&](const ir::Operation& op, const ir::Value& operand, const LinearLayout& needed) {
    if (!operand.type.is_tile()) return;
    const LinearLayout& lives_in = layouts.at(operand);
    if (lives_in != needed) layouts.add_conversion(op, LayoutConversion{&operand, lives_in, needed});
  };
  ir::walk(fn.body, [&](ir::Operation& op) {
    switch (op.code) {
      case ir::OpCode::trans:
        need(op, *op.operands[0], trans_operand_layout(layouts.at(*op.result()), op.ints_attribute("order")));
        break;
      case ir::OpCode::reshape:
        need(op, *op.operands[0], reshape_operand_layout(layouts.at(*op.result()), op.operands[0]->type.shape));
        break;
      case ir::OpCode::join:
        if (!op.operands[0]->type.is_tile()) break;
        for (const ir::Value* operand : op.operands) need(op, *operand, join_operand_layout(layouts.at(*op.result())));
        break;
      case ir::OpCode::split:
        need(op, *op.operands[0],
             op.results[0]->type.is_tile() ? split_operand_layout(layouts.at(*op.results[0]))
                                           : split_to_scalars_operand_layout(num_warps));
        break;
      case ir::OpCode::broadcast: {
        const ir::Value& operand = *op.operands[0];
        const ir::Value& result = *op.result();
        if (operand.type.is_tile() &&
            !is_thread_local(layouts.at(result), result.type.shape, layouts.at(operand), operand.type.shape, -1))
          need(op, operand, broadcast_operand_layout(layouts.at(result), operand.type.shape));
        break;
      }
      case ir::OpCode::scan:
        for (const ir::Value* operand : op.operands) need(op, *operand, layouts.at(*op.results[0]));
        break;
      case ir::OpCode::reduce:
        for (const ir::Value* operand : op.operands) need(op, *operand, layouts.at(*op.operands[0]));
        break;
      default: break;
    }
  });
}

}  // namespace kiln::lowering
