// The structure of the library's tensor-core loops in PTX, for sm_80 and
// sm_90a (mma.sync, and on sm_90a wgmma) at the configurations the library
// launches: the accumulator stays in registers across the K loop (no f32
// shared-memory traffic inside it), the loop holds the expected mma.sync
// count, and the operands reach their fragments through ldmatrix (no 16-bit
// shared loads). Pipelined (matmul, 3 stages) they arrive by 16-byte
// cp.async into the rings, with one wait_group leaving the next stages'
// copies in flight, one barrier and no loads or stores of their own (matmul
// and attention at sm_80's configuration and, on wgmma, at sm_90a's);
// unpipelined (attention with num_stages 1) in 16-byte loads (K^T too, which
// runs along its rows in memory) staged with at most two barriers per
// crossing.
// Attention's Q and P reach their dots from registers. The library's wgmma
// kernels, fault checks and all, call no function and put no wgmma on a
// divergent path, so that ptxas keeps their wgmma pipelined.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/codegen_support.hpp"
#include "kiln/kernels/attention.hpp"
#include "kiln/kernels/conv2d_gemm.hpp"
#include "kiln/kernels/matmul.hpp"

namespace kiln::codegen_test {
namespace {

namespace kl = kiln;

/// Shared-memory loads and stores of f32 values (scalar or vector) in `ptx`.
int f32_shared_accesses(std::string_view ptx) {
  int total = 0;
  for (const char* access : {"ld.shared", "st.shared"})
    for (const char* width : {".f32", ".v2.f32", ".v4.f32"}) total += count(ptx, std::string(access) + width + " ");
  return total;
}

/// What one iteration of a tensor-core loop holds: mma.sync, ldmatrix and
/// ldmatrix.trans x4, 16-byte cp.async (0: not pipelined) and, when not
/// pipelined, at most `max_barriers` barriers.
struct MmaLoop {
  int mma, ldmatrix, ldmatrix_trans, copies, max_barriers;
};

/// Checks the innermost loop holding mma.sync of `fn` compiled for sm_80 and
/// sm_90a (with wgmma turned off there: expect_wgmma_loop checks it on).
void expect_mma_loop(const ir::Function& fn, int num_warps, const MmaLoop& expected, const std::string& stem) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const lowering::GpuKernel kernel =
        lowering::compile_for_gpu(fn, {.arch = arch, .num_warps = num_warps, .wgmma = false});
    const std::string_view loop = innermost_loop_holding(kernel.ptx, "mma.sync");
    ASSERT_FALSE(loop.empty()) << stem << " " << arch << ": no loop holds mma.sync:\n" << kernel.ptx;
    EXPECT_EQ(count(loop, "mma.sync.aligned.m16n8k16"), expected.mma) << stem << " " << arch;
    EXPECT_EQ(f32_shared_accesses(loop), 0) << stem << " " << arch << ": f32 shared traffic in the loop:\n" << loop;
    EXPECT_EQ(count(loop, "cp.async.cg.shared.global"), expected.copies) << stem << " " << arch << ":\n" << loop;
    if (expected.copies > 0) {
      EXPECT_EQ(count(loop, "bar.sync"), 1) << stem << " " << arch << ":\n" << loop;
      EXPECT_EQ(count(loop, "cp.async.wait_group 1;"), 1) << stem << " " << arch << ":\n" << loop;
      EXPECT_EQ(count(loop, "ld.global.") + count(loop, "st.shared."), 0)
          << stem << " " << arch << ": operands loaded or staged outside the pipeline:\n"
          << loop;
    } else {
      EXPECT_LE(count(loop, "bar.sync"), expected.max_barriers) << stem << " " << arch << ":\n" << loop;
      EXPECT_EQ(count(loop, "ld.global.") - count(loop, "ld.global.v4."), 0)
          << stem << " " << arch << ": operands loaded from global memory in pieces narrower than 16 bytes:\n"
          << loop;
    }
    EXPECT_EQ(count(loop, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), expected.ldmatrix) << stem << " " << arch;
    EXPECT_EQ(count(loop, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), expected.ldmatrix_trans)
        << stem << " " << arch;
    EXPECT_EQ(count(loop, "ld.shared.b16") + count(loop, "ld.shared.u16"), 0)
        << stem << " " << arch << ": operands read from shared memory one element at a time:\n"
        << loop;
    KILN_EXPECT_PTXAS_ACCEPTS(kernel, arch, stem);
  }
}

