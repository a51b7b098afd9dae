// LLVM code generation for a dot on wgmma (sm_90a; dot_uses_wgmma says
// which). The accumulator stays in its registers, which lie as wgmma's
// m64nN fragments do. a is read from registers where it lives in the
// mma.sync A fragment layout (which is wgmma's for a warpgroup's 64 rows)
// or reaches it inside each thread (attention's P, the first dot's
// accumulator cast to f16), as FlashAttention does; otherwise a, and b
// always, are read by the tensor cores from shared memory through matrix
// descriptors, each tile in its canonical swizzled layout
// (wgmma_layout.hpp): an operand a local_load makes is read in place
// from its pipelined loop's ring slot (planned in that layout, and made
// visible to the tensor cores by the fence after the loop's cp.async wait,
// codegen_shared_buffer.cpp); any other is stored into the dot's scratch
// from the layout it lives in, then every thread fences its writes for the
// async proxy and waits at a barrier. Then wgmma.fence, one
// wgmma.mma_async per 64-row slice of the warpgroup, 256-column chunk of N
// and 32-byte step of K (in increasing k), one commit, and a wait for the
// group that passes every accumulator register through it, so that no use
// of the results moves above it. The one dot of a pipelined loop that
// carries its accumulator waits instead for the previous iteration's group
// and passes a barrier (wgmma_dot_stays_in_flight), its own group running
// on while the loop issues its copies; the loop's exit waits for the last.
// 8-bit inputs (s8 into s32, e4m3 and e5m2 into f32) take 32 of K per
// instruction and are read K-major only. The PTX is inline assembly (LLVM
// 19 has no wgmma intrinsics); the emu runs the same assembly through its
// hooks.
#include <llvm/IR/InlineAsm.h>

#include <algorithm>
#include <optional>
#include <string>

#include "codegen.hpp"
#include "kiln/lowering/layout_conversion.hpp"
#include "kiln/lowering/wgmma_layout.hpp"
#include "operand_uses.hpp"

namespace kiln::lowering {

namespace {

using Registers = std::vector<llvm::Value*>;

/// The PTX type wgmma names `dtype` by.
std::string wgmma_type_name(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::i8: return "s8";
    case ir::DType::f8e4m3: return "e4m3";
    case ir::DType::f8e5m2: return "e5m2";
    default: return std::string(ir::dtype_name(dtype));
  }
}

/// One operand's tile in shared memory: its canonical layout and the shared
/// address (i32) of its first element.
struct WgmmaOperand {
  WgmmaTile tile;
  llvm::Value* address = nullptr;
};

/// The warpgroup's index read from lane 0 with shfl.sync at the kernel's
/// entry: ptxas then knows it is the same in every lane and keeps the a
/// descriptors made from it in uniform registers, as it does from Triton's
/// warp index; from warp / 4 it computes them per lane and moves each into a
/// uniform register before its wgmma (sm_90a matmul, 128 x 128 x 64 at 8
/// warps: 112 SASS instructions per iteration against 127).
llvm::Value* uniform_warpgroup(KernelCodegen& cg) {
  if (cg.uniform_warpgroup) return cg.uniform_warpgroup;
  const llvm::IRBuilderBase::InsertPointGuard keep(cg.builder);
  cg.builder.SetInsertPoint(llvm::cast<llvm::Instruction>(cg.warp)->getNextNode());
  cg.uniform_warpgroup =
      shuffle_in_warp(cg, cg.builder.CreateLShr(cg.warp, 2), WarpShuffle::from_lane, cg.builder.getInt32(0));
  cg.uniform_warpgroup->setName("warpgroup");
  return cg.uniform_warpgroup;
}

class WgmmaLowering {
 public:
  WgmmaLowering(KernelCodegen& cg, const ir::Operation& op) : cg_(cg), b_(cg.builder), op_(op), scratch_(cg) {}

