// The LLVM code generator's internal interface: the per-kernel state shared
// by the files that emit each family of ops, and the PTX emission steps.
// Only lowering's LLVM files include this header.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/ir/ir.hpp"
#include "kiln/ir/provenance.hpp"
#include "kiln/lowering/acting_copies.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/shared_access.hpp"

namespace kiln::lowering {

/// NVPTX address space of global memory, where every kernel pointer points.
inline constexpr unsigned kGlobalAddressSpace = 1;

/// A local_alloc's ring in the kernel's shared memory: slot s starts at
/// `base + s * slot_bytes`, each laid out as `layout` (offset → coordinates).
struct SharedRing {
  llvm::Value* base = nullptr;
  std::uint64_t slot_bytes = 0;
  LinearLayout layout;
  llvm::Type* memory_type = nullptr;
};

/// Where a local_load's tile is in shared memory: `element_offset` (i32)
/// elements of the ring's memory type past its base. A dot reading it as a
/// or b takes its fragments (or elements) from there, not from registers.
struct SharedSlot {
  llvm::Value* element_offset = nullptr;
  const SharedRing* ring = nullptr;
};

/// The state of lowering one kernel: each IR value becomes the registers one
/// thread holds of it (one for a scalar, the layout's register count for a
/// tile, in register order).
struct KernelCodegen {
  const ir::Function& fn;
  const AxisInfoMap& axes;
  const LayoutMap& layouts;
  const GpuTarget& target;
  /// Which pointer arguments the kernel writes through (uniform scalar loads).
  const ir::Provenance provenance;
  llvm::LLVMContext& context;
  llvm::Module& module;
  llvm::IRBuilder<> builder;
  llvm::Function* kernel = nullptr;
  /// This thread's lane in its warp and warp in its program (i32).
  llvm::Value* lane = nullptr;
  llvm::Value* warp = nullptr;
  /// This thread's warpgroup (warp / 4) as the kernel's entry reads it from
  /// lane 0 (uniform_warpgroup), made by the first wgmma dot that needs it.
  llvm::Value* uniform_warpgroup = nullptr;
  std::unordered_map<const ir::Value*, std::vector<llvm::Value*>> registers;
  /// Uniform tiles read in another register count: (value, count) → copies.
  mutable std::map<std::pair<const ir::Value*, std::size_t>, std::vector<llvm::Value*>> uniform_reads;
  /// The kernel's dynamic shared memory (kSharedMemoryArray), created by the
  /// first SharedScratch, and the bytes the largest op's scratch takes.
  llvm::GlobalVariable* shared_memory = nullptr;
  std::uint64_t shared_bytes = 0;
  /// The rings (place_shared_rings) take [0, ring_bytes) of shared memory for
  /// the whole kernel (rings never live at once share bytes); op scratch
  /// comes after them.
  std::unordered_map<const ir::Value*, SharedRing> rings;
  std::uint64_t ring_bytes = 0;
  /// Some ring is read by a wgmma dot: each cp.async wait is followed by a
  /// fence that makes the landed copies visible to the tensor cores.
  bool rings_read_by_wgmma = false;
  /// Each local_load result's slot.
  std::unordered_map<const ir::Value*, SharedSlot> slots;
  /// The `!kiln.place` node the builder copies onto what it inserts now: the
  /// source line of the op being emitted (null outside ops or for an op without one).
  llvm::MDNode* place = nullptr;
  /// The `!kiln.access` node copied likewise: the element dtype and pointer
  /// source of the op being emitted when it reaches global memory, else null.
  llvm::MDNode* access = nullptr;

  KernelCodegen(const ir::Function& fn, const AxisInfoMap& axes, const LayoutMap& layouts, const GpuTarget& target,
                llvm::Module& module)
      : fn(fn),
        axes(axes),
        layouts(layouts),
        target(target),
        provenance(fn),
        context(module.getContext()),
        module(module),
        builder(module.getContext()) {}

