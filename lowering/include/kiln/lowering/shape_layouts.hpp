// Layout rules of the shape ops (reshape, trans, join, split, broadcast) and of scan:
// for the layout a result lives in, the operand layout in which the op moves
// no data. Layout assignment records a conversion of the operand into it
// when the operand lives elsewhere, so the code generator only renames or
// picks registers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/ir.hpp"
#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

class LayoutMap;

/// `trans {order}`: result dimension i is operand dimension order[i], so the
/// operand layout is the result's with output dim i renamed dim{order[i]}
/// (outputs listed dim0, dim1, …). std::invalid_argument when `order` is not
/// a permutation of the result's dimensions.
LinearLayout trans_operand_layout(const LinearLayout& result, const std::vector<std::int64_t>& order);

/// `reshape`: the same hardware index holds the element of the same
/// row-major position, read in the operand's `operand_shape`.
LinearLayout reshape_operand_layout(const LinearLayout& result, const ir::Shape& operand_shape);

/// `join`: each thread holds, of both operands, the elements whose (a, b)
/// pair it holds any half of: the slice of the result along its new last dimension.
LinearLayout join_operand_layout(const LinearLayout& result);

/// `split`: each thread holds both halves of every element of `half` (the
/// layout of either result): `half` with one more register bit, above its
/// own, for the new last dimension of size 2.
LinearLayout split_operand_layout(const LinearLayout& half);

/// `split` of a tile<2 x T> into two scalars: every thread holds both
/// elements, in registers 0 and 1, over 32 lanes and `num_warps` warps.
LinearLayout split_to_scalars_operand_layout(int num_warps);

/// `broadcast` of an operand of `operand_shape` (the result's rank, size 1
/// along the broadcast dimensions): `result` with the coordinates along the
/// dimensions of size 1 dropped, and the registers left holding nothing
/// distinct removed, so each thread holds every element its copies take.
LinearLayout broadcast_operand_layout(const LinearLayout& result, const ir::Shape& operand_shape);

/// For a reshape, trans, join (of tiles) or split (into tiles) whose operand
/// lives in `operand`, the layout of its result (of either half for split)
/// in which the op moves no data; none for other ops. A split whose operand
/// spreads each pair over two threads must move data: its halves take the
/// operand's layout with the lane or warp bit of the pair and the highest
/// register bit trading places, then sliced, so the split exchanges one bit
/// between threads and every thread keeps a distinct share (the plain slice
/// would leave two threads holding copies of each element).
std::optional<LinearLayout> moveless_result_layout(const ir::Operation& op, const LinearLayout& operand);

/// Records, for every reshape, trans, join, split, scan and reduce of `fn`,
/// the conversion of each tile operand into the layout the op needs (above;
/// a scan needs its results' layout, a reduce its first operand's) when it
/// lives in another one; and for
/// every broadcast whose operand does not live in the threads that hold its
/// copies (is_thread_local), the conversion into broadcast_operand_layout.
void record_shape_op_conversions(const ir::Function& fn, int num_warps, LayoutMap& layouts);

}  // namespace kiln::lowering