  void lower(Registers accumulator) {
    bool staged = false;
    const std::optional<Registers> a_fragment = a_in_registers();
    const WgmmaOperand a = a_fragment ? WgmmaOperand{} : operand(DotOperand::a, staged);
    const WgmmaOperand b = operand(DotOperand::b, staged);
    if (staged) {
      emit_ptx_statement(cg_, "fence.proxy.async.shared::cta;");
      emit_barrier(cg_);
    }
    emit_ptx_statement(cg_, "wgmma.fence.sync.aligned;");

    const std::int64_t m_size = op_.operands[0]->type.shape[0], n_size = op_.operands[1]->type.shape[1];
    const std::int64_t k_size = op_.operands[0]->type.shape[1];
    const int element_bytes = static_cast<int>(ir::dtype_bytes(op_.operands[0]->type.dtype));
    const std::int64_t k_depth = kWgmmaDepthBytes / element_bytes;
    const std::int64_t warpgroups = cg_.target.num_warps / kWarpsPerWarpgroup;
    const std::int64_t m_tiles = m_size / (kWgmmaRows * warpgroups);
    const std::int64_t n_chunk = std::min<std::int64_t>(n_size, kWgmmaMaxColumns);
    const std::int64_t chunk_registers = n_chunk / 2, slice_registers = n_size / 2;
    llvm::Value* a_descriptor = nullptr;
    if (!a_fragment) {
      // The warpgroup's rows start 64 x warpgroup further down a; the tile's
      // unswizzled offset is linear in them.
      llvm::Value* a_address = b_.CreateAdd(
          a.address,
          b_.CreateMul(uniform_warpgroup(cg_), b_.getInt32(static_cast<std::uint32_t>(
                                                   a.tile.unswizzled_offset(kWgmmaRows, 0) * a.tile.element_bytes))));
      a_descriptor = descriptor(a.tile, a_address);
    }
    llvm::Value* b_descriptor = descriptor(b.tile, b.address);
    const std::int64_t k_steps = k_size / k_depth;
    for (std::int64_t mi = 0; mi < m_tiles; ++mi)
      for (std::int64_t n0 = 0; n0 < n_size; n0 += n_chunk) {
        const std::size_t first = static_cast<std::size_t>(mi * slice_registers + n0 / 2);
        Registers d(
            accumulator.begin() + static_cast<std::ptrdiff_t>(first),
            accumulator.begin() + static_cast<std::ptrdiff_t>(first + static_cast<std::size_t>(chunk_registers)));
        for (std::int64_t ki = 0; ki < k_steps; ++ki) {
          const std::int64_t k0 = k_depth * ki;
          llvm::Value* b_step = advance(b_descriptor, b.tile.unswizzled_offset(k0, n0) * b.tile.element_bytes);
          if (a_fragment) {
            // Fragment registers 8 (ki + k_steps mi) onwards, two per 32-bit register.
            const std::size_t a_first = static_cast<std::size_t>(8 * (ki + k_steps * mi));
            Registers a_words;
            for (std::size_t word = 0; word < 4; ++word)
              a_words.push_back(pack((*a_fragment)[a_first + 2 * word], (*a_fragment)[a_first + 2 * word + 1]));
            d = mma_async(d, a_words, b_step, b.tile, n_chunk);
          } else {
            const std::int64_t a_offset = a.tile.unswizzled_offset(mi * warpgroups * kWgmmaRows, k0);
            d = mma_async(d, {advance(a_descriptor, a_offset * a.tile.element_bytes)}, b_step, b.tile, n_chunk,
                          &a.tile);
          }
        }
        std::copy(d.begin(), d.end(), accumulator.begin() + static_cast<std::ptrdiff_t>(first));
      }
    emit_ptx_statement(cg_, "wgmma.commit_group.sync.aligned;");
    if (wgmma_dot_stays_in_flight(cg_, op_)) {
      // The previous iteration's group is done; after every warpgroup's is,
      // the copies that follow may overwrite the slots it read.
      accumulator = emit_wgmma_wait(cg_, 1, accumulator);
      emit_barrier(cg_);
    } else {
      accumulator = emit_wgmma_wait(cg_, 0, accumulator);
    }
    // The staged tiles' scratch is free for the next op once the group has read them.
    if (staged) emit_barrier(cg_);
    cg_.define(*op_.result(), std::move(accumulator));
  }

