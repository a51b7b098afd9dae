// Duplicated elements of a value in LLVM code: the run-time test of whether a
// thread's copy acts (acting_copies.hpp decides which copy that is) and the
// delivery of the acting copy's result to the other copies, for every
// layout, scalars included.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <bit>

#include "codegen.hpp"

namespace kiln::lowering {

namespace {

/// A scalar as a layout: one register, held by every lane and warp.
LinearLayout replicated_scalar_layout(int num_warps) {
  std::vector<LinearLayout::Basis> lanes(std::countr_zero(static_cast<unsigned>(kLanesPerWarp)), {0});
  std::vector<LinearLayout::Basis> warps(std::countr_zero(static_cast<unsigned>(num_warps)), {0});
  return LinearLayout({{"register", {}}, {"lane", lanes}, {"warp", warps}}, {{"dim0", 0}});
}

}  // namespace

DuplicatedElements::DuplicatedElements(KernelCodegen& cg, const ir::Value& value)
    : DuplicatedElements(cg,
                         value.type.is_tile() ? cg.layouts.at(value) : replicated_scalar_layout(cg.target.num_warps),
                         value.type.element()) {}

DuplicatedElements::DuplicatedElements(KernelCodegen& cg, const ir::Type& element)
    : DuplicatedElements(cg, replicated_scalar_layout(cg.target.num_warps), element) {}

DuplicatedElements::DuplicatedElements(KernelCodegen& cg, LinearLayout layout, ir::Type element)
    : cg_(cg), layout_(std::move(layout)), element_(std::move(element)), copies_(acting_copies(layout_)) {}

bool DuplicatedElements::register_may_act(int reg) const { return (reg & copies_.register_pivots) == 0; }

llvm::Value* DuplicatedElements::thread_acts() {
  llvm::IRBuilder<>& b = cg_.builder;
  llvm::Value* acts = nullptr;
  for (auto [pivots, index] : {std::pair{copies_.lane_pivots, cg_.lane}, std::pair{copies_.warp_pivots, cg_.warp}}) {
    if (pivots == 0) continue;
    llvm::Value* clear =
        b.CreateICmpEQ(b.CreateAnd(index, b.getInt32(static_cast<std::uint32_t>(pivots))), b.getInt32(0));
    acts = acts ? b.CreateAnd(acts, clear) : clear;
  }
  return acts;
}

std::vector<llvm::Value*> DuplicatedElements::coordinates(int reg) {
  std::vector<llvm::Value*> result;
  for (std::size_t d = 0; d < layout_.out_dims().size(); ++d)
    result.push_back(cg_.builder.CreateXor(
        thread_coordinate(cg_, layout_, static_cast<int>(d)),
        cg_.builder.getInt32(static_cast<std::uint32_t>(register_coordinate(layout_, reg, static_cast<int>(d))))));
  return result;
}

llvm::Value* DuplicatedElements::row_major_index(const std::vector<llvm::Value*>& coordinate) {
  llvm::IRBuilder<>& b = cg_.builder;
  llvm::Value* index = b.getInt32(0);
  for (std::size_t d = 0; d < coordinate.size(); ++d)
    index = b.CreateAdd(
        b.CreateMul(index, b.getInt32(static_cast<std::uint32_t>(layout_.out_dim_size(layout_.out_dims()[d].name)))),
        coordinate[d]);
  return index;
}

llvm::Value* DuplicatedElements::flat_index(int reg) { return row_major_index(coordinates(reg)); }

llvm::Value* DuplicatedElements::flat_index_of_first(const std::vector<int>& registers,
                                                     const std::vector<llvm::Value*>& picked) {
  llvm::IRBuilder<>& b = cg_.builder;
  std::vector<llvm::Value*> coordinate;
  for (std::size_t d = 0; d < layout_.out_dims().size(); ++d) {
    const auto constant = [&](int reg) {
      return b.getInt32(static_cast<std::uint32_t>(register_coordinate(layout_, reg, static_cast<int>(d))));
    };
    llvm::Value* register_part = constant(registers.back());
    for (auto reg = registers.rbegin() + 1; reg != registers.rend(); ++reg)
      register_part = b.CreateSelect(picked[static_cast<std::size_t>(*reg)], constant(*reg), register_part);
    coordinate.push_back(b.CreateXor(thread_coordinate(cg_, layout_, static_cast<int>(d)), register_part));
  }
  return row_major_index(coordinate);
}

std::vector<llvm::Value*> DuplicatedElements::deliver(const std::vector<llvm::Value*>& acting,
                                                      const ir::Operation& op) {
  llvm::IRBuilder<>& b = cg_.builder;
  if (copies_.crosses_warps()) return deliver_through_shared_memory(acting, op);
  llvm::Value* lane_part =
      copies_.crosses_lanes() ? xor_of_set_bits(b, cg_.lane, copies_.lane_sources, cg_.lane) : nullptr;
  std::vector<llvm::Value*> delivered;
  for (std::size_t reg = 0; reg < acting.size(); ++reg) {
    llvm::Value* own = acting[static_cast<std::size_t>(copies_.source_register[reg])];
    if (!lane_part) {
      delivered.push_back(own);
      continue;
    }
    llvm::Value* source_lane =
        b.CreateXor(lane_part, b.getInt32(static_cast<std::uint32_t>(copies_.source_lane_offset[reg])));
    delivered.push_back(shuffle_in_warp(cg_, own, WarpShuffle::from_lane, source_lane));
  }
  return delivered;
}

std::vector<llvm::Value*> DuplicatedElements::deliver_through_shared_memory(const std::vector<llvm::Value*>& acting,
                                                                            const ir::Operation& op) {
  llvm::IRBuilder<>& b = cg_.builder;
  llvm::Type* in_register = cg_.element_type(element_, op);
  llvm::Type* in_memory = cg_.memory_type(element_, op);
  std::uint64_t elements = 1;
  for (const auto& out : layout_.out_dims()) elements <<= out.log2_size;
  llvm::Value* buffer = SharedScratch(cg_).take(elements * cg_.module.getDataLayout().getTypeAllocSize(in_memory));
  auto slot = [&](int reg) { return b.CreateGEP(in_memory, buffer, flat_index(reg)); };

  auto store_acting = [&] {
    llvm::Value* acts = thread_acts();
    for (std::size_t reg = 0; reg < acting.size(); ++reg) {
      if (!register_may_act(static_cast<int>(reg))) continue;
      llvm::Value* value = in_memory == in_register ? acting[reg] : b.CreateZExt(acting[reg], in_memory);
      if (!acts) {
        b.CreateStore(value, slot(static_cast<int>(reg)));
        continue;
      }
      auto* store_block = llvm::BasicBlock::Create(cg_.context, "duplicates.store", cg_.kernel);
      auto* merge_block = llvm::BasicBlock::Create(cg_.context, "duplicates.merge", cg_.kernel);
      b.CreateCondBr(acts, store_block, merge_block);
      b.SetInsertPoint(store_block);
      b.CreateStore(value, slot(static_cast<int>(reg)));
      b.CreateBr(merge_block);
      b.SetInsertPoint(merge_block);
    }
  };
  auto load_all = [&] {
    std::vector<llvm::Value*> delivered;
    for (std::size_t reg = 0; reg < acting.size(); ++reg) {
      llvm::Value* value = b.CreateLoad(in_memory, slot(static_cast<int>(reg)));
      delivered.push_back(in_memory == in_register ? value : b.CreateTrunc(value, in_register));
    }
    return delivered;
  };
  return round_trip_through_shared_memory(cg_, store_acting, load_all);
}

}  // namespace kiln::lowering
