// LLVM code generation for layout conversions: a use that reads a tile in a
// layout other than the one it lives in gets a converted copy. When every
// thread already holds the elements it needs (plan_register_permute finds a
// plan) the copy renames registers or picks among them; when every element is in the reader's warp and
// plan_warp_shuffle finds a plan, one shfl.sync.idx per register moves it;
// otherwise it goes through shared memory.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <optional>

#include "codegen.hpp"
#include "kiln/lowering/layout_conversion.hpp"

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

/// Row-major offsets, in a buffer of the whole tile, of the elements one
/// thread holds in a layout. Dimensions are powers of two, so the offset of
/// a XOR of coordinates is the XOR of their offsets: a compile-time part per
/// register and one thread part computed from the lane and warp.
class TileOffsets {
 public:
  TileOffsets(KernelCodegen& cg, const LinearLayout& layout, const std::vector<std::string>& row_major_dims)
      : layout_(layout), dims_(row_major_dims) {
    std::vector<std::int32_t> lane_offsets, warp_offsets;
    for (int bit = 0; bit < layout.in_dim_size_log2("lane"); ++bit)
      lane_offsets.push_back(offset_of({{"register", 0}, {"lane", 1 << bit}, {"warp", 0}}));
    for (int bit = 0; bit < layout.in_dim_size_log2("warp"); ++bit)
      warp_offsets.push_back(offset_of({{"register", 0}, {"lane", 0}, {"warp", 1 << bit}}));
    llvm::IRBuilder<>& b = cg.builder;
    thread_part_ = xor_of_set_bits(b, xor_of_set_bits(b, b.getInt32(0), lane_offsets, cg.lane), warp_offsets, cg.warp);
  }

  /// The offset of register `reg` of this thread.
  llvm::Value* of_register(llvm::IRBuilder<>& b, int reg) const {
    const std::int32_t offset = offset_of({{"register", reg}, {"lane", 0}, {"warp", 0}});
    return b.CreateXor(thread_part_, b.getInt32(static_cast<std::uint32_t>(offset)));
  }

 private:
  std::int32_t offset_of(const LinearLayout::Coordinates& location) const {
    const LinearLayout::Coordinates coordinates = layout_.apply(location);
    std::int32_t offset = 0;
    for (const std::string& dim : dims_)
      for (const auto& [name, value] : coordinates)
        if (name == dim) offset = offset * layout_.out_dim_size(dim) + value;
    return offset;
  }

  const LinearLayout& layout_;
  const std::vector<std::string>& dims_;
  llvm::Value* thread_part_ = nullptr;
};

/// Every thread stores each element it holds in `from` at its row-major
/// offset in a buffer of the whole tile, and after a barrier loads the ones
/// it holds in `to`. A second barrier keeps the next use of the buffer (the
/// next iteration of a loop) from overwriting it before every thread has read.
std::vector<llvm::Value*> convert_through_shared_memory(KernelCodegen& cg, const LayoutConversion& conversion,
                                                        const std::vector<llvm::Value*>& values,
                                                        const ir::Operation& user) {
  llvm::IRBuilder<>& b = cg.builder;
  const ir::Type element = conversion.value->type.element();
  llvm::Type* in_register = cg.element_type(element, user);
  llvm::Type* in_memory = cg.memory_type(element, user);
  std::vector<std::string> dims;
  std::uint64_t elements = 1;
  for (const auto& out : conversion.from.out_dims()) {
    dims.push_back(out.name);
    elements *= static_cast<std::uint64_t>(conversion.from.out_dim_size(out.name));
  }
  const std::uint64_t element_bytes = cg.module.getDataLayout().getTypeAllocSize(in_memory);
  llvm::Value* buffer = SharedScratch(cg).take(elements * element_bytes);
  auto slot = [&](llvm::Value* offset) { return b.CreateGEP(in_memory, buffer, offset); };
  auto barrier = [&] { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); };

  const TileOffsets stored(cg, conversion.from, dims);
  for (std::size_t r = 0; r < values.size(); ++r) {
    llvm::Value* value = in_memory == in_register ? values[r] : b.CreateZExt(values[r], in_memory);
    b.CreateStore(value, slot(stored.of_register(b, static_cast<int>(r))));
  }
  barrier();
  const TileOffsets loaded(cg, conversion.to, dims);
  std::vector<llvm::Value*> converted;
  for (int r = 0; r < conversion.to.in_dim_size("register"); ++r) {
    llvm::Value* value = b.CreateLoad(in_memory, slot(loaded.of_register(b, r)));
    converted.push_back(in_memory == in_register ? value : b.CreateTrunc(value, in_register));
  }
  barrier();
  return converted;
}

/// One shfl.sync.idx per destination register, from the lane the plan names.
std::vector<llvm::Value*> convert_with_shuffles(KernelCodegen& cg, const ShufflePlan& plan,
                                                const std::vector<llvm::Value*>& values) {
  llvm::IRBuilder<>& b = cg.builder;
  llvm::Value* thread_lane =
      xor_of_set_bits(b, xor_of_set_bits(b, b.getInt32(0), plan.lane_bases, cg.lane), plan.warp_bases, cg.warp);
  std::vector<llvm::Value*> converted;
  for (std::size_t r = 0; r < plan.source_register.size(); ++r) {
    llvm::Value* source_lane = b.CreateXor(thread_lane, b.getInt32(static_cast<std::uint32_t>(plan.register_lane[r])));
    converted.push_back(shuffle_in_warp(cg, values[static_cast<std::size_t>(plan.source_register[r])],
                                        WarpShuffle::from_lane, source_lane));
  }
  return converted;
}

}  // namespace

std::vector<llvm::Value*> emit_layout_conversion(KernelCodegen& cg, const LayoutConversion& conversion,
                                                 const ir::Operation& user) {
  const std::vector<llvm::Value*>& values =
      cg.values_of(*conversion.value, static_cast<std::size_t>(conversion.from.in_dim_size("register")), user);
  if (const std::optional<RegisterPlan> plan = plan_register_permute(conversion.from, conversion.to))
    return convert_within_threads(cg, *plan, values);
  if (const std::optional<ShufflePlan> plan = plan_warp_shuffle(conversion.from, conversion.to))
    return convert_with_shuffles(cg, *plan, values);
  return convert_through_shared_memory(cg, conversion, values, user);
}

}  // namespace kiln::lowering
