// LLVM code generation for atomic_rmw and atomic_cas: one LLVM `atomicrmw`
// or `cmpxchg` per element, performed by the element's acting copy only (a
// layout's duplicated elements and a scalar's copies in every thread act
// once), under the element's mask; the old value (0 where masked off) is
// delivered to every copy when the kernel reads it. A scalar atomic acts for
// the program: barriers around it order the other threads' accesses with it
// as its memory order asks.
//
// Memory order and scope. LLVM 19's NVPTX backend drops the ordering and
// syncscope of atomicrmw and cmpxchg and emits `atom.global.<op>` without
// .sem or .scope, i.e. relaxed at GPU scope (LLVM 20+ lowers them), and it
// cannot select an IR `fence` at all. So:
//  - cta and gpu: atomicrmw/cmpxchg carrying the op's ordering and syncscope
//    ("block", "device"); the PTX atom is GPU-scoped, exact for gpu and
//    stronger than asked for cta.
//  - sys: the llvm.nvvm.atomic.<op>.gen.<i|f>.sys intrinsics (relaxed,
//    `atom.sys.<op>`), which exist for 32- and 64-bit words only: add, exch,
//    and, or, xor, signed max and min, cas; other kinds loop over cas. An 8-
//    or 16-bit element (f16, bf16, i16, i8, i1) is updated by a loop of
//    32-bit cas on the aligned word holding it, the rest of the word kept:
//    the word's other bytes lie in the same allocation, which the CUDA
//    driver aligns to 256 bytes.
//  - The order is made explicit with the membar intrinsic of the op's scope
//    (llvm.nvvm.membar.cta / .gl / .sys, PTX fence.sc at that scope): one
//    before a release or acq_rel atomic, one after an acquire or acq_rel
//    one; fence.sc is stronger than the fences the order asks for.
//
// fp8 elements are i8 bit patterns in registers: cas compares and swaps the
// bits and xchg moves them, as for i8. add, max and min on fp8 compute in f32
// and round back, as the interpreter and the element-wise ops do
// (codegen_fp8.cpp): a compare-exchange loop on the byte (LLVM widens it to
// its word), at system scope on the containing word.
//
// Float max and min are a compare-exchange loop over the bits with
// llvm.maximum/minimum (NaN-propagating, -0 < +0, as the `maximum` op):
// atomicrmw fmax/fmin ignore NaNs. i1 lives in memory as a byte; its max and
// min are unsigned byte max and min.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"
#include "kiln/ir/attribute_enums.hpp"

namespace kiln::lowering {

namespace {

using ir::AtomicKind;
using ir::OpCode;

/// Whether an op of `fn` reads `value`.
bool is_read(const ir::Function& fn, const ir::Value& value) {
  bool read = false;
  ir::walk(fn.body, [&](ir::Operation& op) {
    for (const ir::Value* operand : op.operands) read |= operand == &value;
  });
  return read;
}

class AtomicLowering {
 public:
  AtomicLowering(KernelCodegen& cg, const ir::Operation& op)
      : cg_(cg),
        b_(cg.builder),
        op_(op),
        element_(op.result()->type.element()),
        register_type_(cg.element_type(element_, op)),
        memory_type_(cg.memory_type(element_, op)),
        order_(required(ir::attribute_enum<ir::MemoryOrder>(op), "memory order", "order")),
        scope_(required(ir::attribute_enum<ir::Scope>(op), "scope", "scope")) {}

