// LLVM code generation for layout conversions: a use that reads a tile in a
// layout other than the one it lives in gets a converted copy. When every
// thread already holds the elements it needs (plan_register_permute finds a
// plan) the copy renames registers or picks among them; index arithmetic is
// computed again in the needed layout (rematerialize.hpp); when every element
// is in the reader's warp and plan_warp_shuffle finds a plan, one
// shfl.sync.idx per register moves it (with selects around it where lanes
// pick among their registers); otherwise it goes through shared memory.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <optional>

#include "codegen.hpp"
#include "kiln/lowering/layout_conversion.hpp"
#include "kiln/lowering/rematerialize.hpp"

namespace kiln::lowering {

namespace {

/// Each destination register from the thread's own registers: a renaming
/// when the plan's lane and warp bases are 0, else a choice among the
/// registers the thread's lane and warp bits can select.
std::vector<llvm::Value*> convert_within_threads(KernelCodegen& cg, const RegisterPlan& plan,
                                                 const std::vector<llvm::Value*>& values) {
  llvm::IRBuilder<>& b = cg.builder;
  int selectable = 0;
  for (const std::vector<std::int32_t>* bases : {&plan.lane_bases, &plan.warp_bases})
    for (std::int32_t basis : *bases) selectable |= basis;
  llvm::Value* thread_part = nullptr;
  if (selectable != 0)
    thread_part =
        xor_of_set_bits(b, xor_of_set_bits(b, b.getInt32(0), plan.lane_bases, cg.lane), plan.warp_bases, cg.warp);
  std::vector<llvm::Value*> converted;
  for (int base : plan.source_register) {
    if (selectable == 0) {
      converted.push_back(values[static_cast<std::size_t>(base)]);
      continue;
    }
    llvm::Value* index = b.CreateXor(thread_part, b.getInt32(static_cast<std::uint32_t>(base)));
    llvm::Value* chosen = values[static_cast<std::size_t>(base)];
    for (std::size_t candidate = 0; candidate < values.size(); ++candidate) {
      const int difference = static_cast<int>(candidate) ^ base;
      if (difference == 0 || (difference & ~selectable) != 0) continue;
      chosen = b.CreateSelect(b.CreateICmpEQ(index, b.getInt32(static_cast<std::uint32_t>(candidate))),
                              values[candidate], chosen);
    }
    converted.push_back(chosen);
  }
  return converted;
}

/// Every thread stores each element it holds in `from` at its row-major
/// offset in a buffer of the whole tile, and after a barrier loads the ones
/// it holds in `to` (SharedTile: vector accesses where the layouts allow). A
/// second barrier keeps the next use of the buffer (the next iteration of a
/// loop) from overwriting it before every thread has read.
std::vector<llvm::Value*> convert_through_shared_memory(KernelCodegen& cg, const LayoutConversion& conversion,
                                                        const std::vector<llvm::Value*>& values,
                                                        const ir::Operation& user) {
  const ir::Type element = conversion.value->type.element();
  llvm::Type* in_register = cg.element_type(element, user);
  llvm::Type* in_memory = cg.memory_type(element, user);
  const LinearLayout shared = row_major_shared_layout(conversion.from.out_dims());
  const std::uint64_t elements = std::uint64_t{1} << conversion.from.total_out_bits();
  const std::uint64_t element_bytes = cg.module.getDataLayout().getTypeAllocSize(in_memory);
  llvm::Value* buffer = SharedScratch(cg).take(elements * element_bytes);
  return round_trip_through_shared_memory(
      cg, [&] { SharedTile(cg, conversion.from, shared, in_memory, buffer).store(values); },
      [&] { return SharedTile(cg, conversion.to, shared, in_memory, buffer).load(in_register); });
}

/// One round of the plan per destination register: each thread picks the
/// register it offers, reads one lane's offer with shfl.sync.idx (not when
/// every thread would read its own), and picks its destination register
/// among the rounds' results.
std::vector<llvm::Value*> convert_with_shuffles(KernelCodegen& cg, const ShufflePlan& plan,
                                                const std::vector<llvm::Value*>& values) {
  llvm::IRBuilder<>& b = cg.builder;
  const std::vector<llvm::Value*> offered =
      convert_within_threads(cg, RegisterPlan{plan.send_register, plan.send_lane_bases, plan.send_warp_bases}, values);
  llvm::Value* thread_lane =
      xor_of_set_bits(b, xor_of_set_bits(b, b.getInt32(0), plan.lane_bases, cg.lane), plan.warp_bases, cg.warp);
  std::vector<llvm::Value*> received;
  std::vector<int> rounds;
  for (std::size_t t = 0; t < offered.size(); ++t) {
    rounds.push_back(static_cast<int>(t));
    if (plan.reads_own_lane(static_cast<int>(t))) {
      received.push_back(offered[t]);
      continue;
    }
    llvm::Value* source_lane = b.CreateXor(thread_lane, b.getInt32(static_cast<std::uint32_t>(plan.read_lane[t])));
    received.push_back(shuffle_in_warp(cg, offered[t], WarpShuffle::from_lane, source_lane));
  }
  return convert_within_threads(cg, RegisterPlan{rounds, plan.receive_lane_bases, {}}, received);
}

}  // namespace

std::vector<llvm::Value*> emit_layout_conversion(KernelCodegen& cg, const LayoutConversion& conversion,
                                                 const ir::Operation& user) {
  const std::vector<llvm::Value*>& values =
      cg.values_of(*conversion.value, static_cast<std::size_t>(conversion.from.in_dim_size("register")), user);
  switch (planned_conversion_kind(conversion)) {
    case ConversionKind::none:
    case ConversionKind::register_permute:
      return convert_within_threads(cg, *plan_register_permute(conversion.from, conversion.to), values);
    case ConversionKind::rematerialize: return rematerialize(cg, *conversion.value, conversion.to);
    case ConversionKind::warp_shuffle:
      return convert_with_shuffles(cg, *plan_warp_shuffle(conversion.from, conversion.to), values);
    case ConversionKind::shared_memory: break;
  }
  return convert_through_shared_memory(cg, conversion, values, user);
}

}  // namespace kiln::lowering
