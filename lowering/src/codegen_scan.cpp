// LLVM code generation for `scan` (inclusive, along one axis, any number of
// operands, optionally reversed), read off the result's linear layout. The
// axis coordinate's bits are each held by one register, lane or warp bit.
// The lowest bits held by registers are scanned within the thread in order;
// then, for each higher bit in increasing significance, every element joins
// the block of 2^(k+1) positions it belongs to from two halves: it keeps the
// total of its half, and an element of the later half (in scan order)
// prepends the earlier half's total to its prefix. The partner half lives in
// another register, in the lane across a butterfly shuffle, or in another
// warp, read through shared memory between barriers. The combine region only
// needs to be associative: the earlier operand is always its left argument.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <map>

#include "codegen.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;
using Registers = std::vector<llvm::Value*>;

/// The hardware bit that holds one bit of the axis coordinate.
struct AxisBit {
  std::string in;  ///< register, lane or warp
  int bit = 0;
};

class ScanLowering {
 public:
  ScanLowering(KernelCodegen& cg, const ir::Operation& op)
      : cg_(cg),
        b_(cg.builder),
        op_(op),
        axis_(static_cast<int>(op.int_attribute("axis"))),
        reverse_(op.int_attribute("reverse") != 0) {}

  void lower() {
    const ir::Value& first = *op_.results[0];
    const int rank = static_cast<int>(first.type.shape.size());
    if (axis_ < 0 || axis_ >= rank)
      throw LoweringError("scan: axis " + std::to_string(axis_) + " is outside " + ir::to_string(first.type) + " (" +
                          op_place(op_) + ")");
    const LinearLayout& layout = cg_.layouts.at(first);
    const int registers = layout.in_dim_size("register");
    std::vector<Registers> operands;
    for (const ir::Value* operand : op_.operands) {
      cg_.element_type(operand->type, op_);
      const LayoutConversion* conversion = cg_.layouts.conversion(op_, *operand);
      if (!conversion && cg_.layouts.at(*operand) != layout)
        throw InternalError("scan: operand %" + std::to_string(operand->id) +
                            " is not in its result's layout; layout assignment recorded no conversion for it (" +
                            op_place(op_) + ")");
      operands.push_back(conversion ? emit_layout_conversion(cg_, *conversion, op_) : cg_.values_of(*operand));
    }
    const std::vector<AxisBit> bits = axis_bits(layout, first.type.shape[static_cast<std::size_t>(axis_)]);

    // Per register: one value per operand, the inclusive prefix within the
    // block scanned so far and that block's total.
    std::vector<Registers> prefix(static_cast<std::size_t>(registers));
    for (int r = 0; r < registers; ++r)
      for (const Registers& operand : operands) prefix[static_cast<std::size_t>(r)].push_back(operand[r]);
    std::size_t low_register_bits = 0;
    while (low_register_bits < bits.size() && bits[low_register_bits].in == "register") ++low_register_bits;
    std::vector<Registers> total = scan_within_thread(layout, low_register_bits, prefix);
    for (std::size_t k = low_register_bits; k < bits.size(); ++k) {
      const AxisBit& held = bits[k];
      if (held.in == "register") join_register_halves(layout, static_cast<int>(k), prefix, total);
      else if (held.in == "lane") join_halves(held, partner_totals_by_shuffle(held.bit, total), prefix, total);
      else join_halves(held, partner_totals_through_shared_memory(held.bit, total), prefix, total);
    }
    for (std::size_t i = 0; i < op_.results.size(); ++i) {
      Registers values;
      for (const Registers& element : prefix) values.push_back(element[i]);
      cg_.define(*op_.results[i], std::move(values));
    }
  }

