// LLVM code generation for `reduce` along one axis, in three steps read off
// the input's linear layout: combine the registers a thread holds of each
// output element; combine across the lanes whose bases step along the axis
// with butterfly shuffles (every lane ends with the result); combine across
// the warps whose bases step along the axis through shared memory. The
// result is produced in the slice of the input's layout and converted when
// assign_layouts put its class in another layout (another reduce's); a 1-D
// input leaves a scalar every thread holds. The combine region
// is emitted inline for each pairing, so any region the element-wise code
// generator lowers works; it is assumed associative and commutative, as the
// shuffle tree reorders it (Triton assumes the same).
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <map>
#include <optional>

#include "codegen.hpp"
#include "kiln/lowering/blocked_layout.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;
using Registers = std::vector<llvm::Value*>;

std::vector<std::int32_t> without_axis(std::vector<std::int32_t> coords, int axis) {
  coords.erase(coords.begin() + axis);
  return coords;
}

class ReduceLowering {
 public:
  ReduceLowering(KernelCodegen& cg, const ir::Operation& op)
      : cg_(cg), b_(cg.builder), op_(op), axis_(static_cast<int>(op.int_attribute("axis"))) {}

  void lower() {
    const ir::Value& first = *op_.operands[0];
    const LinearLayout& input = cg_.layouts.at(first);
    const int rank = static_cast<int>(first.type.shape.size());
    if (axis_ < 0 || axis_ >= rank)
      throw LoweringError("reduce: axis " + std::to_string(axis_) + " is outside " + ir::to_string(first.type) + " (" +
                          op_place(op_) + ")");
    // The other operands in the first's layout (layout assignment unites
    // them; a uniform tile may live elsewhere and is converted).
    std::vector<Registers> converted;
    converted.reserve(op_.operands.size());
    std::vector<const Registers*> operands;
    for (const ir::Value* operand : op_.operands) {
      cg_.element_type(operand->type, op_);
      if (const LayoutConversion* conversion = cg_.layouts.conversion(op_, *operand)) {
        converted.push_back(emit_layout_conversion(cg_, *conversion, op_));
        operands.push_back(&converted.back());
      } else {
        operands.push_back(&cg_.values_of(*operand, input.in_dim_size("register"), op_));
      }
    }
    const std::optional<LinearLayout> slice =
        rank > 1 ? std::optional<LinearLayout>(slice_layout(input, axis_)) : std::nullopt;
    const LinearLayout* output = slice ? &*slice : nullptr;

    // Per output register, its partial results (one per operand).
    std::vector<Registers> partials = combine_within_thread(input, output, operands);
    for (int bit : bits_along_axis(input, "lane", axis_, op_))
      for (Registers& partial : partials) {
        Registers partner;
        for (llvm::Value* value : partial) partner.push_back(shuffle_xor(value, 1 << bit));
        partial = combine(partial, partner);
      }
    const std::vector<int> warp_bits = bits_along_axis(input, "warp", axis_, op_);
    if (!warp_bits.empty()) partials = combine_across_warps(output, warp_bits, partials);

    for (std::size_t i = 0; i < op_.results.size(); ++i) {
      Registers values;
      for (const Registers& partial : partials) values.push_back(partial[i]);
      cg_.define(*op_.results[i], std::move(values));
      if (slice && cg_.layouts.at(*op_.results[i]) != *slice)
        cg_.define(*op_.results[i],
                   emit_layout_conversion(
                       cg_, LayoutConversion{op_.results[i], *slice, cg_.layouts.at(*op_.results[i])}, op_));
    }
  }

 private:
  /// Combines, for each output register, the thread's registers holding
  /// distinct elements of its row along the axis, in increasing index.
  std::vector<Registers> combine_within_thread(const LinearLayout& input, const LinearLayout* output,
                                               const std::vector<const Registers*>& operands) {
    std::map<std::vector<std::int32_t>, int> output_register;
    const int output_count = output ? output->in_dim_size("register") : 1;
    for (int r = 0; r < output_count; ++r)
      output_register.emplace(output ? coordinates_of_register(*output, r) : std::vector<std::int32_t>{}, r);
    // Per output register: axis coordinate -> input register (replicas dropped).
    std::vector<std::map<std::int32_t, int>> rows(output_count);
    for (int r = 0; r < input.in_dim_size("register"); ++r) {
      const std::vector<std::int32_t> coords = coordinates_of_register(input, r);
      auto it = output_register.find(without_axis(coords, axis_));
      if (it == output_register.end())
        throw InternalError("reduce: input register " + std::to_string(r) + " has no place in the result's layout (" +
                            op_place(op_) + ")");
      rows[it->second].emplace(coords[axis_], r);
    }
    std::vector<Registers> partials;
    for (const auto& row : rows) {
      Registers accumulated;
      for (const auto& [coordinate, reg] : row) {
        Registers element;
        for (const Registers* operand : operands) element.push_back((*operand)[reg]);
        accumulated = accumulated.empty() ? element : combine(accumulated, element);
      }
      partials.push_back(std::move(accumulated));
    }
    return partials;
  }