/// What one iteration of a wgmma loop on sm_90a holds: wgmma.mma_async,
/// 16-byte cp.async (0: not pipelined), and barriers; and whether its one
/// dot is left in flight across iterations (wait_group 1 in the loop, 0 at
/// its exit) rather than waited for at once.
struct WgmmaLoop {
  int mma, copies, barriers;
  bool in_flight = false;
};

/// A kernel on wgmma calls no function, and ptxas serializes none of its
/// wgmma instructions: it would across a call (its warning C7510), for a
/// wgmma on a divergent path (C7520), or for an accumulator register
/// touched while its wgmma is in flight, waiting for each before the next.
void expect_wgmma_not_serialized(const lowering::GpuKernel& kernel, const std::string& stem) {
  EXPECT_EQ(count(kernel.ptx, "call.uni"), 0) << stem << ": a function call in a wgmma kernel";
  const PtxasResult ptxas = run_ptxas(kernel.ptx, "sm_90a", stem);
  EXPECT_EQ(ptxas.output.find("wgmma.mma_async instructions are serialized"), std::string::npos)
      << stem << ": " << ptxas.output;
}

/// Checks the innermost loop holding wgmma.mma_async of `fn` compiled for
/// sm_90a: one fence, commit and wait per dot around its instructions (a
/// wait for the previous iteration's group where the dot stays in flight), the
/// accumulator in registers (no f32 shared traffic), no ldmatrix (the tensor
/// cores read the swizzled tiles themselves); pipelined, the copies land in
/// the rings with one wait_group leaving the next stages in flight, one
/// fence.proxy.async after it, one barrier and no loads or stores of the
/// operands of their own.
void expect_wgmma_loop(const ir::Function& fn, int num_warps, int dots, const WgmmaLoop& expected,
                       const std::string& stem) {
  const lowering::GpuKernel kernel = lowering::compile_for_gpu(fn, {.arch = "sm_90a", .num_warps = num_warps});
  const std::string_view loop = innermost_loop_holding(kernel.ptx, "wgmma.mma_async");
  ASSERT_FALSE(loop.empty()) << stem << ": no loop holds wgmma.mma_async:\n" << kernel.ptx;
  EXPECT_EQ(count(loop, "wgmma.mma_async.sync.aligned.m64n"), expected.mma) << stem << ":\n" << loop;
  EXPECT_EQ(count(loop, "wgmma.fence.sync.aligned;"), dots) << stem;
  EXPECT_EQ(count(loop, "wgmma.commit_group.sync.aligned;"), dots) << stem;
  EXPECT_EQ(count(loop, "wgmma.wait_group.sync.aligned 0;"), expected.in_flight ? 0 : dots) << stem;
  EXPECT_EQ(count(loop, "wgmma.wait_group.sync.aligned 1;"), expected.in_flight ? dots : 0) << stem;
  if (expected.in_flight) {
    const auto exit = static_cast<std::size_t>(loop.data() + loop.size() - kernel.ptx.data());
    EXPECT_NE(kernel.ptx.find("wgmma.wait_group.sync.aligned 0;", exit), std::string::npos)
        << stem << ": the loop's last group is not waited for after it";
  }
  EXPECT_EQ(count(loop, "mma.sync") + count(loop, "ldmatrix"), 0) << stem << ":\n" << loop;
  EXPECT_EQ(f32_shared_accesses(loop), 0) << stem << ": f32 shared traffic in the loop:\n" << loop;
  EXPECT_EQ(count(loop, "cp.async.cg.shared.global"), expected.copies) << stem << ":\n" << loop;
  EXPECT_EQ(count(loop, "bar.sync"), expected.barriers) << stem << ":\n" << loop;
  if (expected.copies > 0) {
    EXPECT_EQ(count(loop, "cp.async.wait_group 1;"), 1) << stem << ":\n" << loop;
    EXPECT_EQ(count(loop, "fence.proxy.async.shared::cta;"), 1) << stem << ":\n" << loop;
    EXPECT_EQ(count(loop, "ld.global.") + count(loop, "st.shared."), 0)
        << stem << ": operands loaded or staged outside the pipeline:\n"
        << loop;
  }
  EXPECT_NE(kernel.ptx.find(".shared .align 1024 .b8 kiln_shared[]"), std::string::npos) << stem;
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_90a", stem);
  expect_wgmma_not_serialized(kernel, stem);
}

/// The library's matmul in configuration G, its K loop pipelined.
template <class T, kernels::Epilogue E, kernels::MatmulConfig G>
std::unique_ptr<ir::Function> matmul_at() {
  auto compiled =
      kl::compile<kernels::matmul<T, T, G.block_m, G.block_n, G.block_k, G.group_m, E>>(G.compile_options());
  return ir::clone(compiled.program().specialized(launch_facts("aaaaaaaa1a1a1---"))->optimized());
}