  void lower() {
    const std::vector<llvm::Value*>& pointers = cg_.values_of(*op_.operands[0]);
    std::vector<const std::vector<llvm::Value*>*> data;
    for (std::size_t i = 1; i < op_.operands.size(); ++i)
      data.push_back(&cg_.values_of(*op_.operands[i], pointers.size(), op_));
    const bool is_cas = op_.code == OpCode::atomic_cas;
    const std::vector<llvm::Value*>* mask = !is_cas && data.size() > 1 ? data[1] : nullptr;
    if (!is_cas) check_kind();

    // A scalar atomic is one thread acting for the whole program: a barrier
    // in front makes the program's earlier accesses part of what a release
    // publishes, and one behind (the delivery's, or its own when the result
    // is unused) keeps the program's later accesses after an acquire.
    const bool for_the_program = !op_.result()->type.is_tile();
    if (for_the_program && releases()) emit_barrier(cg_);
    DuplicatedElements copies(cg_, *op_.result());
    llvm::Value* acts = copies.thread_acts();
    std::vector<llvm::Value*> old;
    for (std::size_t reg = 0; reg < pointers.size(); ++reg) {
      if (!copies.register_may_act(static_cast<int>(reg))) {
        old.push_back(llvm::PoisonValue::get(register_type_));
        continue;
      }
      llvm::Value* guard = acts;
      if (mask) guard = guard ? b_.CreateAnd(guard, (*mask)[reg]) : (*mask)[reg];
      old.push_back(guarded(guard, [&] {
        return is_cas ? compare_exchange(pointers[reg], (*data[0])[reg], (*data[1])[reg])
                      : update(pointers[reg], (*data[0])[reg]);
      }));
    }
    if (is_read(cg_.fn, *op_.result())) {
      cg_.define(*op_.result(), copies.deliver(old, op_));
      return;
    }
    if (for_the_program && acquires()) emit_barrier(cg_);
    cg_.define(*op_.result(), std::move(old));
  }

 private:
  /// `value`, the op's attribute `key` (a `what`); LoweringError when it names no value.
  template <class E>
  E required(std::optional<E> value, const char* what, const char* key) const {
    if (!value)
      throw LoweringError(std::string(op_.name()) + ": unknown " + what + " " + op_.symbol_attribute(key) + " (" +
                          op_place(op_) + ")");
    return *value;
  }

  bool releases() const { return order_ == ir::MemoryOrder::release || order_ == ir::MemoryOrder::acq_rel; }
  bool acquires() const { return order_ == ir::MemoryOrder::acquire || order_ == ir::MemoryOrder::acq_rel; }

  bool is_float() const { return register_type_->isFloatingPointTy(); }
  bool is_bool() const { return register_type_ != memory_type_; }
  AtomicKind kind() const { return required(ir::attribute_enum<AtomicKind>(op_), "kind", "kind"); }

  void check_kind() const {
    const AtomicKind k = kind();
    const bool bitwise = k == AtomicKind::bit_and || k == AtomicKind::bit_or || k == AtomicKind::bit_xor;
    if ((bitwise && ir::is_float(element_.dtype)) || (k == AtomicKind::add && is_bool()))
      throw LoweringError("atomic_rmw: kind " + std::string(ir::symbol_of(k)) + " is not defined for " +
                          ir::to_string(element_) + " (" + op_place(op_) + ")");
  }

  /// Runs `emit` (returning the old value) when `guard` holds (always when
  /// null); 0 where it does not.
  template <typename Emit>
  llvm::Value* guarded(llvm::Value* guard, Emit emit) {
    if (!guard) return emit();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* then_block = llvm::BasicBlock::Create(cg_.context, "atomic.then", cg_.kernel);
    auto* merge_block = llvm::BasicBlock::Create(cg_.context, "atomic.merge", cg_.kernel);
    b_.CreateCondBr(guard, then_block, merge_block);
    b_.SetInsertPoint(then_block);
    llvm::Value* value = emit();
    llvm::BasicBlock* last = b_.GetInsertBlock();
    b_.CreateBr(merge_block);
    b_.SetInsertPoint(merge_block);
    llvm::PHINode* phi = b_.CreatePHI(register_type_, 2);
    phi->addIncoming(value, last);
    phi->addIncoming(llvm::Constant::getNullValue(register_type_), before);
    return phi;
  }

  llvm::AtomicOrdering ordering() const {
    switch (order_) {
      case ir::MemoryOrder::relaxed: return llvm::AtomicOrdering::Monotonic;
      case ir::MemoryOrder::acquire: return llvm::AtomicOrdering::Acquire;
      case ir::MemoryOrder::release: return llvm::AtomicOrdering::Release;
      case ir::MemoryOrder::acq_rel: return llvm::AtomicOrdering::AcquireRelease;
    }
    throw InternalError("atomic: memory order " + std::to_string(static_cast<int>(order_)));
  }

  llvm::AtomicOrdering failure_ordering() const {
    return order_ == ir::MemoryOrder::acquire || order_ == ir::MemoryOrder::acq_rel ? llvm::AtomicOrdering::Acquire
                                                                                    : llvm::AtomicOrdering::Monotonic;
  }