  /// The registers of an already lowered value.
  const std::vector<llvm::Value*>& values_of(const ir::Value& value) const;
  /// The same, checked to be `count` registers: the operands of one op share
  /// a layout, so a mismatch is a layout assignment bug, reported naming `op`.
  /// A uniform tile (is_uniform_tile), which joins no layout class, gives
  /// `count` copies of its value whatever its own layout.
  const std::vector<llvm::Value*>& values_of(const ir::Value& value, std::size_t count, const ir::Operation& op) const;
  /// Records the registers of `value`.
  void define(const ir::Value& value, std::vector<llvm::Value*> values);
  /// How many registers a thread holds of `value`: 1 for a scalar.
  int register_count(const ir::Value& value) const;
  /// The LLVM type of one element in a register: fp8 is its bit pattern, an i8.
  llvm::Type* llvm_type(const ir::Type& type) const;
  /// The LLVM type of one element in a register (i1 stays i1; pointers are
  /// `ptr addrspace(1)`; fp8 is an i8). Throws LoweringError naming `op` for
  /// a type without one.
  llvm::Type* element_type(const ir::Type& type, const ir::Operation& op) const;
  /// The LLVM type of one element in memory (i1 is a byte).
  llvm::Type* memory_type(const ir::Type& type, const ir::Operation& op) const;
  /// A call of the NVVM special-register read `id`.
  llvm::Value* read_special_register(llvm::Intrinsic::ID id);
};

/// NVPTX address space of shared memory.
inline constexpr unsigned kSharedAddressSpace = 3;

/// One op's scratch in the kernel's shared memory. Every op that uses shared
/// memory (a layout conversion, a reduce or scan across warps, a dot's staged
/// operands, a side effect's results delivered across warps) stores, waits at
/// a barrier, reads, and waits at a barrier again before it ends
/// (round_trip_through_shared_memory): its scratch is dead outside the op,
/// and no two ops' scratch is live at once. So every
/// op's scratch starts at offset 0 of one kernel-wide dynamic array, and the
/// kernel's shared size is the largest op's, not the sum. Regions one op needs
/// at the same time (a dot's a and b) take consecutive aligned offsets.
class SharedScratch {
 public:
  explicit SharedScratch(KernelCodegen& cg) : cg_(cg), end_(cg.ring_bytes) {}
  /// A `ptr addrspace(3)` to `bytes` bytes at the first offset aligned to
  /// `alignment` after the regions this op took before.
  llvm::Value* take(std::uint64_t bytes, std::uint64_t alignment = 16);

 private:
  KernelCodegen& cg_;
  std::uint64_t end_ = 0;
};

/// The kernel's dynamic shared-memory array (kSharedMemoryArray), created on first use.
llvm::GlobalVariable* shared_memory_array(KernelCodegen& cg);

/// Places every local_alloc's ring at the start of shared memory as its
/// plan says (shared_rings.hpp: offsets, slot sizes and layouts). Sets
/// cg.ring_bytes.
void place_shared_rings(KernelCodegen& cg);
/// The offset (i32, in elements of the ring's memory type) of slot `slot`
/// (an i32 scalar value) of `ring` from its base.
llvm::Value* ring_slot_offset(KernelCodegen& cg, const SharedRing& ring, const ir::Value& slot);

/// Waits until every thread of the block has reached this point (bar.sync 0),
/// its writes to shared memory visible to all.
void emit_barrier(KernelCodegen& cg);

/// One crossing of values between threads through SharedScratch: `store()`
/// writes them, a barrier makes the writes visible, `load()` reads, and a
/// second barrier keeps the next user of the scratch (the next op, the next
/// iteration of a loop) from overwriting it before every thread has read.
/// Returns what `load()` returns.
template <class Store, class Load>
auto round_trip_through_shared_memory(KernelCodegen& cg, Store store, Load load) {
  store();
  emit_barrier(cg);
  auto loaded = load();
  emit_barrier(cg);
  return loaded;
}

/// A tile in shared memory at `base` (plus `element_offset` elements, an
/// i32 known only at run time, when given: a ring slot), laid out as
/// `shared` (offset → the tile's dimensions, shared_layout.hpp). The run-time
/// offset joins each element's 32-bit index, so that a slot's addresses stay
/// one 32-bit register each. Each thread stores and loads the
/// elements it holds in `layout`, as one vector access of up to 16 bytes per
/// group of registers the two layouts make consecutive in memory
/// (shared_vector_elements), or reads an mma fragment with ldmatrix.
class SharedTile {
 public:
  SharedTile(KernelCodegen& cg, const LinearLayout& layout, const LinearLayout& shared, llvm::Type* memory_type,
             llvm::Value* base, llvm::Value* element_offset = nullptr);
  /// Stores each distinct element of `values` (one per register; integers
  /// narrower than the memory type are zero-extended).
  void store(const std::vector<llvm::Value*>& values);
  /// Every register's element, as `register_type` (integers truncated from
  /// the memory type).
  std::vector<llvm::Value*> load(llvm::Type* register_type);
  /// The elements of registers first … first + plan.registers_per_load() - 1,
  /// as `register_type`, read with one ldmatrix of `plan` (plan_ldmatrix for
  /// this tile's layouts; one plan per tile).
  std::vector<llvm::Value*> load_with_ldmatrix(const LdmatrixPlan& plan, llvm::Type* register_type, int first);
  /// Elements per access.
  int vector_width() const { return width_; }
  /// The address of register `reg`'s element.
  llvm::Value* address_of_register(int reg);