/// 16-byte copies per thread per iteration into the rings of configuration G.
constexpr int copies_per_iteration(const kernels::MatmulConfig& g) {
  return (g.block_m + g.block_n) * g.block_k * 2 / (16 * 32 * g.num_warps);
}

template <class T, kernels::Epilogue E>
void expect_matmul_loop(const std::string& stem) {
  // sm_80's configuration, 64 x 64 x 32 at 4 warps: the warps split C 2 x
  // 2, each holding a 32 x 32 quarter, 2 x 4 tiles of 16 x 8, 2 k-steps of
  // 16 each; it reads its 32 x 32 slice of a as 4 ldmatrix.x4 and its 32 x
  // 32 slice of b as 4 ldmatrix.x4.trans, since b is stored along N and its
  // fragment runs along K (8 in all, where 4 x 1 warps of 16 x 64 read 2 +
  // 8).
  constexpr kernels::MatmulConfig sm80 = kernels::kMatmulSm80;
  static_assert(sm80.block_m == 64 && sm80.block_n == 64 && sm80.block_k == 32 && sm80.num_warps == 4);
  expect_mma_loop(*matmul_at<T, E, sm80>(), sm80.num_warps, {8 * 2, 4, 4, copies_per_iteration(sm80), 0}, stem);
  // sm_90a's: each warpgroup's 64 x BLOCK_N slice takes one wgmma per 16 of
  // K, its three stages of rings all kept.
  constexpr kernels::MatmulConfig sm90a = kernels::kMatmulSm90a;
  const std::unique_ptr<ir::Function> fn90 = matmul_at<T, E, sm90a>();
  // Its dot stays in flight: after waiting for the previous iteration's
  // group, a second barrier lets the copies overwrite that group's slots.
  expect_wgmma_loop(*fn90, sm90a.num_warps, 1, {sm90a.block_k / 16, copies_per_iteration(sm90a), 2, true},
                    stem + "_sm90a");
  const lowering::GpuKernel kernel = lowering::compile_for_gpu(*fn90, {.arch = "sm_90a", .num_warps = sm90a.num_warps});
  EXPECT_GE(kernel.shared_bytes, sm90a.num_stages * (sm90a.block_m + sm90a.block_n) * sm90a.block_k * 2) << stem;
  // Each warpgroup's a descriptor starts from its index as lane 0 gives it,
  // once before the loop, so that ptxas keeps the descriptors in uniform
  // registers (uniform_warpgroup in codegen_wgmma.cpp).
  const std::string_view loop = innermost_loop_holding(kernel.ptx, "wgmma.mma_async");
  ASSERT_FALSE(loop.empty()) << stem;
  const std::size_t loop_start = static_cast<std::size_t>(loop.data() - kernel.ptx.data());
  EXPECT_NE(kernel.ptx.substr(0, loop_start).find("shfl.sync.idx.b32"), std::string::npos)
      << stem << ": no warpgroup index read from lane 0 before the loop";
  EXPECT_EQ(count(loop, "shfl.sync"), 0) << stem << ":\n" << loop;
}

TEST(MmaStructure, MatmulF16KeepsTheAccumulatorInRegisters) {
  expect_matmul_loop<kl::f16, kernels::Epilogue{}>("matmul_f16");
}
TEST(MmaStructure, MatmulBf16WithItsEpilogueKeepsTheAccumulatorInRegisters) {
  expect_matmul_loop<kl::bf16, kernels::Epilogue{.bias = true, .gelu = kernels::Gelu::tanh, .dropout = true}>(
      "matmul_bf16_bias_gelu_tanh_dropout");
}

