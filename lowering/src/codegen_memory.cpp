// LLVM code generation for memory ops: addptr, load, store. A thread's
// registers whose addresses are contiguous and aligned (the layout puts them
// next to each other and the axis analysis proves the alignment) move with
// one vector access. A mask constant over such a run guards the whole vector
// with one branch: llvm.masked.load/store would be scalarised on NVPTX.
//
// A store writes each element once, by its acting copy (DuplicatedElements):
// registers that duplicate others are skipped at compile time, and copies in
// other lanes or warps are turned away by a per-thread guard joined to the
// mask, so a vector run stays one vector access. Otherwise the copies of a
// replicated layout would all write, and a load-add-store by copies in
// different warps would race.
//
// A scalar load through memory that the kernel writes (ir::Provenance) is
// done by one thread and delivered to the others, so that the program's
// threads agree on it even while another program changes that memory: a
// branch on it is then taken alike by all of them, as OPS.md's one logical
// thread per program requires. Other scalar loads are done by every thread.
//
// Cache hints (`cache`, `evict`) never change results. LLVM 19's NVPTX
// backend has no way to attach a cache operator or an eviction priority to
// ld/st (it ignores !nontemporal; only inline asm could, which the emu device
// cannot map), so each access is lowered as follows:
//  - load cache = cv ("fetch again"): a volatile load, ld.volatile.global,
//    which bypasses L1 and rereads memory like ld.global.cv.
//  - cache = ca on a load: a plain ld.global, whose default operator is .ca.
//  - every other hint (cg, cs, store hints, evict first/last): a plain access.
#include <algorithm>
#include <optional>

#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"
#include "kiln/ir/attribute_enums.hpp"

