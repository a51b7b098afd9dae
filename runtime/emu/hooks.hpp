// The host side of every target-specific operation the GPU code generator
// emits: the table of NVVM intrinsics and external GPU functions the emu
// runs, each with its `extern "C"` hook (kiln_emu_*), plus the symbols the
// host backend itself calls (half and bfloat16 conversions). NVVM's scoped
// atomics need no hook: retarget_module.cpp makes them host atomics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kiln::runtime::emu {

/// One hook: what the GPU code calls and what runs instead.
struct Hook {
  /// The intrinsic (llvm.nvvm.*) or external GPU function (vprintf,
  /// libdevice's __nv_*) whose calls the retargeting redirects;
  /// empty for a symbol only the host backend calls.
  std::string_view replaces;
  /// The host symbol the JIT resolves to `address`.
  std::string_view symbol;
  void* address;
};

/// Every hook, one table: the emu runs exactly these operations.
std::span<const Hook> hook_table();
/// The hook replacing intrinsic or external function `name`; null when none does.
const Hook* find_hook(std::string_view name);
/// Whether `name` is a hook's own symbol, which retargeted code calls directly.
bool is_hook_symbol(std::string_view name);

/// `ptr addrspace(3) kiln_emu_shared_memory()`: the running program's shared memory.
inline constexpr std::string_view kSharedMemoryHook = "kiln_emu_shared_memory";
/// `ptr addrspace(1) kiln_emu_fault_record()`: the running program's fault
/// record (fault_record.hpp), which the kernel's loads of kFaultRecordGlobal
/// become; the emu's memory, so its accesses are not checked.
inline constexpr std::string_view kFaultRecordHook = "kiln_emu_fault_record";
/// `void kiln_emu_trap()`: the inline assembly `trap;`; stops the program with the fault
/// record's message when the kernel wrote one.
inline constexpr std::string_view kTrapHook = "kiln_emu_trap";
/// `void kiln_emu_check_global_access(ptr addrspace(1) address, i64 bytes, i32 site)`:
/// checks an access before it happens and counts its bytes.
inline constexpr std::string_view kGlobalAccessHook = "kiln_emu_check_global_access";

/// `void kiln_emu_check_shared_access(ptr addrspace(3) address, i64 bytes, i32
/// site, ptr stored)`: checks a shared-memory access before it happens
/// (shared_access.hpp); `stored` holds a store's bytes, null for a read.
inline constexpr std::string_view kSharedAccessHook = "kiln_emu_check_shared_access";

/// `void kiln_emu_cp_async(ptr addrspace(3) destination, ptr addrspace(1)
/// source, i64 copied, i64 bytes, i32 site)`: a cp.async of the running
/// thread, landing when a wait completes its group (async_copies.hpp).
inline constexpr std::string_view kAsyncCopyHook = "kiln_emu_cp_async";
/// `void kiln_emu_cp_async_commit()`: cp.async.commit_group.
inline constexpr std::string_view kAsyncCommitHook = "kiln_emu_cp_async_commit";
/// `void kiln_emu_cp_async_wait(i32 pending_groups)`: cp.async.wait_group.
inline constexpr std::string_view kAsyncWaitHook = "kiln_emu_cp_async_wait";

/// The barrier intrinsics and their hooks, which take the intrinsic's
/// operands and then `i32 site`, the barrier's index in
/// KernelDescription::barrier_places.
struct BarrierHook {
  std::string_view intrinsic;
  std::string_view symbol;
};
inline constexpr BarrierHook kBarrierHooks[] = {
    {"llvm.nvvm.barrier0", "kiln_emu_barrier"},          {"llvm.nvvm.barrier.sync", "kiln_emu_barrier_numbered"},
    {"llvm.nvvm.bar.sync", "kiln_emu_barrier_numbered"}, {"llvm.nvvm.barrier0.and", "kiln_emu_barrier_all"},
    {"llvm.nvvm.barrier0.or", "kiln_emu_barrier_any"},   {"llvm.nvvm.barrier0.popc", "kiln_emu_barrier_count"},
};

/// The access check behind kGlobalAccessHook: `bytes` at `address` must lie
/// inside one pointer argument's range, else the running program faults with
/// the cpu device's message ("kernel k: load out of bounds: element offset 8
/// is past the end of 'x' (8 elements of f32)").
void check_global_access(std::uint64_t address, std::uint64_t bytes, std::uint32_t site);

/// The operand types of the mma.sync shapes the emu runs (f32 accumulators).
enum class MmaInput { bf16, f16, tf32, e4m3, e5m2 };
/// mma.sync.aligned.m16n8k16 (bf16, f16), m16n8k8 (tf32) or m16n8k32 (e4m3,
/// e5m2: four per register, laid out as s8's) .row.col for the
/// running lane: its fragments of A (4 registers), B (2) and C (4) go to the
/// warp, and its fragment of D = A B + C comes back in `d` (PTX ISA fragment
/// layouts; products summed exactly, rounded once to f32).
void warp_matrix_multiply(MmaInput input, const std::uint32_t* a, const std::uint32_t* b, const float* c, float* d);

/// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 for the running lane: A
/// (4 registers of four s8), B (2), C (4 s32); D = A B + C, wrapping, in `d`.
void warp_integer_matrix_multiply(const std::uint32_t* a, const std::uint32_t* b, const std::int32_t* c,
                                  std::int32_t* d);

/// ldmatrix.sync.aligned.m8n8.x{matrices}[.trans].b16 for the running lane:
/// `row` is the shared-memory row this lane supplies, and its 32-bit result
/// of each matrix is written to `results` (PTX ISA fragment layouts).
void warp_matrix_load(const void* row, int matrices, bool transposed, std::uint32_t* results);

/// What one wgmma.mma_async.sync.aligned.m64nNkK instruction takes: N, the
/// input type (K is 16 of f16 and bf16, 32 of the 8-bit ones; s8 accumulates
/// into s32, the rest into f32), and whether A is M-major and B N-major
/// (imm-trans-a, imm-trans-b: f16 and bf16 alone).
enum class WgmmaInput { f16, bf16, e4m3, e5m2, s8 };
struct WgmmaShape {
  int n = 8;
  WgmmaInput input = WgmmaInput::f16;
  bool a_mn_major = false;
  bool b_mn_major = false;
};
/// wgmma.mma_async for the running thread: its N / 2 accumulator registers
/// (f32, or s32 for s8 inputs) go to the warpgroup and come back as
/// D = A B (+ D when `scale_d`), B read from shared memory through its
/// descriptor, A likewise or, when
/// `a_fragment` is not null, from the four fragment registers each thread
/// holds. Each element read is a shared read at access site `site` by the
/// thread that completes the instruction: bounds and races are checked as
/// for the threads' own accesses (check_shared_access).
void warpgroup_matrix_multiply(WgmmaShape shape, const std::uint32_t* a_fragment, std::uint64_t a_descriptor,
                               std::uint64_t b_descriptor, bool scale_d, void* accumulator, std::uint32_t site);
/// wgmma.fence, wgmma.commit_group and wgmma.wait_group for the running thread.
void warpgroup_fence();
void warpgroup_commit();
void warpgroup_wait(int pending_groups);

/// vprintf's output for `format` and the CUDA argument buffer `arguments`
/// (each argument at its natural alignment; floats as doubles).
std::string format_device_printf(const char* format, const std::byte* arguments);

}  // namespace kiln::runtime::emu