// attention at sm_80's configuration: per iteration S = Q K^T (BLOCK_M x
// BLOCK_N over HEAD_DIM) and O += P V (BLOCK_M x HEAD_DIM over BLOCK_N),
// each warp holding a 16-row slice of both. Every warp reads all of K^T
// (HEAD_DIM x BLOCK_N, loaded and stored along HEAD_DIM, its K: plain
// ldmatrix) and of V (BLOCK_N x HEAD_DIM, stored along HEAD_DIM, its N:
// ldmatrix.trans), 256 elements per x4. Pipelined (the library's num_stages)
// K^T and V arrive by 16-byte cp.async; with num_stages 1 they take two
// crossings into their fragments (the key offsets reach both loads' layouts
// inside each thread).
template <class T, int HEAD_DIM, int NUM_STAGES>
void expect_attention_loop(const std::string& stem) {
  constexpr kernels::AttentionConfig library = kernels::kAttentionSm80<HEAD_DIM>;
  constexpr kernels::AttentionConfig config{
      .block_m = library.block_m, .block_n = library.block_n, .num_warps = library.num_warps, .num_stages = NUM_STAGES};
  constexpr int block_m = config.block_m, block_n = config.block_n;
  auto compiled = kl::compile<kernels::attention<T, HEAD_DIM, block_m, block_n, false>>(config.compile_options());
  const int num_warps = config.num_warps;
  const int rows_per_warp_pass = 16 * std::min(num_warps, block_m / 16);
  const int m_tiles = block_m / rows_per_warp_pass;
  const int scores = m_tiles * (block_n / 8) * (HEAD_DIM / 16), output = m_tiles * (HEAD_DIM / 8) * (block_n / 16);
  const int copies = NUM_STAGES > 1 ? 2 * block_n * HEAD_DIM * 2 / (16 * 32 * num_warps) : 0;
  const ir::Function& fn = compiled.program().specialized(launch_facts("aaaaa---aaa"))->optimized();
  expect_mma_loop(fn, num_warps, {scores + output, HEAD_DIM * block_n / 256, block_n * HEAD_DIM / 256, copies, 4},
                  stem);
  // On wgmma each warpgroup's 64-row slice (of BLOCK_M / 64 / warpgroups)
  // takes S in HEAD_DIM / 16 instructions and O in BLOCK_N / 16, Q and P
  // from registers, K^T and V from the rings (one barrier) or staged (fence,
  // barrier; barrier after).
  const int slices = block_m / 64 / (num_warps / 4);
  expect_wgmma_loop(fn, num_warps, 2, {slices * (HEAD_DIM / 16 + block_n / 16), copies, copies > 0 ? 1 : 4}, stem);
  const lowering::GpuKernel kernel = lowering::compile_for_gpu(fn, {.arch = "sm_90a", .num_warps = num_warps});
  EXPECT_NE(kernel.ptx.find("k16.f32.f16.f16 {"), std::string::npos);
  EXPECT_GE(count(kernel.ptx, "}, {%r"), 1) << stem << ": no wgmma takes a from registers";
}

TEST(MmaStructure, AttentionF16Head64KeepsPAndTheAccumulatorInRegisters) {
  expect_attention_loop<kl::f16, 64, kernels::kAttentionSm80<64>.num_stages>("attention_f16_d64");
  expect_attention_loop<kl::f16, 64, 1>("attention_f16_d64_unpipelined");
}

// attention at sm_90a's configuration, pipelined: each warpgroup's 64 rows
// take S in HEAD_DIM / 16 wgmma m64nBLOCK_N and O in BLOCK_N / 16 wgmma
// m64nHEAD_DIM, Q and P from registers, K^T and V straight from their rings
// (16-byte copies, one barrier).
template <class T, int HEAD_DIM>
void expect_sm90a_attention_loop(const std::string& stem) {
  constexpr kernels::AttentionConfig config = kernels::kAttentionSm90a<HEAD_DIM>;
  static_assert(config.block_m == 64 * (config.num_warps / 4) && config.num_stages > 1);
  auto compiled =
      kl::compile<kernels::attention<T, HEAD_DIM, config.block_m, config.block_n, false>>(config.compile_options());
  const ir::Function& fn = compiled.program().specialized(launch_facts("aaaaa---aaa"))->optimized();
  const int copies = 2 * config.block_n * HEAD_DIM * 2 / (16 * 32 * config.num_warps);
  expect_wgmma_loop(fn, config.num_warps, 2, {HEAD_DIM / 16 + config.block_n / 16, copies, 1}, stem);
  const lowering::GpuKernel kernel = lowering::compile_for_gpu(fn, {.arch = "sm_90a", .num_warps = config.num_warps});
  EXPECT_GE(count(kernel.ptx, "}, {%r"), 1) << stem << ": no wgmma takes a from registers";
}

TEST(MmaStructure, AttentionInSm90aConfigurationReadsKAndVFromTheRings) {
  expect_sm90a_attention_loop<kl::f16, 64>("attention_f16_d64_sm90a");
  expect_sm90a_attention_loop<kl::bf16, 128>("attention_bf16_d128_sm90a");
}

