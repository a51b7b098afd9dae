// The GPU code generator's public entry point: an optimised tile-IR kernel in,
// LLVM IR and PTX for one NVIDIA architecture out (docs/architecture.md, "The GPU lowering").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/ir.hpp"

namespace kiln::lowering {

/// A kernel the GPU code generator cannot lower: one line naming the op (or
/// value), its source line and the offending types or values.
struct LoweringError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A broken invariant of the code generator itself, which no kernel can be
/// blamed for: "internal error in kiln: WHAT (please report)". Not a
/// LoweringError, so that a caller (or test) expecting the user's kind of
/// error does not take one for the other.
struct InternalError : std::logic_error {
  explicit InternalError(const std::string& what);
};

/// Threads per warp on every NVIDIA GPU (PTX's WARP_SZ).
inline constexpr int kLanesPerWarp = 32;

/// The range of GpuTarget::max_registers: what a thread can address on
/// sm_80 and newer, from the fewest ptxas allocates (it raises a lower
/// `.maxnreg` to 24 with a warning).
inline constexpr int kMinMaxRegisters = 24;
inline constexpr int kMaxRegisters = 255;

/// What to generate code for.
struct GpuTarget {
  /// `sm_80` … `sm_90a` (LLVM 19's NVPTX backend, PTX ISA 8.5).
  std::string arch = "sm_90a";
  /// Warps per program (CTA); a power of two from 1 to 32.
  int num_warps = 4;
  /// Registers per thread ptxas may allocate (`.maxnreg`), kMinMaxRegisters
  /// to kMaxRegisters; 0 leaves the count to ptxas.
  int max_registers = 0;
  /// The launcher guarantees that no two pointer arguments address
  /// overlapping memory, so they may be marked `noalias` (and read through
  /// the non-coherent cache). Without it only a kernel that writes no memory
  /// gets `noalias`: an in-place launch (`out` == `x`) would break the promise.
  bool arguments_do_not_overlap = false;
  /// `dot` runs on tensor cores (mma.sync) on sm_80 and newer where
  /// dot_uses_tensor_cores says (f16/bf16, i8, f32 at tf32 precision); false
  /// keeps every dot on the FMA units.
  bool tensor_cores = true;
  /// On sm_90a, a tensor-core dot that dot_uses_wgmma accepts runs on wgmma
  /// (wgmma_layout.hpp); false keeps it on mma.sync, as on sm_80.
  bool wgmma = true;
  /// Check every hint (multiple_of, max_contiguous) at run time and stop the
  /// kernel through kHintFaultFunction or kContiguityFaultFunction where one
  /// does not hold, as the emu device does.
  /// False for a GPU, which trusts hints, as Triton does.
  bool check_hints = false;
  /// Call kInlineAsmHostFunction for each inline_asm element instead of
  /// emitting the asm, as the emu device needs (it runs the op's host
  /// reference). False for a GPU, which runs the asm.
  bool inline_asm_on_host = false;
};

/// How compile_for_gpu reports on its passes.
struct LoweringOptions {
  /// Pass name or `all`: print that pass's output to `log`. The passes, in
  /// order: `verify`, `axes` (axis info per value), `layouts` (the linear
  /// layout per tile), `target`, `codegen` (LLVM IR), `libdevice` (links the
  /// __nv_* math functions the kernel calls), `o3` (optimised LLVM IR),
  /// `ptx`. Empty: taken from the environment variable KILN_DUMP.
  std::string dump_after = {};
  /// Pass name: return after that pass, skipping the rest (`codegen`: the
  /// LLVM IR only, without O3 and PTX, as the `emu` device needs). Empty:
  /// run every pass.
  std::string stop_after = {};
  /// Keep the LLVM IR text before and after O3 in GpuKernel::llvm_ir and
  /// optimized_llvm_ir (printing a small kernel's module twice takes about a
  /// millisecond; the cuda device needs only the PTX and turns it off).
  bool keep_llvm_ir = true;
  /// Print each pass's wall time to `log`.
  bool timing = false;
  /// Defaults to std::cerr.
  std::ostream* log = nullptr;
};

/// One pass's name and wall time in milliseconds.
struct PassTime {
  std::string pass;
  double milliseconds = 0;
};

/// The kernel's dynamic shared memory in the LLVM module: `@kiln_shared =
/// external addrspace(3) global [0 x i8], align 16`, every op's scratch at an
/// offset in it.
inline constexpr const char* kSharedMemoryArray = "kiln_shared";
/// The module's named metadata holding the array's size in bytes (`!{i32 N}`),
/// for devices that run the LLVM IR (the emu device).
inline constexpr const char* kSharedBytesMetadata = "kiln.shared_bytes";

/// `void kiln_hint_fault(ptr what, i32 element, i64 value, i32 kind)`: what
/// the code for a target that checks hints calls where one fails (`what`:
/// "multiple_of(16) does not hold at FILE:LINE"; `element`: the row-major
/// index, -1 for a scalar; `value`: the element widened to 64 bits; `kind`:
/// a HintValueKind). A device running such code supplies it.
inline constexpr const char* kHintFaultFunction = "kiln_hint_fault";
/// `void kiln_contiguity_fault(ptr what, i32 element, i64 value, i64 previous,
/// i32 kind)`: the same for a max_contiguous that does not hold (`what`:
/// "max_contiguous(4) does not hold at FILE:LINE"; `element`: the row-major
/// index of the first element that does not continue its run; `value` and
/// `previous`: it and the element before it, widened to 64 bits).
inline constexpr const char* kContiguityFaultFunction = "kiln_contiguity_fault";
/// `i64 kiln_inline_asm_host(ptr key, ptr arguments)`: what the code for a
/// target with GpuTarget::inline_asm_on_host calls for each element of an
/// inline_asm (`key`: the op's key attribute, a generic pointer to a constant
/// string; `arguments`: one i64 per operand, the element's bits zero-extended;
/// the result's bits come back likewise). A device running such code
/// supplies it.
inline constexpr const char* kInlineAsmHostFunction = "kiln_inline_asm_host";
/// How kHintFaultFunction's `value` is printed.
enum class HintValueKind : std::int32_t { signed_integer, unsigned_integer, pointer };

/// A kernel compiled for one architecture.
struct GpuKernel {
  /// The PTX entry name: the IR kernel's name with characters PTX does not
  /// allow in identifiers (`vector_add<1024>`) replaced by `_`.
  std::string name;
  /// The code generator's LLVM IR, before optimisation (empty unless
  /// LoweringOptions::keep_llvm_ir).
  std::string llvm_ir;
  /// The same after LLVM's O3 pipeline: what the NVPTX backend compiled
  /// (empty unless LoweringOptions::keep_llvm_ir).
  std::string optimized_llvm_ir;
  /// The PTX module, ready for ptxas or cuModuleLoadData.
  std::string ptx;
  /// Threads per program to launch with: num_warps * 32 (`.maxntid` in the PTX).
  int threads_per_block = 0;
  /// Bytes of dynamic shared memory per program to launch with: the size of
  /// the kernel's one shared-memory array (kSharedMemoryArray), 0 when it uses
  /// none. The PTX declares no static shared memory.
  int shared_bytes = 0;
  /// Wall time of each pass, in pipeline order.
  std::vector<PassTime> pass_times;
};

/// Lowers an optimised, verified kernel (ir::optimize's output, e.g. a
/// runtime::Program's optimised function) to LLVM IR and PTX for `target`.
/// The kernel is not modified. Throws LoweringError for ops, types or targets
/// the code generator does not support yet.
GpuKernel compile_for_gpu(const ir::Function& optimized, const GpuTarget& target = {},
                          const LoweringOptions& options = {});

/// "the GPU code generator does not support op `atomic_rmw` on f8e4m3 yet (histogram.hpp:12)":
/// the message for an op with no lowering; the place is the op's source line,
/// or its first result when the line is unknown.
std::string unsupported_op_message(const ir::Operation& op, const std::string& detail = "");

/// Where `op` is, for error messages: "softmax.hpp:41", or "%7 = reduce" when
/// its source line is unknown.
std::string op_place(const ir::Operation& op);

}  // namespace kiln::lowering