 private:
  /// a's registers in the mma.sync A fragment layout, when it lives there
  /// or gets there inside each thread (and is not in a ring slot); 16-bit
  /// inputs only (an accumulator does not reach the 8-bit fragments, whose
  /// four columns a thread holds, without leaving its thread).
  std::optional<Registers> a_in_registers() {
    if (reads_shared_slot(op_, 0) || wgmma_reads_only_k_major(op_.operands[0]->type.dtype)) return std::nullopt;
    const ir::Value& value = *op_.operands[0];
    const LinearLayout needed = dot_fragment_layout(op_, DotOperand::a, cg_.target);
    const LinearLayout& lives_in = cg_.layouts.at(value);
    if (lives_in == needed) return cg_.values_of(value, static_cast<std::size_t>(needed.in_dim_size("register")), op_);
    if (plan_register_permute(lives_in, needed))
      return emit_layout_conversion(cg_, LayoutConversion{&value, lives_in, needed}, op_);
    return std::nullopt;
  }

  /// Two 16-bit elements in one 32-bit register, the first in the low half.
  llvm::Value* pack(llvm::Value* low, llvm::Value* high) {
    llvm::Value* pair = llvm::PoisonValue::get(llvm::FixedVectorType::get(low->getType(), 2));
    pair = b_.CreateInsertElement(pair, low, std::uint64_t{0});
    pair = b_.CreateInsertElement(pair, high, std::uint64_t{1});
    return b_.CreateBitCast(pair, b_.getInt32Ty());
  }

  /// Operand a or b in shared memory: the ring slot a local_load names, or
  /// the dot's scratch, stored from the layout the value lives in.
  WgmmaOperand operand(DotOperand which, bool& staged) {
    const int index = which == DotOperand::a ? 0 : 1;
    const ir::Value& value = *op_.operands[static_cast<std::size_t>(index)];
    const int element_bytes = static_cast<int>(ir::dtype_bytes(value.type.dtype));
    llvm::Type* memory_type = cg_.memory_type(value.type.element(), op_);
    llvm::GlobalVariable* array = shared_memory_array(cg_);
    if (array->getAlign().valueOrOne().value() < kWgmmaLargestAtomBytes)
      array->setAlignment(llvm::Align(kWgmmaLargestAtomBytes));
    if (reads_shared_slot(op_, index)) {
      const SharedSlot& slot = cg_.slots.at(&value);
      const std::optional<WgmmaTile> tile = wgmma_tile_with_layout(op_, which, slot.ring->layout);
      if (!tile)
        throw InternalError("dot: operand %" + std::to_string(value.id) +
                            " is in a ring slot not laid out for wgmma (" + op_place(op_) + ")");
      return {*tile, address_of(b_.CreateGEP(memory_type, slot.ring->base, slot.element_offset))};
    }
    const LinearLayout& lives_in = cg_.layouts.at(value);
    WgmmaTile tile = wgmma_tile(which, value.type.shape[0], value.type.shape[1],
                                wgmma_contiguous_dim(op_, which, contiguous_dim_of(lives_in)), element_bytes);
    llvm::Value* base = scratch_.take(tile.bytes(), tile.alignment());
    SharedTile(cg_, lives_in, tile.layout, memory_type, base)
        .store(cg_.values_of(value, static_cast<std::size_t>(lives_in.in_dim_size("register")), op_));
    staged = true;
    return {std::move(tile), address_of(base)};
  }