// The conv2d + batchnorm + SiLU gemm variant runs its dot on wgmma at 64
// rows and 4 warps; its index arithmetic divides by the output width and
// the kernel's taps, in the K loop too. The divisions' fault checks go
// through the fault record (no call) behind a warp ballot (no wgmma on a
// divergent path), so ptxas keeps the wgmma asynchronous.
TEST(MmaStructure, Conv2dGemmOnWgmmaCallsNoFunction) {
  auto compiled = kl::compile<kernels::conv2d_bn_silu_gemm<kl::f16, 64, 32, 32>>();
  const lowering::GpuKernel kernel =
      lowering::compile_for_gpu(compiled.program().optimized(), {.arch = "sm_90a", .num_warps = 4});
  EXPECT_GT(count(kernel.ptx, "wgmma.mma_async"), 0);
  expect_fault_record_and_trap(kernel.ptx);
  expect_wgmma_not_serialized(kernel, "conv2d_gemm_f16_64x32x32");
}

// The same kernel walking the taps outside the channels (TAPS_OUTER) on
// sm_80: its channel loop is not pipelined, and the im2col tile, gathered
// transposed with 2-byte loads, and the weights cross shared memory once
// each per step, stored element by element and read back as fragments with
// ldmatrix (fewer wavefronts than reading each element), not element by
// element; the transpose moves nothing of its own.
TEST(MmaStructure, Conv2dGemmTapsOuterReadsItsFragmentsWithLdmatrix) {
  auto compiled = kl::compile<kernels::conv2d_bn_silu_gemm<kl::f16, 64, 32, 32, true, true>>();
  const lowering::GpuKernel kernel =
      lowering::compile_for_gpu(compiled.program().optimized(), {.arch = "sm_80", .num_warps = 4});
  const std::string_view loop = innermost_loop_holding(kernel.ptx, "mma.sync");
  ASSERT_FALSE(loop.empty()) << kernel.ptx;
  // The warps split the 64 x 32 result 2 x 2: each reads a 32 x 32 slice of
  // a (4 ldmatrix.x4) and a 32 x 16 slice of b (2 ldmatrix.x4.trans).
  EXPECT_EQ(count(loop, "mma.sync.aligned.m16n8k16"), 8) << loop;
  EXPECT_EQ(count(loop, "ldmatrix.sync.aligned.m8n8.x4"), 6) << loop;
  EXPECT_EQ(count(loop, "ld.shared.b16") + count(loop, "ld.shared.u16"), 0) << loop;
  EXPECT_EQ(count(loop, "cp.async"), 0) << loop;
  EXPECT_EQ(count(loop, "bar.sync"), 2) << "one crossing: a barrier after the stores, one after the reads\n" << loop;
  KILN_EXPECT_PTXAS_ACCEPTS(kernel, "sm_80", "conv2d_gemm_f16_64x32x32_taps_outer");
}

// Causal attention at head_dim 128 runs two pipelined loops one after the
// other (the full key blocks, then the masked diagonal), each with a ring for
// K^T and one for V. The first loop's rings are dead once its copies are
// drained and a barrier passed, so the second loop's rings take the same
// bytes: the kernel needs one loop's rings, not two.
template <kernels::AttentionConfig G>
void expect_head128_loops_share_their_rings(const std::vector<const char*>& archs) {
  constexpr int head_dim = 128;
  static_assert(G.num_stages > 1);
  auto compiled = kl::compile<kernels::attention<kl::f16, head_dim, G.block_m, G.block_n, true>>(G.compile_options());
  const ir::Function& fn = compiled.program().specialized(launch_facts("aaaaa---aaa"))->optimized();
  int rings = 0;
  ir::walk(fn.body, [&](ir::Operation& op) { rings += op.code == ir::OpCode::local_alloc; });
  ASSERT_EQ(rings, 4) << "two loops, each with a ring for K^T and one for V";
  const int one_loop_rings = 2 * G.num_stages * head_dim * G.block_n * 2;
  for (const char* arch : archs) {
    const lowering::GpuKernel kernel = lowering::compile_for_gpu(fn, {.arch = arch, .num_warps = G.num_warps});
    EXPECT_GE(kernel.shared_bytes, one_loop_rings) << arch;
    EXPECT_LT(kernel.shared_bytes, 2 * one_loop_rings) << arch << ": the two loops' rings do not share bytes";
  }
}

TEST(MmaStructure, AttentionHead128LoopsShareTheirRings) {
  expect_head128_loops_share_their_rings<kernels::kAttentionSm80<128>>({"sm_80", "sm_90a"});
  expect_head128_loops_share_their_rings<kernels::kAttentionSm90a<128>>({"sm_90a"});
}

}  // namespace
}  // namespace kiln::codegen_test