  /// Every warp stores its partials to shared memory at (output element,
  /// warp's index along the axis); after a barrier each thread combines the
  /// partials of its output elements in warp order. A barrier after the
  /// reads keeps the next op's scratch (or the next iteration of a loop)
  /// from overwriting partials a slower thread has yet to read.
  std::vector<Registers> combine_across_warps(const LinearLayout* output, const std::vector<int>& warp_bits,
                                              const std::vector<Registers>& partials) {
    const std::int64_t warps_along_axis = std::int64_t{1} << warp_bits.size();
    std::int64_t output_elements = 1;
    for (std::size_t d = 0; output && d < output->out_dims().size(); ++d)
      output_elements *= output->out_dim_size(output->out_dims()[d].name);

    llvm::Value* warp_slot = b_.getInt32(0);
    for (std::size_t k = 0; k < warp_bits.size(); ++k) {
      llvm::Value* bit = b_.CreateAnd(b_.CreateLShr(cg_.warp, warp_bits[k]), 1);
      warp_slot = b_.CreateOr(warp_slot, b_.CreateShl(bit, static_cast<std::uint64_t>(k)));
    }
    // Row-major index of each output register's element.
    std::vector<llvm::Value*> element_index;
    for (std::size_t r = 0; r < partials.size(); ++r) {
      llvm::Value* index = b_.getInt32(0);
      for (std::size_t d = 0; output && d < output->out_dims().size(); ++d) {
        llvm::Value* coordinate = b_.CreateXor(thread_coordinate(cg_, *output, static_cast<int>(d)),
                                               register_coordinate(*output, static_cast<int>(r), static_cast<int>(d)));
        index = b_.CreateAdd(b_.CreateMul(index, b_.getInt32(output->out_dim_size(output->out_dims()[d].name))),
                             coordinate);
      }
      element_index.push_back(b_.CreateMul(index, b_.getInt32(static_cast<std::uint32_t>(warps_along_axis))));
    }

    // One buffer per result, each in its memory type.
    SharedScratch scratch(cg_);
    std::vector<llvm::Value*> buffers;
    std::vector<llvm::Type*> memory_types;
    for (const ir::Value* result : op_.results) {
      llvm::Type* memory = cg_.memory_type(result->type.element(), op_);
      const std::uint64_t bytes = cg_.module.getDataLayout().getTypeAllocSize(memory);
      buffers.push_back(scratch.take(static_cast<std::uint64_t>(output_elements * warps_along_axis) * bytes));
      memory_types.push_back(memory);
    }
    auto slot = [&](std::size_t i, llvm::Value* index) { return b_.CreateGEP(memory_types[i], buffers[i], index); };

    auto store = [&] {
      for (std::size_t r = 0; r < partials.size(); ++r)
        for (std::size_t i = 0; i < buffers.size(); ++i)
          b_.CreateStore(to_memory(partials[r][i], i), slot(i, b_.CreateAdd(element_index[r], warp_slot)));
    };
    auto load_and_combine = [&] {
      std::vector<Registers> combined;
      for (std::size_t r = 0; r < partials.size(); ++r) {
        Registers accumulated;
        for (std::int64_t w = 0; w < warps_along_axis; ++w) {
          Registers element;
          for (std::size_t i = 0; i < buffers.size(); ++i) {
            llvm::Value* index = b_.CreateAdd(element_index[r], b_.getInt32(static_cast<std::uint32_t>(w)));
            element.push_back(from_memory(b_.CreateLoad(memory_types[i], slot(i, index)), i));
          }
          accumulated = accumulated.empty() ? element : combine(accumulated, element);
        }
        combined.push_back(std::move(accumulated));
      }
      return combined;
    };
    return round_trip_through_shared_memory(cg_, store, load_and_combine);
  }

  bool is_bool(std::size_t i) const {
    const ir::Type& type = op_.results[i]->type;
    return !type.is_pointer && type.dtype == ir::DType::i1;
  }
  llvm::Value* to_memory(llvm::Value* value, std::size_t i) {
    return is_bool(i) ? b_.CreateZExt(value, b_.getInt8Ty()) : value;
  }
  llvm::Value* from_memory(llvm::Value* value, std::size_t i) {
    return is_bool(i) ? b_.CreateICmpNE(value, b_.getInt8(0)) : value;
  }

  /// The combine region applied to `left` and `right` (one value per operand).
  Registers combine(const Registers& left, const Registers& right) { return emit_combine(cg_, op_, left, right); }

  /// `value` from the lane whose index differs from this one's in `lane_mask`.
  llvm::Value* shuffle_xor(llvm::Value* value, int lane_mask) {
    return shuffle_in_warp(cg_, value, WarpShuffle::xor_lane, b_.getInt32(static_cast<std::uint32_t>(lane_mask)));
  }

  KernelCodegen& cg_;
  llvm::IRBuilder<>& b_;
  const ir::Operation& op_;
  const int axis_;
};

}  // namespace

void emit_reduce_op(KernelCodegen& cg, const ir::Operation& op) { ReduceLowering(cg, op).lower(); }

}  // namespace kiln::lowering