  llvm::SyncScope::ID sync_scope() const {
    switch (scope_) {
      case ir::Scope::cta: return cg_.context.getOrInsertSyncScopeID("block");
      case ir::Scope::gpu: return cg_.context.getOrInsertSyncScopeID("device");
      case ir::Scope::sys: return llvm::SyncScope::System;
    }
    throw InternalError("atomic: scope " + std::to_string(static_cast<int>(scope_)));
  }

  /// fence.sc at the op's scope (membar.cta, membar.gl, membar.sys).
  void fence() {
    const llvm::Intrinsic::ID id = scope_ == ir::Scope::cta   ? llvm::Intrinsic::nvvm_membar_cta
                                   : scope_ == ir::Scope::sys ? llvm::Intrinsic::nvvm_membar_sys
                                                              : llvm::Intrinsic::nvvm_membar_gl;
    b_.CreateIntrinsic(id, {}, {});
  }

  /// `emit` between the fences the memory order needs.
  template <typename Emit>
  llvm::Value* ordered(Emit emit) {
    const llvm::AtomicOrdering order = ordering();
    const bool releases = order == llvm::AtomicOrdering::Release || order == llvm::AtomicOrdering::AcquireRelease;
    const bool acquires = order == llvm::AtomicOrdering::Acquire || order == llvm::AtomicOrdering::AcquireRelease;
    if (releases) fence();
    llvm::Value* value = emit();
    if (acquires) fence();
    return value;
  }

  /// Elements are naturally aligned (the interpreter faults on a misaligned atomic).
  llvm::Align alignment() const {
    return llvm::Align(cg_.module.getDataLayout().getTypeAllocSize(memory_type_).getFixedValue());
  }

  bool system_scope() const { return scope_ == ir::Scope::sys; }

  /// The integer type of an element's bits in memory (i8 for i1).
  llvm::Type* bits_type() const {
    return b_.getIntNTy(static_cast<unsigned>(cg_.module.getDataLayout().getTypeSizeInBits(memory_type_)));
  }
  llvm::Value* to_bits(llvm::Value* value) {
    return is_bool() ? b_.CreateZExt(value, memory_type_) : b_.CreateBitCast(value, bits_type());
  }
  llvm::Value* from_bits(llvm::Value* value) {
    return is_bool() ? b_.CreateICmpNE(value, llvm::ConstantInt::get(memory_type_, 0))
                     : b_.CreateBitCast(value, register_type_);
  }

  /// System-scoped atomics exist in LLVM 19 only as intrinsics on 32- and
  /// 64-bit words: narrower elements go through their containing word.
  bool narrow_system_scope() const {
    return system_scope() && cg_.module.getDataLayout().getTypeSizeInBits(memory_type_) < 32;
  }

  /// llvm.nvvm.atomic.<op>.gen.<i|f>.sys: relaxed, system scope.
  llvm::Value* system_atomic(llvm::Intrinsic::ID id, llvm::Value* pointer, std::vector<llvm::Value*> operands) {
    llvm::Type* type = operands.front()->getType();
    operands.insert(operands.begin(), pointer);
    return b_.CreateIntrinsic(id, {type, pointer->getType()}, operands);
  }

  llvm::Value* update(llvm::Value* pointer, llvm::Value* value) {
    const AtomicKind k = kind();
    const bool extremum = k == AtomicKind::max || k == AtomicKind::min;
    const bool is_signed = !is_bool() && ir::is_signed_int(element_.dtype);
    if (is_fp8(element_.dtype) && k != AtomicKind::xchg) return ordered([&] { return fp8_update(pointer, value); });
    if (narrow_system_scope())
      return ordered([&] {
        return from_bits(word_exchange_loop(pointer, [&](llvm::Value* current) {
          return to_bits(updated(from_bits(current), value, is_float(), is_signed));
        }));
      });
    if (extremum && (is_float() || (system_scope() && !is_signed)))
      return ordered([&] {
        return exchange_loop(pointer, [&](llvm::Value* current) {
          const bool max = k == AtomicKind::max;
          if (is_float())
            return b_.CreateBinaryIntrinsic(max ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, current, value);
          return b_.CreateBinaryIntrinsic(max ? llvm::Intrinsic::umax : llvm::Intrinsic::umin, current, value);
        });
      });
    if (system_scope()) return ordered([&] { return system_update(pointer, value); });
    llvm::AtomicRMWInst::BinOp operation = llvm::AtomicRMWInst::Xchg;
    if (k == AtomicKind::add) operation = is_float() ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
    else if (k == AtomicKind::max) operation = is_signed ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax;
    else if (k == AtomicKind::min) operation = is_signed ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin;
    else if (k == AtomicKind::bit_and) operation = llvm::AtomicRMWInst::And;
    else if (k == AtomicKind::bit_or) operation = llvm::AtomicRMWInst::Or;
    else if (k == AtomicKind::bit_xor) operation = llvm::AtomicRMWInst::Xor;
    return ordered([&] {
      llvm::Value* old = b_.CreateAtomicRMW(operation, pointer, is_bool() ? to_bits(value) : value, alignment(),
                                            ordering(), sync_scope());
      return is_bool() ? from_bits(old) : old;
    });
  }