 private:
  /// For each bit of the axis coordinate (lowest first), the hardware bit
  /// holding it; LoweringError when a basis steps along the axis and another
  /// dimension, by more than one bit, or when some axis bit has no holder.
  std::vector<AxisBit> axis_bits(const LinearLayout& layout, std::int64_t length) const {
    int length_log2 = 0;
    while ((std::int64_t{1} << length_log2) < length) ++length_log2;
    std::vector<AxisBit> bits(static_cast<std::size_t>(length_log2));
    std::vector<bool> found(bits.size(), false);
    for (const char* in : {"register", "lane", "warp"})
      for (int bit : bits_along_axis(layout, in, axis_, op_)) {
        const std::int32_t step = layout.basis(in, bit)[static_cast<std::size_t>(axis_)];
        int k = 0;
        while ((std::int32_t{1} << k) < step) ++k;
        if ((std::int32_t{1} << k) != step || k >= length_log2 || found[static_cast<std::size_t>(k)])
          throw LoweringError(unsupported_op_message(op_, std::string("over a layout whose ") + in + " bit " +
                                                              std::to_string(bit) + " steps by " +
                                                              std::to_string(step) + " along the axis"));
        bits[static_cast<std::size_t>(k)] = {in, bit};
        found[static_cast<std::size_t>(k)] = true;
      }
    for (std::size_t k = 0; k < bits.size(); ++k)
      if (!found[k])
        throw LoweringError(unsupported_op_message(
            op_, "over a layout that holds no bit " + std::to_string(k) + " of the axis coordinate"));
    return bits;
  }

  /// Whether position `coordinate` is in the later half, in scan order, of its block at bit `k`.
  bool is_later_half(std::int32_t coordinate, int k) const { return ((coordinate >> k) & 1) == (reverse_ ? 0 : 1); }

  /// Scans, in order, each group of registers that differ only in the lowest
  /// `low_bits` axis bits; returns each register's group total.
  std::vector<Registers> scan_within_thread(const LinearLayout& layout, std::size_t low_bits,
                                            std::vector<Registers>& prefix) {
    const std::int32_t group_size = std::int32_t{1} << low_bits;
    // Group (coordinates with the low axis bits cleared) -> axis position in group -> register.
    std::map<std::vector<std::int32_t>, std::map<std::int32_t, int>> groups;
    for (int r = 0; r < static_cast<int>(prefix.size()); ++r) {
      std::vector<std::int32_t> coords = coordinates_of_register(layout, r);
      const std::int32_t position = coords[static_cast<std::size_t>(axis_)] & (group_size - 1);
      coords[static_cast<std::size_t>(axis_)] &= ~(group_size - 1);
      groups[coords].emplace(position, r);  // a replica of a held element is computed again
    }
    std::vector<Registers> total(prefix.size());
    for (const auto& [key, members] : groups) {
      std::vector<int> order;
      for (const auto& [position, reg] : members) order.push_back(reg);
      if (reverse_) std::reverse(order.begin(), order.end());
      Registers accumulated;
      for (int reg : order) {
        Registers& element = prefix[static_cast<std::size_t>(reg)];
        if (!accumulated.empty()) element = emit_combine(cg_, op_, accumulated, element);
        accumulated = element;
      }
      for (int reg : order) total[static_cast<std::size_t>(reg)] = accumulated;
    }
    // Replicated registers (zero bases) hold a copy of a held element.
    for (int r = 0; r < static_cast<int>(prefix.size()); ++r) {
      std::vector<std::int32_t> coords = coordinates_of_register(layout, r);
      const std::int32_t position = coords[static_cast<std::size_t>(axis_)] & (group_size - 1);
      coords[static_cast<std::size_t>(axis_)] &= ~(group_size - 1);
      const int holder = groups[coords].at(position);
      prefix[static_cast<std::size_t>(r)] = prefix[static_cast<std::size_t>(holder)];
      total[static_cast<std::size_t>(r)] = total[static_cast<std::size_t>(holder)];
    }
    return total;
  }

