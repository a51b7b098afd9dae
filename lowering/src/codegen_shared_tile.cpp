// LLVM code generation, a tile in shared memory (SharedTile): row-major
// offsets of the elements a thread holds, and vector accesses where the
// layout puts a thread's registers next to each other. Dimensions are powers
// of two, so the offset of a XOR of coordinates is the XOR of their offsets:
// a compile-time part per register and one thread part from the lane and warp.
#include <llvm/IR/DerivedTypes.h>

#include <set>

#include "codegen.hpp"

namespace kiln::lowering {

namespace {

/// The largest access a thread makes at once, in bytes (ld.shared.v4.b32).
constexpr std::uint64_t kWidestAccessBytes = 16;

}  // namespace

SharedTile::SharedTile(KernelCodegen& cg, const LinearLayout& layout, const std::vector<std::string>& row_major_dims,
                       llvm::Type* memory_type, llvm::Value* base)
    : cg_(cg), layout_(layout), dims_(row_major_dims), memory_type_(memory_type), base_(base) {
  auto single_bit = [](const char* in, int bit) {
    LinearLayout::Coordinates location{{"register", 0}, {"lane", 0}, {"warp", 0}};
    for (auto& [name, value] : location)
      if (name == in) value = 1 << bit;
    return location;
  };
  std::vector<std::int32_t> lane_offsets, warp_offsets;
  for (int bit = 0; bit < layout.in_dim_size_log2("lane"); ++bit)
    lane_offsets.push_back(offset_of(single_bit("lane", bit)));
  for (int bit = 0; bit < layout.in_dim_size_log2("warp"); ++bit)
    warp_offsets.push_back(offset_of(single_bit("warp", bit)));
  llvm::IRBuilderBase& b = cg.builder;
  thread_part_ = xor_of_set_bits(b, xor_of_set_bits(b, b.getInt32(0), lane_offsets, cg.lane), warp_offsets, cg.warp);

  // Widen while the next register bit steps to the next element and every
  // basis above the group keeps groups aligned to the wider width.
  const std::uint64_t element_bytes = cg.module.getDataLayout().getTypeAllocSize(memory_type);
  const int register_bits = layout.in_dim_size_log2("register");
  auto groups_aligned = [&](int width_log2) {
    for (int bit = width_log2; bit < register_bits; ++bit)
      if (offset_of(single_bit("register", bit)) % (1 << width_log2) != 0) return false;
    for (const std::vector<std::int32_t>* offsets : {&lane_offsets, &warp_offsets})
      for (std::int32_t offset : *offsets)
        if (offset % (1 << width_log2) != 0) return false;
    return true;
  };
  int width_log2 = 0;
  while (width_log2 < register_bits && (element_bytes << (width_log2 + 1)) <= kWidestAccessBytes &&
         offset_of(single_bit("register", width_log2)) == (1 << width_log2) && groups_aligned(width_log2 + 1))
    ++width_log2;
  width_ = 1 << width_log2;
}

std::int32_t SharedTile::offset_of(const LinearLayout::Coordinates& location) const {
  const LinearLayout::Coordinates coordinates = layout_.apply(location);
  std::int32_t offset = 0;
  for (const std::string& dim : dims_)
    for (const auto& [name, value] : coordinates)
      if (name == dim) offset = offset * layout_.out_dim_size(dim) + value;
  return offset;
}

llvm::Value* SharedTile::address_of_register(int reg) {
  llvm::IRBuilderBase& b = cg_.builder;
  const std::int32_t offset = offset_of({{"register", reg}, {"lane", 0}, {"warp", 0}});
  llvm::Value* index =
      offset == 0 ? thread_part_ : b.CreateXor(thread_part_, b.getInt32(static_cast<std::uint32_t>(offset)));
  return b.CreateGEP(memory_type_, base_, index);
}

void SharedTile::store(const std::vector<llvm::Value*>& values) {
  llvm::IRBuilderBase& b = cg_.builder;
  auto in_memory = [&](llvm::Value* value) {
    return value->getType() == memory_type_ ? value : b.CreateZExt(value, memory_type_);
  };
  const llvm::Align alignment(cg_.module.getDataLayout().getTypeAllocSize(memory_type_) * width_);
  std::set<std::int32_t> stored;
  for (int first = 0; first < static_cast<int>(values.size()); first += width_) {
    if (!stored.insert(offset_of({{"register", first}, {"lane", 0}, {"warp", 0}})).second) continue;
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
  for (int first = 0; first < layout_.in_dim_size("register"); first += width_) {
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

}  // namespace kiln::lowering