  /// fp8 add, max or min at `pointer`: the element and `value` widened to
  /// f32, combined there and rounded back, in a compare-exchange loop on the
  /// byte (on its word at system scope).
  llvm::Value* fp8_update(llvm::Value* pointer, llvm::Value* value) {
    const ir::DType dtype = element_.dtype;
    llvm::Value* wide_value = fp8_to_float(cg_, value, dtype);
    const auto next = [&](llvm::Value* current) {
      return float_to_fp8(cg_, updated(fp8_to_float(cg_, current, dtype), wide_value, true, false), dtype);
    };
    return narrow_system_scope() ? word_exchange_loop(pointer, next) : exchange_loop(pointer, next);
  }

  /// What the op's kind makes of the element `current` and the operand
  /// `value` (register values, floats when `floating`).
  llvm::Value* updated(llvm::Value* current, llvm::Value* value, bool floating, bool is_signed) {
    const AtomicKind k = kind();
    if (k == AtomicKind::add) return floating ? b_.CreateFAdd(current, value) : b_.CreateAdd(current, value);
    if (k == AtomicKind::bit_and) return b_.CreateAnd(current, value);
    if (k == AtomicKind::bit_or) return b_.CreateOr(current, value);
    if (k == AtomicKind::bit_xor) return b_.CreateXor(current, value);
    if (k == AtomicKind::max || k == AtomicKind::min) {
      const bool max = k == AtomicKind::max;
      const llvm::Intrinsic::ID id = floating    ? (max ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum)
                                     : is_signed ? (max ? llvm::Intrinsic::smax : llvm::Intrinsic::smin)
                                                 : (max ? llvm::Intrinsic::umax : llvm::Intrinsic::umin);
      return b_.CreateBinaryIntrinsic(id, current, value);
    }
    return value;
  }

  /// add, xchg, and, or, xor and signed max and min at system scope.
  llvm::Value* system_update(llvm::Value* pointer, llvm::Value* value) {
    const AtomicKind k = kind();
    if (k == AtomicKind::add && is_float())
      return system_atomic(llvm::Intrinsic::nvvm_atomic_add_gen_f_sys, pointer, {value});
    llvm::Intrinsic::ID id = llvm::Intrinsic::nvvm_atomic_exch_gen_i_sys;
    if (k == AtomicKind::add) id = llvm::Intrinsic::nvvm_atomic_add_gen_i_sys;
    else if (k == AtomicKind::max) id = llvm::Intrinsic::nvvm_atomic_max_gen_i_sys;
    else if (k == AtomicKind::min) id = llvm::Intrinsic::nvvm_atomic_min_gen_i_sys;
    else if (k == AtomicKind::bit_and) id = llvm::Intrinsic::nvvm_atomic_and_gen_i_sys;
    else if (k == AtomicKind::bit_or) id = llvm::Intrinsic::nvvm_atomic_or_gen_i_sys;
    else if (k == AtomicKind::bit_xor) id = llvm::Intrinsic::nvvm_atomic_xor_gen_i_sys;
    return from_bits(system_atomic(id, pointer, {to_bits(value)}));
  }

  /// One compare-exchange of the bits at `pointer`: the bits seen and whether they were `expected`.
  std::pair<llvm::Value*, llvm::Value*> exchange_bits(llvm::Value* pointer, llvm::Value* expected,
                                                      llvm::Value* desired) {
    if (system_scope()) {
      llvm::Value* seen = system_atomic(llvm::Intrinsic::nvvm_atomic_cas_gen_i_sys, pointer, {expected, desired});
      return {seen, b_.CreateICmpEQ(seen, expected)};
    }
    llvm::Value* pair =
        b_.CreateAtomicCmpXchg(pointer, expected, desired, alignment(), ordering(), failure_ordering(), sync_scope());
    return {b_.CreateExtractValue(pair, 0), b_.CreateExtractValue(pair, 1)};
  }