  llvm::Value* address_of(llvm::Value* shared_pointer) { return b_.CreatePtrToInt(shared_pointer, b_.getInt32Ty()); }

  /// The matrix descriptor of a tile whose first element is at `address`:
  /// the address's bits 4-17, and the tile's strides and swizzle mode.
  llvm::Value* descriptor(const WgmmaTile& tile, llvm::Value* address) {
    llvm::Value* start = b_.CreateZExt(b_.CreateAnd(b_.CreateLShr(address, 4), 0x3fff), b_.getInt64Ty());
    return b_.CreateOr(start, b_.getInt64(tile.descriptor_fields()));
  }

  /// `descriptor` moved `bytes` (a multiple of 16) further: shared addresses
  /// stay below 2^18, so the start field does not carry out.
  llvm::Value* advance(llvm::Value* descriptor, std::int64_t bytes) {
    return bytes == 0 ? descriptor : b_.CreateAdd(descriptor, b_.getInt64(static_cast<std::uint64_t>(bytes >> 4)));
  }

  /// d += a x b for one 64 x n x k_depth step: wgmma.mma_async with the
  /// accumulator registers tied in and out, scale-d true; `a` is its
  /// descriptor (with `a_tile`, its tile) or its four fragment registers.
  /// Floating-point inputs take imm-scale-a and imm-scale-b (1), f16 and
  /// bf16 the imm-trans flags too (imm-trans-a only from shared memory).
  Registers mma_async(const Registers& d, const Registers& a, llvm::Value* b_descriptor, const WgmmaTile& b,
                      std::int64_t n, const WgmmaTile* a_tile = nullptr) {
    const std::size_t count = d.size();
    const ir::DType input = op_.operands[0]->type.dtype;
    const bool k_major_only = wgmma_reads_only_k_major(input);
    if (k_major_only && (b.mn_major() || (a_tile && a_tile->mn_major())))
      throw InternalError("dot: a tile of " + std::string(ir::dtype_name(input)) +
                          " is not K-major, as wgmma reads it (" + op_place(op_) + ")");
    const std::string type = wgmma_type_name(input);
    const std::string accumulator_type = ir::is_float(input) ? "f32" : "s32";
    std::string registers, constraints;
    for (std::size_t r = 0; r < count; ++r) {
      registers += (r ? ", $" : "$") + std::to_string(r);
      constraints += accumulator_constraint() + ",";
    }
    for (std::size_t r = 0; r < count; ++r) constraints += std::to_string(r) + ",";
    std::size_t next = 2 * count;
    std::string a_operand;
    if (a_tile) {
      a_operand = "$" + std::to_string(next++);
      constraints += "l,";
    } else {
      for (std::size_t word = 0; word < a.size(); ++word) {
        a_operand += (word ? ", $" : "{$") + std::to_string(next++);
        constraints += "r,";
      }
      a_operand += "}";
    }
    const std::string b_operand = "$" + std::to_string(next++);
    constraints += "l,r";
    std::string immediates = ir::is_float(input) ? ", 1, 1" : "";
    if (!k_major_only) {
      if (a_tile) immediates += a_tile->mn_major() ? ", 1" : ", 0";
      immediates += b.mn_major() ? ", 1" : ", 0";
    }
    const std::string text =
        "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(next) + ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
        std::to_string(n) + "k" + std::to_string(kWgmmaDepthBytes / ir::dtype_bytes(input)) + "." + accumulator_type +
        "." + type + "." + type + " {" + registers + "}, " + a_operand + ", " + b_operand + ", p" + immediates + ";\n}";
    std::vector<llvm::Value*> arguments = d;
    arguments.insert(arguments.end(), a.begin(), a.end());
    arguments.push_back(b_descriptor);
    arguments.push_back(b_.getInt32(1));
    return unpack(emit_asm_call(cg_, struct_of(count), arguments, text, constraints), count);
  }

