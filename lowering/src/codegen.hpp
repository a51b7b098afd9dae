// The LLVM code generator's internal interface: the per-kernel state shared
// by the files that emit each family of ops, and the PTX emission steps.
// Only lowering's LLVM files include this header.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/ir/ir.hpp"
#include "kiln/lowering/assign_layouts.hpp"
#include "kiln/lowering/axis_analysis.hpp"
#include "kiln/lowering/compile.hpp"

namespace kiln::lowering {

/// NVPTX address space of global memory, where every kernel pointer points.
inline constexpr unsigned kGlobalAddressSpace = 1;

/// The state of lowering one kernel: each IR value becomes the registers one
/// thread holds of it (one for a scalar, the layout's register count for a
/// tile, in register order).
struct KernelCodegen {
  const ir::Function& fn;
  const AxisInfoMap& axes;
  const LayoutMap& layouts;
  const GpuTarget& target;
  llvm::LLVMContext& context;
  llvm::Module& module;
  llvm::IRBuilder<> builder;
  llvm::Function* kernel = nullptr;
  /// This thread's lane in its warp and warp in its program (i32).
  llvm::Value* lane = nullptr;
  llvm::Value* warp = nullptr;
  std::unordered_map<const ir::Value*, std::vector<llvm::Value*>> registers;

  KernelCodegen(const ir::Function& fn, const AxisInfoMap& axes, const LayoutMap& layouts, const GpuTarget& target,
                llvm::Module& module)
      : fn(fn),
        axes(axes),
        layouts(layouts),
        target(target),
        context(module.getContext()),
        module(module),
        builder(module.getContext()) {}

  /// The registers of an already lowered value.
  const std::vector<llvm::Value*>& values_of(const ir::Value& value) const;
  /// The same, checked to be `count` registers: the operands of one op share
  /// a layout, so a mismatch is a layout assignment bug, reported naming `op`.
  const std::vector<llvm::Value*>& values_of(const ir::Value& value, std::size_t count, const ir::Operation& op) const;
  /// Records the registers of `value`.
  void define(const ir::Value& value, std::vector<llvm::Value*> values);
  /// How many registers a thread holds of `value`: 1 for a scalar.
  int register_count(const ir::Value& value) const;
  /// The LLVM type of one element in a register, or null for fp8 (no lowering yet).
  llvm::Type* llvm_type(const ir::Type& type) const;
  /// The LLVM type of one element in a register (i1 stays i1; pointers are
  /// `ptr addrspace(1)`). Throws LoweringError naming `op` for fp8.
  llvm::Type* element_type(const ir::Type& type, const ir::Operation& op) const;
  /// The LLVM type of one element in memory (i1 is a byte).
  llvm::Type* memory_type(const ir::Type& type, const ir::Operation& op) const;
  /// A call of the NVVM special-register read `id`.
  llvm::Value* read_special_register(llvm::Intrinsic::ID id);
};

/// NVPTX address space of shared memory.
inline constexpr unsigned kSharedAddressSpace = 3;

/// Emits `op`, handing it to the file of its family; LoweringError naming it
/// when no family lowers it.
void emit_op(KernelCodegen& cg, const ir::Operation& op);
/// Binds `block`'s arguments to `arguments` (registers per argument), emits
/// its ops and returns the registers of the values its `yield` passes on
/// (none when it has no yield).
std::vector<std::vector<llvm::Value*>> emit_region(KernelCodegen& cg, const ir::Block& block,
                                                   const std::vector<std::vector<llvm::Value*>>& arguments);

/// This thread's part of coordinate `dim` of `layout` (i32): the XOR of the
/// lane and warp bases whose bit is set in the thread's lane and warp.
llvm::Value* thread_coordinate(KernelCodegen& cg, const LinearLayout& layout, int dim);
/// The compile-time part of coordinate `dim` of register `reg` of `layout`.
std::int32_t register_coordinate(const LinearLayout& layout, int reg, int dim);

/// How shfl.sync picks the lane a value comes from.
enum class WarpShuffle {
  xor_lane,  ///< bfly: the lane whose index differs from this one's in the operand
  from_lane  ///< idx: the lane the operand names
};
/// `value` (any register type) from another lane of the full warp:
/// narrower than 32 bits travels widened, 64 bits in two halves.
llvm::Value* shuffle_in_warp(KernelCodegen& cg, llvm::Value* value, WarpShuffle mode, llvm::Value* lane_operand);

/// The registers of `conversion.value` in `conversion.to`, for `user`: a
/// choice among the thread's own registers when it already holds its
/// elements, one shfl.sync.idx per register when they are in its warp, else
/// a trip through a shared-memory buffer of the whole tile between two barriers.
std::vector<llvm::Value*> emit_layout_conversion(KernelCodegen& cg, const LayoutConversion& conversion,
                                                 const ir::Operation& user);

/// Each returns false when `op` is not one of its family and leaves no code.
/// constant, program_id, num_programs, arange, splat, broadcast, expand_dims.
bool emit_creation_or_shape_op(KernelCodegen& cg, const ir::Operation& op);
/// Arithmetic, bitwise, cmp, select, cast, bitcast, math unaries, fma.
bool emit_elementwise_op(KernelCodegen& cg, const ir::Operation& op);
/// addptr, load, store.
bool emit_memory_op(KernelCodegen& cg, const ir::Operation& op);
/// for, if (their regions' yields are consumed by emit_region).
bool emit_control_flow_op(KernelCodegen& cg, const ir::Operation& op);
/// reduce: within each thread, across lanes with butterfly shuffles, across
/// warps through shared memory.
bool emit_reduce_op(KernelCodegen& cg, const ir::Operation& op);

/// The kernel as an LLVM module for `nvptx64-nvidia-cuda` (data layout of
/// `machine`): a `ptx_kernel` function with `.maxntid num_warps*32`.
std::unique_ptr<llvm::Module> generate_llvm_module(const ir::Function& fn, const AxisInfoMap& axes,
                                                   const LayoutMap& layouts, const GpuTarget& target,
                                                   llvm::LLVMContext& context, const llvm::TargetMachine& machine);

/// The NVPTX target machine for `target.arch` with PTX ISA 8.5; LoweringError
/// for an architecture LLVM 19 does not know.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const GpuTarget& target);
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