 private:
  /// The element at `thread_part` XOR `offset`, where `thread_bits` are the
  /// bits the thread part may have.
  llvm::Value* address(llvm::Value* thread_part, std::int32_t thread_bits, std::int32_t offset);

  KernelCodegen& cg_;
  OffsetBases offsets_;
  llvm::Type* memory_type_;
  llvm::Value* base_;
  llvm::Value* element_offset_;
  llvm::Value* warp_part_ = nullptr;
  llvm::Value* thread_part_ = nullptr;
  std::int32_t warp_bits_ = 0, thread_bits_ = 0;
  /// The row an ldmatrix lane supplies, relative to its group's first
  /// register, and its possible bits: made by the first ldmatrix.
  llvm::Value* row_part_ = nullptr;
  std::int32_t row_bits_ = 0;
  int width_ = 1;
};

/// The bytes of shared memory one block may use on `arch` (with the opt-in
/// to more than 48 KiB of dynamic shared memory): sm_80 and sm_87 163 KiB,
/// sm_86 and sm_89 99 KiB, sm_90 and sm_90a 227 KiB.
std::uint64_t shared_memory_limit_bytes(const std::string& arch);
/// Records the kernel's shared size in the module (kSharedBytesMetadata);
/// LoweringError naming the kernel, its bytes and the limit of
/// `cg.target.arch` when it needs more than one block may have.
void finish_shared_memory(KernelCodegen& cg);
/// The shared size finish_shared_memory recorded in `module`; 0 when none.
int shared_memory_bytes(const llvm::Module& module);

/// Emits `op`, handing it to the file of its family; LoweringError naming it
/// when no family lowers it.
void emit_op(KernelCodegen& cg, const ir::Operation& op);
/// Binds `block`'s arguments to `arguments` (registers per argument), emits
/// its ops and returns the registers of the values its `yield` passes on
/// (none when it has no yield).
std::vector<std::vector<llvm::Value*>> emit_region(KernelCodegen& cg, const ir::Block& block,
                                                   const std::vector<std::vector<llvm::Value*>>& arguments);

/// `accumulated` XOR the XOR of `bases[i]` for each set bit i of `index`
/// (i32, below 2^bases.size()), at run time. Runs of bits whose bases double
/// from one bit to the next (a lane index read as a coordinate) become one
/// shift and mask each.
llvm::Value* xor_of_set_bits(llvm::IRBuilderBase& b, llvm::Value* accumulated, const std::vector<std::int32_t>& bases,
                             llvm::Value* index);
/// This thread's part of coordinate `dim` of `layout` (i32): the XOR of the
/// lane and warp bases whose bit is set in the thread's lane and warp.
llvm::Value* thread_coordinate(KernelCodegen& cg, const LinearLayout& layout, int dim);
/// The compile-time part of coordinate `dim` of register `reg` of `layout`.
std::int32_t register_coordinate(const LinearLayout& layout, int reg, int dim);

/// The compile-time coordinates (one per output dimension) of register `reg`
/// of `layout` in lane 0 of warp 0.
std::vector<std::int32_t> coordinates_of_register(const LinearLayout& layout, std::int32_t reg);
/// The bits of hardware index `in` (lane or warp) whose basis steps along
/// `axis`: the partners a reduce or scan combines. LoweringError naming `op`
/// when such a basis also steps along another dimension.
std::vector<int> bits_along_axis(const LinearLayout& layout, const char* in, int axis, const ir::Operation& op);
/// The combine region of `op` (a reduce or scan) applied to `left` and
/// `right`, one register per operand, emitted inline.
std::vector<llvm::Value*> emit_combine(KernelCodegen& cg, const ir::Operation& op,
                                       const std::vector<llvm::Value*>& left, const std::vector<llvm::Value*>& right);

/// Whether `dtype` is f8e4m3 or f8e5m2: registers hold its bit pattern as an i8.
bool is_fp8(ir::DType dtype);
/// The f32 value (exact) of the fp8 `bits` (i8) of format `dtype`.
llvm::Value* fp8_to_float(KernelCodegen& cg, llvm::Value* bits, ir::DType dtype);
/// The fp8 bits (i8) of f32 `value` in format `dtype`, rounded to nearest
/// even; overflow gives NaN (e4m3) or infinity (e5m2), as the interpreter does.
llvm::Value* float_to_fp8(KernelCodegen& cg, llvm::Value* value, ir::DType dtype);
/// f64 `value` rounded to f32 toward zero with the last bit set when inexact
/// (round to odd): a narrower rounding of that is the correct rounding of `value`.
llvm::Value* round_to_odd_float(KernelCodegen& cg, llvm::Value* value);
/// The same for an integer `value` of up to 64 bits, exactly, in integer
/// arithmetic (sm_80 converts integers to bf16 through a round-to-nearest
/// f32, a double rounding for those wider than 24 bits).
llvm::Value* integer_round_to_odd_float(KernelCodegen& cg, llvm::Value* value, bool is_signed);

/// How shfl.sync picks the lane a value comes from.
enum class WarpShuffle {
  xor_lane,  ///< bfly: the lane whose index differs from this one's in the operand
  from_lane  ///< idx: the lane the operand names
};
/// `value` (any register type) from another lane of the full warp:
/// narrower than 32 bits travels widened, 64 bits in two halves.
llvm::Value* shuffle_in_warp(KernelCodegen& cg, llvm::Value* value, WarpShuffle mode, llvm::Value* lane_operand);

/// The registers of `conversion.value` in `conversion.to`, for `user`, made
/// as planned_conversion_kind says: a choice among the thread's own
/// registers when it already holds its elements, the value's index
/// arithmetic computed again (rematerialize), one shfl.sync.idx per register
/// when the elements are in its warp, else a trip through a shared-memory
/// buffer of the whole tile between two barriers.
std::vector<llvm::Value*> emit_layout_conversion(KernelCodegen& cg, const LayoutConversion& conversion,
                                                 const ir::Operation& user);
/// The registers of `value` (is_rematerializable) computed again in `layout`
/// from its aranges, constants, splats and scalars.
std::vector<llvm::Value*> rematerialize(KernelCodegen& cg, const ir::Value& value, const LinearLayout& layout);

/// The registers of `arange` in `layout`.
std::vector<llvm::Value*> arange_registers(KernelCodegen& cg, const ir::Operation& arange, const LinearLayout& layout);
/// For each register of a broadcast's or expand_dims's result in `result`,
/// the register of its operand in `source` (thread_local_register_map).
std::vector<int> shape_op_register_map(const ir::Operation& op, const LinearLayout& result, const LinearLayout& source);
/// One element of element-wise or cast `op` from one register of each operand.
llvm::Value* emit_element(KernelCodegen& cg, const ir::Operation& op, std::vector<llvm::Value*> operands);
/// `pointer` advanced by `offset` elements, as `addptr` does.
llvm::Value* offset_pointer(KernelCodegen& cg, const ir::Operation& addptr, llvm::Value* pointer, llvm::Value* offset);

/// One per family of ops.def (emit_op dispatches by ir::family_of).
/// constant, program_id, num_programs, arange, splat, broadcast, expand_dims.
void emit_creation_or_shape_op(KernelCodegen& cg, const ir::Operation& op);
/// The elementwise and cast families: arithmetic, bitwise, cmp, select,
/// math unaries, fma, cast, bitcast.
void emit_elementwise_op(KernelCodegen& cg, const ir::Operation& op);
/// addptr, load, store (by each element's acting copy, DuplicatedElements).
void emit_memory_op(KernelCodegen& cg, const ir::Operation& op);
/// for, if, while (their regions' yields are consumed by emit_region).
void emit_control_flow_op(KernelCodegen& cg, const ir::Operation& op);
/// reduce: within each thread, across lanes with butterfly shuffles, across
/// warps through shared memory.
void emit_reduce_op(KernelCodegen& cg, const ir::Operation& op);
/// reshape, trans, join, split: registers renamed or picked, the operands
/// read in the layouts shape_layouts.hpp derives from the results'.
void emit_reshape_op(KernelCodegen& cg, const ir::Operation& op);
/// scan: within each thread, across lanes with butterfly shuffles, across
/// warps through shared memory, one bit of the axis at a time.
void emit_scan_op(KernelCodegen& cg, const ir::Operation& op);
/// dot: mma.sync.m16n8k16 on tensor cores for f16/bf16 inputs on sm_80+,
/// else each thread's accumulator registers from its rows of a and columns
/// of b in the dot operand layouts, summed in k order on the FMA units.
void emit_dot_op(KernelCodegen& cg, const ir::Operation& op);
/// A dot that dot_uses_wgmma accepts, on wgmma (codegen_wgmma.cpp), from its
/// accumulator's registers.
void emit_wgmma_dot(KernelCodegen& cg, const ir::Operation& op, std::vector<llvm::Value*> accumulator);
/// Whether wgmma `dot` is left in flight across its loop's iterations
/// (Triton's wait_group 1): the one dot of a for loop's body, both operands
/// read from ring slots, its accumulator carried by the loop and its result
/// only yielded back to it. Its iteration waits for the previous group and
/// passes a barrier before the copies that reuse that group's slots; the
/// loop's exit waits for the last (emit_for).
bool wgmma_dot_stays_in_flight(const KernelCodegen& cg, const ir::Operation& dot);
/// wgmma.wait_group `pending` with `accumulator`'s registers passed through
/// it, so that no use of them moves above it.
std::vector<llvm::Value*> emit_wgmma_wait(KernelCodegen& cg, int pending, const std::vector<llvm::Value*>& accumulator);
/// One PTX statement with no operands (a fence, a commit), as inline
/// assembly with side effects that no memory access moves across.
void emit_ptx_statement(KernelCodegen& cg, const std::string& text);
/// A call of inline PTX `text` with LLVM `constraints`, returning `result`
/// (void, one value or a struct of them), with side effects and convergent:
/// the warp-wide matrix instructions LLVM 19 has no intrinsics for.
llvm::CallInst* emit_asm_call(KernelCodegen& cg, llvm::Type* result, const std::vector<llvm::Value*>& arguments,
                              const std::string& text, const std::string& constraints);
/// local_alloc, async_copy, async_commit, async_wait, local_load: the rings
/// of pipelined loops (place_shared_rings), cp.async into them.
void emit_shared_buffer_op(KernelCodegen& cg, const ir::Operation& op);
/// async_copy: cp.async of each thread's runs of its pointer tile into the
/// slot, 0 bytes read where masked off (codegen_memory.cpp, beside the loads).
void emit_async_copy(KernelCodegen& cg, const ir::Operation& op);
/// atomic_rmw, atomic_cas: one LLVM atomicrmw/cmpxchg per element, by its
/// acting copy only (DuplicatedElements), the old value delivered to all copies.
void emit_atomic_op(KernelCodegen& cg, const ir::Operation& op);
/// print (vprintf, one line per element) and assert (the fault record, then
/// trap: fault_record.hpp), by each element's acting copy only.
void emit_debug_op(KernelCodegen& cg, const ir::Operation& op);
/// multiple_of, max_contiguous: the operand's registers, checked where GpuTarget::check_hints.
void emit_hint_op(KernelCodegen& cg, const ir::Operation& op);
/// inline_asm: LLVM inline asm per register, or the host reference's hook
/// where GpuTarget::inline_asm_on_host.
void emit_inline_asm_op(KernelCodegen& cg, const ir::Operation& op);
/// The fault of integer `op` (div, rem) where a register of its divisor,
/// `divisors`, is 0: the interpreter's message in the fault record, then trap.
void emit_division_by_zero_check(KernelCodegen& cg, const ir::Operation& op, const std::vector<llvm::Value*>& divisors);
/// The fault of `for` loop `op` that `runs` (its bounds `lower` < `upper`)
/// but whose `step` is not positive: the interpreter's message in the fault
/// record, then trap.
void emit_loop_step_check(KernelCodegen& cg, const ir::Operation& op, llvm::Value* runs, llvm::Value* lower,
                          llvm::Value* upper, llvm::Value* step);

/// The copies of each element of a value that several registers, lanes or
/// warps hold (the kernel of its layout; a scalar is held by every thread).
/// An op with a side effect (a store, an atomic, a print, an assert)
/// performs it in one copy of each element, the acting copy
/// (acting_copies.hpp), which then delivers its result to the others.
class DuplicatedElements {
 public:
  /// The copies of `value`'s elements.
  DuplicatedElements(KernelCodegen& cg, const ir::Value& value);
  /// The copies of a scalar of `element` type: one in every thread.
  DuplicatedElements(KernelCodegen& cg, const ir::Type& element);
  /// Whether register `reg` acts in some thread: false when, in every
  /// thread, it duplicates another register of the value.
  bool register_may_act(int reg) const;
  /// i1: whether this thread's registers that may act do act (their lane and
  /// warp are clear at the lane and warp pivots); null when every thread's do.
  llvm::Value* thread_acts();
  /// This thread's coordinates (i32, one per dimension) of register `reg`'s element.
  std::vector<llvm::Value*> coordinates(int reg);
  /// The row-major index (i32) of register `reg`'s element in the tile.
  llvm::Value* flat_index(int reg);
  /// The row-major index (i32) of the element of the first of `registers`
  /// whose `picked` (i1, one per register of the value) holds, the last of
  /// them when none does: the registers' constant coordinates are selected
  /// before the one index is computed.
  llvm::Value* flat_index_of_first(const std::vector<int>& registers, const std::vector<llvm::Value*>& picked);
  /// Per register, the value computed in `acting` by the element's acting
  /// copy (what the other copies computed is ignored): its own register when
  /// the acting copy is in this thread, a shfl.sync.idx from the acting lane
  /// when it is in this warp, else a shared-memory buffer of the tile that
  /// acting copies store to and every copy loads from, between two barriers.
  std::vector<llvm::Value*> deliver(const std::vector<llvm::Value*>& acting, const ir::Operation& op);