  /// One step at axis bit `k` held by a register bit: the partner half is in
  /// the register whose axis coordinate differs in bit k.
  void join_register_halves(const LinearLayout& layout, int k, std::vector<Registers>& prefix,
                            std::vector<Registers>& total) {
    std::map<std::vector<std::int32_t>, int> register_of;
    for (int r = static_cast<int>(prefix.size()) - 1; r >= 0; --r) register_of[coordinates_of_register(layout, r)] = r;
    Combines combines(*this);
    std::vector<Registers> new_total(total.size());
    for (int r = 0; r < static_cast<int>(prefix.size()); ++r) {
      std::vector<std::int32_t> coords = coordinates_of_register(layout, r);
      const bool later = is_later_half(coords[static_cast<std::size_t>(axis_)], k);
      coords[static_cast<std::size_t>(axis_)] ^= std::int32_t{1} << k;
      const Registers& partner = total[static_cast<std::size_t>(register_of.at(coords))];
      Registers& own_total = total[static_cast<std::size_t>(r)];
      if (later) {
        prefix[static_cast<std::size_t>(r)] = combines(partner, prefix[static_cast<std::size_t>(r)]);
        new_total[static_cast<std::size_t>(r)] = combines(partner, own_total);
      } else {
        new_total[static_cast<std::size_t>(r)] = combines(own_total, partner);
      }
    }
    total = std::move(new_total);
  }

  /// One step at an axis bit held by lane or warp bit `held`, given the
  /// partner half's totals: the later half is known at run time only.
  void join_halves(const AxisBit& held, const std::vector<Registers>& partner, std::vector<Registers>& prefix,
                   std::vector<Registers>& total) {
    llvm::Value* index = held.in == "lane" ? cg_.lane : cg_.warp;
    llvm::Value* set = b_.CreateICmpNE(b_.CreateAnd(index, b_.getInt32(1u << held.bit)), b_.getInt32(0));
    llvm::Value* later = reverse_ ? b_.CreateNot(set) : set;
    Combines combines(*this);
    // Registers of one block share their total: join it once.
    std::map<std::pair<Registers, Registers>, Registers> joined_totals;
    for (std::size_t r = 0; r < prefix.size(); ++r) {
      const Registers extended = combines(partner[r], prefix[r]);
      prefix[r] = select(later, extended, prefix[r]);
      auto [it, inserted] = joined_totals.try_emplace({partner[r], total[r]});
      if (inserted) it->second = select(later, combines(partner[r], total[r]), combines(total[r], partner[r]));
      total[r] = it->second;
    }
  }

  Registers select(llvm::Value* condition, const Registers& if_true, const Registers& if_false) {
    Registers chosen;
    for (std::size_t i = 0; i < if_true.size(); ++i)
      chosen.push_back(b_.CreateSelect(condition, if_true[i], if_false[i]));
    return chosen;
  }

  /// The partner lane's totals, one butterfly shuffle per distinct value.
  std::vector<Registers> partner_totals_by_shuffle(int lane_bit, const std::vector<Registers>& total) {
    llvm::Value* lane_mask = b_.getInt32(static_cast<std::uint32_t>(1 << lane_bit));
    std::map<llvm::Value*, llvm::Value*> shuffled;
    std::vector<Registers> partner;
    for (const Registers& element : total) {
      Registers values;
      for (llvm::Value* value : element) {
        auto [it, inserted] = shuffled.try_emplace(value, nullptr);
        if (inserted) it->second = shuffle_in_warp(cg_, value, WarpShuffle::xor_lane, lane_mask);
        values.push_back(it->second);
      }
      partner.push_back(std::move(values));
    }
    return partner;
  }

