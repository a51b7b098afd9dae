// LLVM code generation, a tile in shared memory (SharedTile): the offsets of
// the elements a thread holds, from its register layout composed with the
// tile's shared layout (register_offsets), vector accesses where the two put
// a thread's registers next to each other, and ldmatrix reads of mma
// fragments. Offsets are linear over GF(2), so the offset of a register of a
// thread is a compile-time part per register XOR one thread part from its
// lane and warp.
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <set>

#include "codegen.hpp"

namespace kiln::lowering {

namespace {

/// The OR of `bases`: every bit a thread part built from them may have.
std::int32_t bits_of(const std::vector<std::int32_t>& bases) {
  std::int32_t bits = 0;
  for (std::int32_t basis : bases) bits |= basis;
  return bits;
}

llvm::Intrinsic::ID ldmatrix_intrinsic(const LdmatrixPlan& plan) {
  switch (plan.matrices) {
    case 1:
      return plan.transposed ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_trans_b16
                             : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16;
    case 2:
      return plan.transposed ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16
                             : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16;
    default:
      return plan.transposed ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                             : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16;
  }
}

}  // namespace

SharedTile::SharedTile(KernelCodegen& cg, const LinearLayout& layout, const LinearLayout& shared,
                       llvm::Type* memory_type, llvm::Value* base, llvm::Value* element_offset)
    : cg_(cg),
      offsets_(register_offsets(layout, shared)),
      memory_type_(memory_type),
      base_(base),
      element_offset_(element_offset) {
  llvm::IRBuilderBase& b = cg.builder;
  warp_part_ = xor_of_set_bits(b, b.getInt32(0), offsets_.warps, cg.warp);
  thread_part_ = xor_of_set_bits(b, warp_part_, offsets_.lanes, cg.lane);
  warp_bits_ = bits_of(offsets_.warps);
  thread_bits_ = warp_bits_ | bits_of(offsets_.lanes);
  const auto element_bytes = static_cast<int>(cg.module.getDataLayout().getTypeAllocSize(memory_type));
  width_ = shared_vector_elements(offsets_, element_bytes);
}

llvm::Value* SharedTile::address(llvm::Value* thread_part, std::int32_t thread_bits, std::int32_t offset) {
  llvm::IRBuilderBase& b = cg_.builder;
  // Bits the thread part never has are added, not XORed: the address is then
  // one of few XORed bases plus an immediate offset, instead of a register of
  // its own for every access (each live across a loop once hoisted).
  const std::int32_t xored = offset & thread_bits, added = offset & ~thread_bits;
  llvm::Value* index =
      xored == 0 ? thread_part : b.CreateXor(thread_part, b.getInt32(static_cast<std::uint32_t>(xored)));
  if (element_offset_) index = b.CreateAdd(element_offset_, index);
  llvm::Value* address = b.CreateGEP(memory_type_, base_, index);
  return added == 0 ? address : b.CreateConstGEP1_32(memory_type_, address, static_cast<unsigned>(added));
}

llvm::Value* SharedTile::address_of_register(int reg) {
  return address(thread_part_, thread_bits_, offsets_.at(reg, 0, 0));
}

void SharedTile::store(const std::vector<llvm::Value*>& values) {
  llvm::IRBuilderBase& b = cg_.builder;
  auto in_memory = [&](llvm::Value* value) {
    return value->getType() == memory_type_ ? value : b.CreateZExt(value, memory_type_);
  };
  const llvm::Align alignment(cg_.module.getDataLayout().getTypeAllocSize(memory_type_) * width_);
  std::set<std::int32_t> stored;
  for (int first = 0; first < static_cast<int>(values.size()); first += width_) {
    if (!stored.insert(offsets_.at(first, 0, 0)).second) continue;
    llvm::Value* address = address_of_register(first);
    if (width_ == 1) {
      b.CreateStore(in_memory(values[static_cast<std::size_t>(first)]), address);
      continue;
    }
    llvm::Value* vector = llvm::PoisonValue::get(llvm::FixedVectorType::get(memory_type_, width_));
    for (int i = 0; i < width_; ++i)
      vector = b.CreateInsertElement(vector, in_memory(values[static_cast<std::size_t>(first + i)]), i);
    b.CreateAlignedStore(vector, address, alignment);
  }
}

std::vector<llvm::Value*> SharedTile::load(llvm::Type* register_type) {
  llvm::IRBuilderBase& b = cg_.builder;
  auto in_register = [&](llvm::Value* value) {
    return register_type == memory_type_ ? value : b.CreateTrunc(value, register_type);
  };
  const llvm::Align alignment(cg_.module.getDataLayout().getTypeAllocSize(memory_type_) * width_);
  std::vector<llvm::Value*> values;
  for (int first = 0; first < offsets_.register_count(); first += width_) {
    llvm::Value* address = address_of_register(first);
    if (width_ == 1) {
      values.push_back(in_register(b.CreateLoad(memory_type_, address)));
      continue;
    }
    llvm::Value* vector = b.CreateAlignedLoad(llvm::FixedVectorType::get(memory_type_, width_), address, alignment);
    for (int i = 0; i < width_; ++i) values.push_back(in_register(b.CreateExtractElement(vector, i)));
  }
  return values;
}

std::vector<llvm::Value*> SharedTile::load_with_ldmatrix(const LdmatrixPlan& plan, llvm::Type* register_type,
                                                         int first) {
  llvm::IRBuilderBase& b = cg_.builder;
  if (!row_part_) {
    // The row this lane supplies, relative to each group's first register.
    row_part_ = xor_of_set_bits(b, warp_part_, plan.lane_offsets, cg_.lane);
    row_bits_ = warp_bits_ | bits_of(plan.lane_offsets);
  }
  llvm::Value* row = address(row_part_, row_bits_, offsets_.at(first, 0, 0));
  llvm::Value* loaded = b.CreateIntrinsic(ldmatrix_intrinsic(plan), {row->getType()}, {row});
  const auto per_word = static_cast<unsigned>(plan.elements_per_register);
  llvm::Type* word_type = per_word == 1 ? register_type : llvm::FixedVectorType::get(register_type, per_word);
  std::vector<llvm::Value*> values;
  for (unsigned matrix = 0; matrix < static_cast<unsigned>(plan.matrices); ++matrix) {
    llvm::Value* word =
        b.CreateBitCast(plan.matrices == 1 ? loaded : b.CreateExtractValue(loaded, {matrix}), word_type);
    for (unsigned e = 0; e < per_word; ++e) values.push_back(per_word == 1 ? word : b.CreateExtractElement(word, e));
  }
  return values;
}

}  // namespace kiln::lowering