 private:
  /// The row-major index (i32) in the tile of the element at `coordinate`
  /// (one i32 per dimension).
  llvm::Value* row_major_index(const std::vector<llvm::Value*>& coordinate);
  std::vector<llvm::Value*> deliver_through_shared_memory(const std::vector<llvm::Value*>& acting,
                                                          const ir::Operation& op);
  DuplicatedElements(KernelCodegen& cg, LinearLayout layout, ir::Type element);

  KernelCodegen& cg_;
  LinearLayout layout_;
  ir::Type element_;
  ActingCopies copies_;
};

/// The kernel as an LLVM module for `nvptx64-nvidia-cuda` (data layout of
/// `machine`): a `ptx_kernel` function with `.maxntid num_warps*32`.
std::unique_ptr<llvm::Module> generate_llvm_module(const ir::Function& fn, const AxisInfoMap& axes,
                                                   const LayoutMap& layouts, const GpuTarget& target,
                                                   llvm::LLVMContext& context, const llvm::TargetMachine& machine);

/// The NVPTX target machine for `target.arch` with PTX ISA 8.5; LoweringError
/// for an architecture LLVM 19 does not know.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const GpuTarget& target);
/// Links libdevice's definitions of the __nv_* functions `module` calls
/// (KILN_LIBDEVICE, else the CUDA toolkit's, else libdevice.10.bc next to the
/// executable) and internalises everything but the kernel; nothing when it
/// calls none. LoweringError naming the op when no libdevice is found.
void link_libdevice(llvm::Module& module);
/// LLVM's default O3 module pipeline, tuned for `machine`.
void optimize_module(llvm::Module& module, llvm::TargetMachine& machine);
/// The PTX text of `module`.
std::string emit_ptx(llvm::Module& module, llvm::TargetMachine& machine);
/// `name` as a PTX identifier ([a-zA-Z_][a-zA-Z0-9_$]*): other characters,
/// such as a C++ template's `<1024>`, become `_`. The kernel's entry name.
std::string ptx_identifier(std::string_view name);
/// The module's text form.
std::string to_string(const llvm::Module& module);

}  // namespace kiln::lowering