  /// The partner warp's totals: every thread stores its distinct totals at
  /// (warp, lane, slot) in shared memory and, after a barrier, reads those of
  /// the same lane in the warp across `warp_bit`. The barrier after the
  /// reads keeps the next use of the scratch (the next bit, the next op, the
  /// next iteration of a loop) from overwriting totals a slower thread has yet
  /// to read.
  std::vector<Registers> partner_totals_through_shared_memory(int warp_bit, const std::vector<Registers>& total) {
    std::map<Registers, std::uint32_t> slot_of;
    std::vector<const Registers*> distinct;
    for (const Registers& element : total)
      if (slot_of.try_emplace(element, static_cast<std::uint32_t>(distinct.size())).second)
        distinct.push_back(&element);
    const std::uint32_t slots = static_cast<std::uint32_t>(distinct.size());
    const std::uint64_t threads = static_cast<std::uint64_t>(cg_.target.num_warps) * kLanesPerWarp;

    // One buffer per result, each in its memory type.
    SharedScratch scratch(cg_);
    std::vector<llvm::Value*> buffers;
    std::vector<llvm::Type*> memory_types;
    for (const ir::Value* result : op_.results) {
      llvm::Type* memory = cg_.memory_type(result->type.element(), op_);
      buffers.push_back(scratch.take(threads * slots * cg_.module.getDataLayout().getTypeAllocSize(memory)));
      memory_types.push_back(memory);
    }
    auto slot_address = [&](std::size_t i, llvm::Value* warp, std::uint32_t slot) {
      llvm::Value* thread = b_.CreateAdd(b_.CreateMul(warp, b_.getInt32(kLanesPerWarp)), cg_.lane);
      llvm::Value* index = b_.CreateAdd(b_.CreateMul(thread, b_.getInt32(slots)), b_.getInt32(slot));
      return b_.CreateGEP(memory_types[i], buffers[i], index);
    };

    auto store = [&] {
      for (std::uint32_t s = 0; s < slots; ++s)
        for (std::size_t i = 0; i < buffers.size(); ++i) {
          llvm::Value* value = (*distinct[s])[i];
          llvm::Type* memory = memory_types[i];
          if (memory != value->getType()) value = b_.CreateZExt(value, memory);
          b_.CreateStore(value, slot_address(i, cg_.warp, s));
        }
    };
    auto load_partners = [&] {
      llvm::Value* partner_warp = b_.CreateXor(cg_.warp, b_.getInt32(1u << warp_bit));
      std::vector<Registers> loaded;
      for (std::uint32_t s = 0; s < slots; ++s) {
        Registers values;
        for (std::size_t i = 0; i < buffers.size(); ++i) {
          llvm::Type* memory = memory_types[i];
          llvm::Type* in_register = (*distinct[s])[i]->getType();
          llvm::Value* value = b_.CreateLoad(memory, slot_address(i, partner_warp, s));
          values.push_back(memory == in_register ? value : b_.CreateTrunc(value, in_register));
        }
        loaded.push_back(std::move(values));
      }
      return loaded;
    };
    const std::vector<Registers> loaded = round_trip_through_shared_memory(cg_, store, load_partners);
    std::vector<Registers> partner;
    for (const Registers& element : total) partner.push_back(loaded[slot_of.at(element)]);
    return partner;
  }

  /// The combine region applied once per distinct pair of operands within one step.
  class Combines {
   public:
    explicit Combines(ScanLowering& scan) : scan_(scan) {}
    Registers operator()(const Registers& left, const Registers& right) {
      auto [it, inserted] = done_.try_emplace({left, right});
      if (inserted) it->second = emit_combine(scan_.cg_, scan_.op_, left, right);
      return it->second;
    }

   private:
    ScanLowering& scan_;
    std::map<std::pair<Registers, Registers>, Registers> done_;
  };

  KernelCodegen& cg_;
  llvm::IRBuilder<>& b_;
  const ir::Operation& op_;
  const int axis_;
  const bool reverse_;
};

}  // namespace

void emit_scan_op(KernelCodegen& cg, const ir::Operation& op) { ScanLowering(cg, op).lower(); }

}  // namespace kiln::lowering