namespace kiln::lowering {

namespace {

using ir::OpCode;

/// The widest run 2^k of consecutive registers (from each multiple of 2^k)
/// that `layout` places at consecutive coordinates along `dim`, the other
/// coordinates fixed: register bits below k step along `dim` by 1, 2, 4…, and
/// every other basis leaves the low k bits of `dim` alone (so the run stays
/// aligned to 2^k elements).
std::int64_t layout_run_length(const LinearLayout& layout, int dim) {
  const int register_bits = layout.in_dim_size_log2("register");
  int k = 0;
  while (k < register_bits) {
    const LinearLayout::Basis& basis = layout.basis("register", k);
    bool unit = basis[dim] == (std::int32_t{1} << k);
    for (std::size_t d = 0; d < basis.size(); ++d) unit &= static_cast<int>(d) == dim || basis[d] == 0;
    if (!unit) break;
    ++k;
  }
  auto low_bits_clear = [&](int bits) {
    const std::int32_t low = (std::int32_t{1} << bits) - 1;
    for (const auto& in : layout.in_dims())
      for (std::size_t bit = 0; bit < in.bases.size(); ++bit)
        if (!(in.name == "register" && static_cast<int>(bit) < bits) && (in.bases[bit][dim] & low) != 0) return false;
    return true;
  };
  while (k > 0 && !low_bits_clear(k)) --k;
  return std::int64_t{1} << k;
}

/// Elements per access of `op` (a load, store or async_copy): the axis
/// analysis's width along the fastest dimension of its addresses, limited by
/// what the layout keeps together along it (a tile read transposed runs
/// along dim0).
int access_width(const KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& pointers = *op.operands[op.code == OpCode::async_copy ? 2 : 0];
  if (!pointers.type.is_tile()) return 1;
  const int fastest = fastest_dimension(cg.axes.at(pointers));
  return static_cast<int>(
      std::min(access_vector_width(cg.axes, op), layout_run_length(cg.layouts.at(pointers), fastest)));
}

/// Checks the values of `op`'s cache hints (the header says how each is
/// lowered): LoweringError naming `op` for one the IR does not define.
void check_cache_hints(const ir::Operation& op) {
  if (!ir::attribute_enum<ir::Cache>(op))
    throw LoweringError(unsupported_op_message(op, "with cache = " + op.symbol_attribute("cache")));
  if (!ir::attribute_enum<ir::Evict>(op))
    throw LoweringError(unsupported_op_message(op, "with evict = " + op.symbol_attribute("evict")));
}

/// Whether load `op` fetches again (cache = cv): a volatile load.
bool fetches_again(const ir::Operation& op) { return ir::attribute_enum<ir::Cache>(op) == ir::Cache::cv; }

/// `elements` as one value of `type` (a vector of them, or the element itself).
llvm::Value* pack(llvm::IRBuilder<>& builder, llvm::Type* type, const std::vector<llvm::Value*>& elements) {
  if (elements.size() == 1) return elements[0];
  llvm::Value* vector = llvm::PoisonValue::get(type);
  for (std::size_t i = 0; i < elements.size(); ++i)
    vector = builder.CreateInsertElement(vector, elements[i], builder.getInt64(i));
  return vector;
}

/// Runs `emit` in a block entered only when `mask` is true (always when null);
/// returns the block it ran in.
template <typename Emit>
llvm::BasicBlock* guarded(KernelCodegen& cg, llvm::Value* mask, const char* name, Emit emit) {
  if (!mask) {
    emit();
    return cg.builder.GetInsertBlock();
  }
  auto* then_block = llvm::BasicBlock::Create(cg.context, std::string(name) + ".then", cg.kernel);
  auto* merge_block = llvm::BasicBlock::Create(cg.context, std::string(name) + ".merge", cg.kernel);
  cg.builder.CreateCondBr(mask, then_block, merge_block);
  cg.builder.SetInsertPoint(then_block);
  emit();
  llvm::BasicBlock* last = cg.builder.GetInsertBlock();
  cg.builder.CreateBr(merge_block);
  cg.builder.SetInsertPoint(merge_block);
  return last;
}

void emit_load(KernelCodegen& cg, const ir::Operation& op) {
  check_cache_hints(op);
  const bool is_volatile = fetches_again(op);
  const ir::Value& result = *op.result();
  llvm::Type* register_type = cg.element_type(result.type, op);
  llvm::Type* memory_type = cg.memory_type(result.type, op);
  const bool is_bool = register_type != memory_type;
  const auto& pointers = cg.values_of(*op.operands[0]);
  const auto* mask = op.operands.size() > 1 ? &cg.values_of(*op.operands[1], pointers.size(), op) : nullptr;
  const auto* other = op.operands.size() > 2 ? &cg.values_of(*op.operands[2], pointers.size(), op) : nullptr;
  const int width = access_width(cg, op);
  llvm::Type* access_type = width == 1 ? memory_type : llvm::FixedVectorType::get(memory_type, width);
  const llvm::Align alignment(static_cast<std::uint64_t>(width) *
                              cg.module.getDataLayout().getTypeAllocSize(memory_type));
  std::optional<DuplicatedElements> one_thread_loads;
  if (!result.type.is_tile() && cg.provenance.may_be_written(cg.provenance.source(op.operands[0])))
    one_thread_loads.emplace(cg, result);
  llvm::Value* thread_acts = one_thread_loads ? one_thread_loads->thread_acts() : nullptr;

  std::vector<llvm::Value*> values;
  for (std::size_t first = 0; first < pointers.size(); first += width) {
    llvm::Value* guard = mask ? (*mask)[first] : nullptr;
    if (thread_acts) guard = guard ? cg.builder.CreateAnd(thread_acts, guard) : thread_acts;
    llvm::Value* fallback = nullptr;
    if (guard) {
      std::vector<llvm::Value*> replacement;
      for (int i = 0; i < width; ++i) {
        llvm::Value* element = other ? (*other)[first + i] : llvm::Constant::getNullValue(register_type);
        replacement.push_back(is_bool ? cg.builder.CreateZExt(element, memory_type) : element);
      }
      fallback = pack(cg.builder, access_type, replacement);
    }
    llvm::BasicBlock* before = cg.builder.GetInsertBlock();
    llvm::Value* loaded = nullptr;
    llvm::BasicBlock* loaded_in = guarded(cg, guard, "load", [&] {
      loaded = cg.builder.CreateAlignedLoad(access_type, pointers[first], alignment, is_volatile);
    });
    llvm::Value* run = loaded;
    if (guard) {
      llvm::PHINode* phi = cg.builder.CreatePHI(access_type, 2);
      phi->addIncoming(loaded, loaded_in);
      phi->addIncoming(fallback, before);
      run = phi;
    }
    for (int i = 0; i < width; ++i) {
      llvm::Value* element = width == 1 ? run : cg.builder.CreateExtractElement(run, cg.builder.getInt64(i));
      values.push_back(is_bool ? cg.builder.CreateICmpNE(element, llvm::ConstantInt::get(memory_type, 0)) : element);
    }
  }
  cg.define(result, one_thread_loads ? one_thread_loads->deliver(values, op) : std::move(values));
}

void emit_store(KernelCodegen& cg, const ir::Operation& op) {
  check_cache_hints(op);
  const ir::Value& data = *op.operands[1];
  llvm::Type* register_type = cg.element_type(data.type, op);
  llvm::Type* memory_type = cg.memory_type(data.type, op);
  const auto& pointers = cg.values_of(*op.operands[0]);
  const auto& values = cg.values_of(data, pointers.size(), op);
  const auto* mask = op.operands.size() > 2 ? &cg.values_of(*op.operands[2], pointers.size(), op) : nullptr;
  const int width = access_width(cg, op);
  const llvm::Align element_alignment(cg.module.getDataLayout().getTypeAllocSize(memory_type));
  auto in_memory = [&](std::size_t reg) {
    return register_type != memory_type ? cg.builder.CreateZExt(values[reg], memory_type) : values[reg];
  };
  // Pointers, data and mask share one layout, so the pointers' copies are the elements' copies.
  DuplicatedElements copies(cg, *op.operands[0]);
  llvm::Value* thread_acts = copies.thread_acts();
  auto guard_of = [&](std::size_t reg) -> llvm::Value* {
    llvm::Value* element_mask = mask ? (*mask)[reg] : nullptr;
    if (!thread_acts) return element_mask;
    return element_mask ? cg.builder.CreateAnd(thread_acts, element_mask) : thread_acts;
  };

  for (std::size_t first = 0; first < pointers.size(); first += width) {
    bool whole_run_acts = true;
    for (int i = 0; i < width; ++i) whole_run_acts &= copies.register_may_act(static_cast<int>(first) + i);
    if (whole_run_acts) {
      std::vector<llvm::Value*> elements;
      for (int i = 0; i < width; ++i) elements.push_back(in_memory(first + i));
      llvm::Type* access_type = width == 1 ? memory_type : llvm::FixedVectorType::get(memory_type, width);
      llvm::Value* run = pack(cg.builder, access_type, elements);
      const llvm::Align alignment(static_cast<std::uint64_t>(width) * element_alignment.value());
      guarded(cg, guard_of(first), "store", [&] { cg.builder.CreateAlignedStore(run, pointers[first], alignment); });
      continue;
    }
    // Some registers of the run duplicate others: the acting ones store alone.
    for (std::size_t reg = first; reg < first + static_cast<std::size_t>(width); ++reg) {
      if (!copies.register_may_act(static_cast<int>(reg))) continue;
      llvm::Value* element = in_memory(reg);
      guarded(cg, guard_of(reg), "store",
              [&] { cg.builder.CreateAlignedStore(element, pointers[reg], element_alignment); });
    }
  }
}

/// The cp.async intrinsic copying `bytes` (4, 8 or 16) with a source size
/// operand: 16-byte copies bypass L1 (.cg), as Triton's do.
llvm::Intrinsic::ID cp_async_intrinsic(std::int64_t bytes) {
  switch (bytes) {
    case 4: return llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
    case 8: return llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s;
    default: return llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s;
  }
}

}  // namespace

void emit_async_copy(KernelCodegen& cg, const ir::Operation& op) {
  const ir::Value& pointer_tile = *op.operands[2];
  const SharedRing& ring = cg.rings.at(op.operands[0]);
  const auto& pointers = cg.values_of(pointer_tile);
  const auto* mask = op.operands.size() > 3 ? &cg.values_of(*op.operands[3], pointers.size(), op) : nullptr;
  SharedTile slot(cg, cg.layouts.at(pointer_tile), ring.layout, ring.memory_type, ring.base,
                  ring_slot_offset(cg, ring, *op.operands[1]));
  const auto element_bytes = static_cast<std::int64_t>(cg.module.getDataLayout().getTypeAllocSize(ring.memory_type));
  int width = std::min(access_width(cg, op), slot.vector_width());
  while (width * element_bytes > 16) width /= 2;
  DuplicatedElements copies(cg, pointer_tile);
  llvm::Value* thread_acts = copies.thread_acts();
  llvm::IRBuilderBase& b = cg.builder;

  for (std::size_t first = 0; first < pointers.size(); first += static_cast<std::size_t>(width)) {
    bool run_acts = true;
    for (int i = 0; i < width; ++i) run_acts &= copies.register_may_act(static_cast<int>(first) + i);
    const std::int64_t bytes = width * element_bytes;
    if (run_acts && bytes >= 4) {
      llvm::Value* size = b.getInt32(static_cast<std::uint32_t>(bytes));
      if (mask) size = b.CreateSelect((*mask)[first], size, b.getInt32(0));
      llvm::Value* destination = slot.address_of_register(static_cast<int>(first));
      guarded(cg, thread_acts, "copy",
              [&] { b.CreateIntrinsic(cp_async_intrinsic(bytes), {}, {destination, pointers[first], size}); });
      continue;
    }
    // Runs narrower than 4 bytes, or partly duplicated: each acting element is
    // loaded and stored now, which lands before any wait, as the IR allows.
    for (std::size_t reg = first; reg < first + static_cast<std::size_t>(width); ++reg) {
      if (!copies.register_may_act(static_cast<int>(reg))) continue;
      llvm::Value* destination = slot.address_of_register(static_cast<int>(reg));
      llvm::Value* zero = llvm::Constant::getNullValue(ring.memory_type);
      guarded(cg, thread_acts, "copy", [&] {
        llvm::BasicBlock* before = b.GetInsertBlock();
        llvm::Value* loaded = nullptr;
        llvm::BasicBlock* loaded_in = guarded(cg, mask ? (*mask)[reg] : nullptr, "copy.load",
                                              [&] { loaded = b.CreateLoad(ring.memory_type, pointers[reg]); });
        llvm::Value* value = loaded;
        if (mask) {
          llvm::PHINode* phi = b.CreatePHI(ring.memory_type, 2);
          phi->addIncoming(loaded, loaded_in);
          phi->addIncoming(zero, before);
          value = phi;
        }
        b.CreateStore(value, destination);
      });
    }
  }
}

namespace {

void emit_addptr(KernelCodegen& cg, const ir::Operation& op) {
  const auto& pointers = cg.values_of(*op.operands[0]);
  const auto& offsets = cg.values_of(*op.operands[1], pointers.size(), op);
  std::vector<llvm::Value*> values;
  for (std::size_t r = 0; r < pointers.size(); ++r) values.push_back(offset_pointer(cg, op, pointers[r], offsets[r]));
  cg.define(*op.result(), std::move(values));
}

}  // namespace

llvm::Value* offset_pointer(KernelCodegen& cg, const ir::Operation& addptr, llvm::Value* pointer, llvm::Value* offset) {
  llvm::Type* pointee = cg.memory_type(ir::Type::scalar(addptr.result()->type.dtype), addptr);
  // GEP sign-extends narrower indices, right for signed offsets; unsigned ones are zero-extended first.
  if (!ir::is_signed_int(addptr.operands[1]->type.dtype))
    offset = cg.builder.CreateZExt(offset, cg.builder.getInt64Ty());
  return cg.builder.CreateGEP(pointee, pointer, offset);
}

void emit_memory_op(KernelCodegen& cg, const ir::Operation& op) {
  switch (op.code) {
    case OpCode::addptr: emit_addptr(cg, op); return;
    case OpCode::load: emit_load(cg, op); return;
    case OpCode::store: emit_store(cg, op); return;
    default: throw InternalError(std::string(op.name()) + " reached the memory code generator");
  }
}

}  // namespace kiln::lowering