  /// The accumulator registers' type: f32, or i32 for s8 inputs.
  llvm::Type* accumulator_type() const {
    return ir::is_float(op_.operands[0]->type.dtype) ? b_.getFloatTy() : b_.getInt32Ty();
  }

  /// The inline-asm constraint of an accumulator register.
  std::string accumulator_constraint() const { return ir::is_float(op_.operands[0]->type.dtype) ? "=f" : "=r"; }

  llvm::StructType* struct_of(std::size_t count) {
    return llvm::StructType::get(cg_.context, std::vector<llvm::Type*>(count, accumulator_type()));
  }

  Registers unpack(llvm::Value* result, std::size_t count) {
    Registers values;
    for (unsigned r = 0; r < count; ++r) values.push_back(b_.CreateExtractValue(result, {r}));
    return values;
  }

  KernelCodegen& cg_;
  llvm::IRBuilderBase& b_;
  const ir::Operation& op_;
  SharedScratch scratch_;
};

}  // namespace

bool wgmma_dot_stays_in_flight(const KernelCodegen& cg, const ir::Operation& dot) {
  if (dot.code != ir::OpCode::dot || !dot_uses_wgmma(cg.fn, dot, cg.target, cg.axes) || !reads_shared_slot(dot, 0) ||
      !reads_shared_slot(dot, 1))
    return false;
  const ir::Block* body = dot.parent;
  if (!body || !body->parent || body->parent->code != ir::OpCode::for_) return false;
  const ir::Value& accumulator = *dot.operands[2];
  if (accumulator.owner != body || accumulator.index < 1) return false;
  int dots = 0;
  ir::walk(*body, [&](ir::Operation& op) { dots += op.code == ir::OpCode::dot; });
  const auto uses = uses_of(cg.fn, *dot.result());
  return dots == 1 && uses.size() == 1 && uses[0].first == body->terminator() &&
         uses[0].second == accumulator.index - 1;
}

std::vector<llvm::Value*> emit_wgmma_wait(KernelCodegen& cg, int pending,
                                          const std::vector<llvm::Value*>& accumulator) {
  const std::string constraint = accumulator.at(0)->getType()->isFloatTy() ? "=f" : "=r";
  std::string constraints;
  for (std::size_t r = 0; r < accumulator.size(); ++r) constraints += constraint + ",";
  for (std::size_t r = 0; r < accumulator.size(); ++r)
    constraints += std::to_string(r) + (r + 1 < accumulator.size() ? "," : "");
  llvm::Type* type =
      llvm::StructType::get(cg.context, std::vector<llvm::Type*>(accumulator.size(), accumulator[0]->getType()));
  llvm::Value* result = emit_asm_call(cg, type, accumulator,
                                      "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";", constraints);
  std::vector<llvm::Value*> values;
  for (unsigned r = 0; r < accumulator.size(); ++r) values.push_back(cg.builder.CreateExtractValue(result, {r}));
  return values;
}

void emit_ptx_statement(KernelCodegen& cg, const std::string& text) {
  emit_asm_call(cg, cg.builder.getVoidTy(), {}, text, "~{memory}");
}

llvm::CallInst* emit_asm_call(KernelCodegen& cg, llvm::Type* result, const std::vector<llvm::Value*>& arguments,
                              const std::string& text, const std::string& constraints) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* argument : arguments) types.push_back(argument->getType());
  auto* asm_value =
      llvm::InlineAsm::get(llvm::FunctionType::get(result, types, false), text, constraints, /*hasSideEffects=*/true);
  llvm::CallInst* call = cg.builder.CreateCall(asm_value, arguments);
  call->addFnAttr(llvm::Attribute::Convergent);
  return call;
}

void emit_wgmma_dot(KernelCodegen& cg, const ir::Operation& op, std::vector<llvm::Value*> accumulator) {
  WgmmaLowering(cg, op).lower(std::move(accumulator));
}

}  // namespace kiln::lowering
