// Register layouts of `dot`: on the FMA units the operands' layouts derived
// from the result's (Triton's DotOperandEncoding with a blocked parent); on
// tensor cores the mma.sync accumulator and fragment layouts, and which dots
// run there.
#pragma once

#include <cstdint>
#include <string_view>

#include "kiln/ir/ir.hpp"
#include "kiln/lowering/compile.hpp"
#include "kiln/lowering/linear_layout.hpp"

namespace kiln::lowering {

/// Which operand of `dot` (acc + a @ b) a layout is for.
enum class DotOperand {
  a,  ///< [M, K]: rows shared with the result
  b,  ///< [K, N]: columns shared with the result
};

/// The layout operand `operand` of a dot whose result [M, N] lives in
/// `result` (outputs dim0 = M, dim1 = N over register, lane and warp) must be
/// read in so that each thread holds, for every result element it holds, the
/// whole row of a (the whole column of b) it needs:
///  - register: the `k_size` elements along K first (low bits, K in order),
///    then the result's register bases with the other operand's dimension
///    dropped (n for a, m for b); bases left zero or already spanned by the
///    kept ones are removed, so no two registers hold the same element;
///  - lane and warp: the result's bases with that dimension dropped, so lanes
///    and warps that differ only along it hold the same elements (broadcast).
/// Outputs: a is (dim0 = M, dim1 = K), b is (dim0 = K, dim1 = N). `k_size` is
/// a power of two; `result` has outputs dim0 and dim1 and inputs register,
/// lane, warp; otherwise std::invalid_argument names the value.
LinearLayout dot_operand_layout(const LinearLayout& result, DotOperand operand, std::int64_t k_size);

/// How the warps of a program split a dot's [M, N] result into tensor-core
/// tiles of 16 x 8: `m` warps down the rows, `n` across the columns, and
/// the remaining warps (when the result is too small) holding copies.
struct MmaWarps {
  int m = 1;
  int n = 1;
};

/// The split for an [m_size, n_size] result and `num_warps` warps whose
/// warp slices read the fewest operand elements at each step of K: a warp
/// of an m x n split reads m_size / m rows of a and n_size / n columns of b
/// from shared memory, so the sum is the least (the most warps down the
/// rows among equals; warps past the 16 x 8 tiles hold copies). 64 x 64 on
/// 4 warps: 2 x 2 warps of 32 x 32, reading 32 + 32 where 4 x 1 would read
/// 16 + 64; 64 x 32 stays 4 x 1 (16 + 32, as 2 x 2's 32 + 16).
MmaWarps mma_warps(std::int64_t m_size, std::int64_t n_size, int num_warps);

/// The split with as many warps down the rows as there are 16-row tiles (up
/// to num_warps), the rest across the 8-column tiles.
MmaWarps mma_warps_down_rows(std::int64_t m_size, std::int64_t n_size, int num_warps);

/// The accumulator layout of `mma.sync.m16n8k16` with f32 accumulators
/// (Triton's mma v2 encoding) for an [m_size, n_size] tile. Within one
/// 16 x 8 tile, lane l (group g = l / 4, t = l % 4) holds c0..c3 at
/// (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1): register bits
/// (0, 1), (8, 0); lane bits (0, 2), (0, 4), (1, 0), (2, 0), (4, 0). The
/// warps tile 16·m x 8·n (warp bits down the rows first), and the tiles
/// repeat in higher register bits, across the columns first. Register
/// 4 (ni + reps_n · mi) + c holds element c of tile (mi, ni). Tiles smaller
/// than 16·m x 8·n wrap (copies), as blocked_layout does.
LinearLayout mma_accumulator_layout(std::int64_t m_size, std::int64_t n_size, MmaWarps warps, int num_warps);

/// The shape of the mma.sync instruction a tensor-core dot runs, by its
/// input dtype: m16n8k16 for f16 and bf16, m16n8k32 for i8 (s8 x s8 + s32),
/// m16n8k8 for f32 at tf32 precision. Each lane holds its operand elements
/// in 32-bit registers, `elements_per_register` to a register.
struct MmaInstruction {
  int k = 16;
  int elements_per_register = 2;
};

/// The fragment layout of operand a [m_size, k_size] (row-major fragment) or
/// b [k_size, n_size] (column-major fragment) of `mma.sync.m16n8k{k}` for
/// the accumulator layout above, with e = elements_per_register elements of
/// 32 / e bits in each 32-bit register. a: each 16 x k tile; register bits
/// first step along K inside a 32-bit register (e elements), then (8, 0),
/// then (0, k / 2); lane bits (0, e), (0, 2e), (1, 0), (2, 0), (4, 0); so
/// for m16n8k16 lane l holds a0..a7 at (g, 2t), (g, 2t + 1), (g + 8, 2t),
/// (g + 8, 2t + 1), (g, 2t + 8), (g, 2t + 9), (g + 8, 2t + 8), (g + 8,
/// 2t + 9), and register (k / 2)(ki + reps_k · mi) + j holds element j of
/// tile (mi, ki). b: each k x 8 tile; register bits along K (e elements),
/// then (k / 2, 0); lane bits (e, 0), (2e, 0), (0, 1), (0, 2), (0, 4); for
/// m16n8k16 b0..b3 at (2t, g), (2t + 1, g), (2t + 8, g), (2t + 9, g), and
/// register (k / 4)(ki + reps_k · ni) + j. Warps along the other operand's
/// dimension hold copies. `k_size` must be a multiple of k.
LinearLayout mma_operand_layout(DotOperand operand, std::int64_t rows, std::int64_t columns, MmaWarps warps,
                                int num_warps, MmaInstruction instruction = {});

/// The sm_XY number of `arch` ("sm_90a" is 90), or 0 when it is not of that form.
int compute_capability(std::string_view arch);

/// The mma.sync shape for `dot`'s input dtype (f16, bf16, i8, fp8, f32); throws
/// std::invalid_argument naming the dtype for another.
MmaInstruction mma_instruction(const ir::Operation& dot);

/// Whether `dot` runs on tensor cores (mma.sync) for `target`, sm_80 or newer
/// unless the target turns tensor cores off, on 2-D tiles: f16 or bf16 inputs
/// with an f32 accumulator and K a multiple of 16 (m16n8k16); i8 inputs with
/// an i32 accumulator and K a multiple of 32 (m16n8k32, exact); f8e4m3 or
/// f8e5m2 inputs with an f32 accumulator and K a multiple of 32 on sm_89 and
/// newer (m16n8k32); f32 inputs at tf32 precision with an f32 accumulator and
/// K a multiple of 8 (m16n8k8).
bool dot_uses_tensor_cores(const ir::Operation& dot, const GpuTarget& target);

/// How the target's warps split a tensor-core dot's result: down the rows
/// (mma_warps_down_rows) for a dot that may run on wgmma
/// (dot_fits_wgmma: its warpgroups take 64-row slices) and for a dot chained
/// to another of its block (one computes an operand of the other, as
/// attention's two do), so that each warp holds whole rows of both and the
/// first's result reaches the second as a fragment in registers; balanced
/// (mma_warps) otherwise.
MmaWarps dot_mma_warps(const ir::Operation& dot, const GpuTarget& target);

/// The layout a tensor-core dot's accumulator and result live in:
/// mma_accumulator_layout for its [M, N] tile and dot_mma_warps.
LinearLayout dot_accumulator_layout(const ir::Operation& dot, const GpuTarget& target);

/// Whether `dot` reads operand `index` (0: a, 1: b) from a shared slot: the
/// operand is a local_load's result, which the dot takes from shared memory
/// in its fragment (or operand) layout rather than from registers.
bool reads_shared_slot(const ir::Operation& dot, int index);

/// The fragment layout of a tensor-core dot's operand a or b (mma_operand_layout).
LinearLayout dot_fragment_layout(const ir::Operation& dot, DotOperand operand, const GpuTarget& target);

}  // namespace kiln::lowering