  /// A compare-exchange loop storing next(old); returns old.
  template <typename Next>
  llvm::Value* exchange_loop(llvm::Value* pointer, Next next) {
    llvm::LoadInst* first = b_.CreateAlignedLoad(bits_type(), pointer, alignment());
    first->setAtomic(llvm::AtomicOrdering::Monotonic, sync_scope());
    llvm::BasicBlock* entry = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(cg_.context, "atomic.loop", cg_.kernel);
    auto* done = llvm::BasicBlock::Create(cg_.context, "atomic.done", cg_.kernel);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* current = b_.CreatePHI(bits_type(), 2);
    current->addIncoming(first, entry);
    const auto [seen, exchanged] = exchange_bits(pointer, current, to_bits(next(from_bits(current))));
    current->addIncoming(seen, loop);
    b_.CreateCondBr(exchanged, done, loop);
    b_.SetInsertPoint(done);
    return from_bits(current);
  }

  /// A system-scoped compare-exchange loop over the aligned 32-bit word that
  /// holds the narrow element at `pointer`, storing next(old bits) into the
  /// element's bytes and keeping the others; returns the old bits.
  template <typename Next>
  llvm::Value* word_exchange_loop(llvm::Value* pointer, Next next) {
    llvm::Type* word_type = b_.getInt32Ty();
    llvm::Value* byte_offset = b_.CreateAnd(b_.CreatePtrToInt(pointer, b_.getInt64Ty()), 3);
    llvm::Value* word_pointer = b_.CreateGEP(b_.getInt8Ty(), pointer, b_.CreateNeg(byte_offset));
    // NVPTX is little-endian: the element's bits start at bit 8 * byte_offset of the word.
    llvm::Value* shift = b_.CreateShl(b_.CreateTrunc(byte_offset, word_type), 3);
    const std::uint64_t bits = cg_.module.getDataLayout().getTypeSizeInBits(memory_type_);
    llvm::Value* others = b_.CreateNot(b_.CreateShl(b_.getInt32(static_cast<std::uint32_t>((1u << bits) - 1)), shift));
    llvm::LoadInst* first = b_.CreateAlignedLoad(word_type, word_pointer, llvm::Align(4));
    first->setAtomic(llvm::AtomicOrdering::Monotonic, llvm::SyncScope::System);
    llvm::BasicBlock* entry = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(cg_.context, "atomic.word.loop", cg_.kernel);
    auto* done = llvm::BasicBlock::Create(cg_.context, "atomic.word.done", cg_.kernel);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* current = b_.CreatePHI(word_type, 2);
    current->addIncoming(first, entry);
    llvm::Value* old = b_.CreateTrunc(b_.CreateLShr(current, shift), bits_type());
    llvm::Value* placed = b_.CreateShl(b_.CreateZExt(next(old), word_type), shift);
    llvm::Value* desired = b_.CreateOr(b_.CreateAnd(current, others), placed);
    llvm::Value* seen = system_atomic(llvm::Intrinsic::nvvm_atomic_cas_gen_i_sys, word_pointer, {current, desired});
    current->addIncoming(seen, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpEQ(seen, current), done, loop);
    b_.SetInsertPoint(done);
    return old;
  }

  /// Compares bits: floats travel as integers of their width.
  llvm::Value* compare_exchange(llvm::Value* pointer, llvm::Value* compare, llvm::Value* value) {
    if (narrow_system_scope())
      return ordered([&] {
        llvm::Value* expected = to_bits(compare);
        llvm::Value* desired = to_bits(value);
        return from_bits(word_exchange_loop(pointer, [&](llvm::Value* current) {
          return b_.CreateSelect(b_.CreateICmpEQ(current, expected), desired, current);
        }));
      });
    return ordered([&] { return from_bits(exchange_bits(pointer, to_bits(compare), to_bits(value)).first); });
  }

  KernelCodegen& cg_;
  llvm::IRBuilder<>& b_;
  const ir::Operation& op_;
  const ir::Type element_;
  llvm::Type* register_type_;
  llvm::Type* memory_type_;
  const ir::MemoryOrder order_;
  const ir::Scope scope_;
};

}  // namespace

void emit_atomic_op(KernelCodegen& cg, const ir::Operation& op) { AtomicLowering(cg, op).lower(); }

}  // namespace kiln::lowering
