// wgmma on the emu (device emu-sm_90a, which runs the code generated for
// sm_90a): tiled matmuls whose dots the code generator puts on wgmma give
// the products within the inner-product bound of a double reference, for
// f16 and bf16, with tails in M, N and K, K shorter than the stages' tiles,
// 1 to 4 stages, operands stored along M or N (imm-trans set) as well as
// along K, two warpgroups, two 64-row slices per warpgroup and N split into
// two 256-column instructions; their PTX holds wgmma.mma_async. The emu
// refuses a wgmma without its fence, and inline assembly it has no hook for;
// its reads of shared memory are checked for races like the threads' own,
// and again at the wait_group that retires them (a write before it is a
// race even after a barrier).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "emu_support.hpp"
#include "kiln/lowering/compile.hpp"
#include "tiled_matmul.hpp"

namespace {

namespace kl = kiln;
using kiln::emu_test::describe;
using kiln::emu_test::MatmulCase;
using kiln::emu_test::P;

template <class T, int BM, int BN, int BK, bool A_ALONG_M = false, bool B_ALONG_K = false>
void expect_products(const MatmulCase& c, const char* dtype, bool check_flags = true) {
  const std::string what = describe(c, dtype) + (A_ALONG_M ? ", a along M" : "") + (B_ALONG_K ? ", b along K" : "");
  const std::string ptx = kiln::emu_test::expect_matmul_products<T, BM, BN, BK, A_ALONG_M, B_ALONG_K>(
      kl::Device::emu_sm90a(), c, what, "sm_90a");
  EXPECT_NE(ptx.find("wgmma.mma_async"), std::string::npos) << what << ": the dot is not on wgmma";
  // imm-trans-a and imm-trans-b, or imm-trans-b alone where a comes from
  // registers (unpipelined, its load gives the fragment layout).
  const std::string b_flag = B_ALONG_K ? "0;" : "1;";
  const std::string flags = std::string(", p, 1, 1, ") +
                            (ptx.find("}, {%r") != std::string::npos ? ""
                             : A_ALONG_M                             ? "1, "
                                                                     : "0, ") +
                            b_flag;
  const std::size_t first_wgmma = ptx.find("wgmma.mma_async");
  if (check_flags) {
    EXPECT_NE(ptx.find(flags), std::string::npos) << what << ": no wgmma with imm-trans" << flags << "; the first is\n"
                                                  << ptx.substr(first_wgmma, ptx.find('\n', first_wgmma) - first_wgmma);
  }
}

TEST(Wgmma, EveryDepthWithTailsInEveryDimension) {
  for (int stages = 1; stages <= 4; ++stages) {
    expect_products<kl::half, 64, 64, 32>({70, 90, 100, 4, stages}, "f16");
  }
}

TEST(Wgmma, Bf16AndKShorterThanTheStagesTiles) {
  for (int stages = 1; stages <= 4; ++stages) {
    expect_products<kl::bfloat16, 64, 32, 32>({64, 32, 10, 4, stages}, "bf16");
    expect_products<kl::bfloat16, 64, 64, 16>({65, 64, 40, 4, stages}, "bf16");
  }
}

TEST(Wgmma, OperandsStoredAlongMOrN) {
  expect_products<kl::half, 64, 64, 32, true, false>({64, 64, 64, 4, 3}, "f16");
  expect_products<kl::half, 64, 64, 32, false, true>({64, 64, 64, 4, 3}, "f16");
  // Otherwise each operand is stored along whichever dimension the layout
  // layout assignment gave its load or copy runs (here b along N).
  expect_products<kl::bfloat16, 64, 32, 64, true, true>({128, 64, 64, 4, 3}, "bf16", false);
  expect_products<kl::bfloat16, 64, 32, 64, true, true>({128, 64, 64, 4, 1}, "bf16", false);
  expect_products<kl::bfloat16, 64, 32, 64, true, true>({100, 50, 70, 4, 1}, "bf16", false);
}

TEST(Wgmma, TwoWarpgroupsTwoSlicesAndTwoColumnChunks) {
  expect_products<kl::half, 128, 128, 32>({130, 128, 64, 8, 3}, "f16");
  expect_products<kl::half, 128, 64, 32>({128, 64, 96, 4, 2}, "f16");
  expect_products<kl::half, 64, 512, 16>({64, 512, 32, 4, 1}, "f16");
}

TEST(Wgmma, InlineAssemblyWithoutAHookIsNamed) {
  try {
    kiln::emu_test::compile_nvvm(R"(
define ptx_kernel void @sleepy(ptr addrspace(1) %out) {
  call void asm sideeffect "nanosleep.u32 5;", ""()
  ret void
}
)",
                                 "sleepy", "%0: ptr<i32>");
    ADD_FAILURE() << "the emu compiled inline assembly it has no hook for";
  } catch (const kiln::lowering::LoweringError& e) {
    EXPECT_STREQ(e.what(), "emu: kernel sleepy: no emu hook runs the inline assembly `nanosleep.u32 5;`");
  }
}

TEST(Wgmma, AMultiplyWithoutItsFenceIsAFault) {
  const auto kernel = kiln::emu_test::compile_nvvm(R"(
define ptx_kernel void @unfenced(ptr addrspace(1) %out) {
  %d = call { float, float, float, float } asm sideeffect "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, $8, $9, p, 1, 1, 0, 0;\0A}", "=f,=f,=f,=f,0,1,2,3,l,l,r"(float 0.0, float 0.0, float 0.0, float 0.0, i64 0, i64 0, i32 1)
  %x = extractvalue { float, float, float, float } %d, 0
  store float %x, ptr addrspace(1) %out
  ret void
}
)",
                                                   "unfenced", "%0: ptr<f32>");
  kl::Buffer<float> out = kl::Buffer<float>::from(std::vector<float>(1, 0.0f), kl::Device::emu());
  const kiln::runtime::KernelArgument args[] = {kiln::emu_test::pointer_to(out, "out")};
  const std::string message = kiln::emu_test::kernel_error([&] { kernel->launch(kl::Device::emu(), {1, 1, 1}, args); });
  EXPECT_NE(message.find("wgmma.mma_async without a wgmma.fence before it since the last wait"), std::string::npos)
      << message;
}

// C = A @ B and, from the same tiles of A, the sums of A's rows: A's load
// has a reader besides the dot, so the pipeliner leaves it a load (only B
// goes through a ring) and the wgmma dot stages it itself.
template <int BM, int BN, int BK>
void matmul_and_row_sums(P<kl::half> a, P<kl::half> b, P<float> c, P<float> sums, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::arange<BN>());
  auto k_across = kl::expand_dims<0>(kl::arange<BK>());
  auto k_down = kl::expand_dims<1>(kl::arange<BK>());
  kl::Var acc = kl::zeros<kl::f32, BM, BN>();
  kl::Var row_sums = kl::zeros<kl::f32, BM>();
  for (auto k0 : kl::range(0, k, BK)) {
    auto ta = kl::load(a + rows * k + (k0 + k_across), (rows < m) & (k0 + k_across < k));
    auto tb = kl::load(b + (k0 + k_down) * n + cols, (k0 + k_down < k) & (cols < n));
    acc = kl::dot(ta, tb, acc);
    row_sums = row_sums + kl::sum(kl::cast<kl::f32>(ta), kl::axis<1>);
  }
  kl::store(c + rows * n + cols, acc, (rows < m) & (cols < n));
  kl::store(sums + kl::program_id(0) * BM + kl::arange<BM>(), row_sums, kl::program_id(0) * BM + kl::arange<BM>() < m);
}

TEST(Wgmma, AnOperandWithAnotherReaderIsStagedByTheDot) {
  constexpr int m = 64, n = 64, k = 96;
  const auto a = kiln::emu_test::random_inputs<kl::half>(m * k, 3);
  const auto b = kiln::emu_test::random_inputs<kl::half>(k * n, 4);
  const kl::Device device = kl::Device::emu_sm90a();
  auto ba = kl::Buffer<kl::half>::from(a, device), bb = kl::Buffer<kl::half>::from(b, device);
  auto c = kl::Buffer<float>::from(std::vector<float>(m * n, 0.0f), device);
  auto sums = kl::Buffer<float>::from(std::vector<float>(m, 0.0f), device);
  kl::CompileOptions options;
  options.num_stages = 3;
  const auto compiled = kl::compile<matmul_and_row_sums<64, 64, 32>>(options);
  int rings = 0;
  kiln::ir::walk(compiled.program().optimized().body,
                 [&](kiln::ir::Operation& op) { rings += op.code == kiln::ir::OpCode::local_alloc; });
  EXPECT_EQ(rings, 1) << "B alone is pipelined";
  compiled.launch(kl::Grid(1), ba, bb, c, sums, m, n, k);
  const std::vector<float> got = c.to_host(), got_sums = sums.to_host();
  const double gamma = k * 0x1p-24 / (1 - k * 0x1p-24);
  for (int i = 0; i < m; ++i) {
    double row_sum = 0, row_magnitude = 0;
    for (int kk = 0; kk < k; ++kk) {
      row_sum += static_cast<double>(a[static_cast<std::size_t>(i * k + kk)]);
      row_magnitude += std::abs(static_cast<double>(a[static_cast<std::size_t>(i * k + kk)]));
    }
    EXPECT_NEAR(got_sums[static_cast<std::size_t>(i)], row_sum, gamma * row_magnitude) << "row " << i;
    for (int j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double product = static_cast<double>(a[static_cast<std::size_t>(i * k + kk)]) *
                               static_cast<double>(b[static_cast<std::size_t>(kk * n + j)]);
        sum += product;
        magnitude += std::abs(product);
      }
      EXPECT_NEAR(got[static_cast<std::size_t>(i * n + j)], sum, gamma * magnitude) << "c[" << i << "][" << j << "]";
    }
  }
}

// The sum over k0 of T_k0 @ T_k0 for the 64 x 64 tiles T_k0 of x (64 x
// 64·tiles): one loaded tile is both operands of its dot, so its ring slot
// has two readers in different roles.
void squares(P<kl::half> x, P<float> c, kl::i32 tiles) {
  auto rows = kl::expand_dims<1>(kl::arange<64>());
  auto cols = kl::expand_dims<0>(kl::arange<64>());
  kl::Var acc = kl::zeros<kl::f32, 64, 64>();
  for (auto t : kl::range(0, tiles)) {
    auto tile = kl::load(x + rows * (64 * tiles) + t * 64 + cols);
    acc = kl::dot(tile, tile, acc);
  }
  kl::store(c + rows * 64 + cols, acc);
}

TEST(Wgmma, ATileThatIsBothOperandsOfItsDot) {
  constexpr int tiles = 5;
  const auto x = kiln::emu_test::random_inputs<kl::half>(64 * 64 * tiles, 9);
  const kl::Device device = kl::Device::emu_sm90a();
  auto bx = kl::Buffer<kl::half>::from(x, device);
  auto c = kl::Buffer<float>::from(std::vector<float>(64 * 64, 0.0f), device);
  kl::CompileOptions options;
  options.num_stages = 3;
  kl::compile<squares>(options).launch(kl::Grid(1), bx, c, tiles);
  const std::vector<float> got = c.to_host();
  auto at = [&](int t, int i, int j) {
    return static_cast<double>(x[static_cast<std::size_t>(i * 64 * tiles + t * 64 + j)]);
  };
  const double gamma = 64 * tiles * 0x1p-24 / (1 - 64 * tiles * 0x1p-24);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) {
      double sum = 0, magnitude = 0;
      for (int t = 0; t < tiles; ++t)
        for (int kk = 0; kk < 64; ++kk) {
          sum += at(t, i, kk) * at(t, kk, j);
          magnitude += std::abs(at(t, i, kk) * at(t, kk, j));
        }
      EXPECT_NEAR(got[static_cast<std::size_t>(i * 64 + j)], sum, gamma * magnitude) << "c[" << i << "][" << j << "]";
    }
}

// Each of 128 threads stores 16 bytes of a 64 x 16 f16 tile at shared
// offset 0 (A, K-major, 32-byte swizzle: descriptor mode 3, stride 256
// bytes; its start is the array's shared address bits 4-17, as the code
// generator computes it) and 16 bytes at 2048, where B (8 x 16, K-major)
// starts; then, after `sync` (a barrier, or nothing), the warpgroup
// multiplies them.
std::string stored_then_multiplied(const std::string& sync) {
  return R"(
@kiln_shared = external addrspace(3) global [0 x i8], align 1024
!kiln.shared_bytes = !{!0}
!0 = !{i32 4096}
define ptx_kernel void @stored_then_multiplied(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %offset = mul i32 %tid, 16
  %p = getelementptr i8, ptr addrspace(3) @kiln_shared, i32 %offset
  store <4 x i32> <i32 15360, i32 15360, i32 15360, i32 15360>, ptr addrspace(3) %p
  %q = getelementptr i8, ptr addrspace(3) %p, i32 2048
  store <4 x i32> <i32 15360, i32 15360, i32 15360, i32 15360>, ptr addrspace(3) %q
)" + sync +
         R"(
  call void asm sideeffect "wgmma.fence.sync.aligned;", "~{memory}"()
  %address = ptrtoint ptr addrspace(3) @kiln_shared to i64
  %start = lshr i64 %address, 4
  %start_field = and i64 %start, 16383
  %a = or i64 %start_field, -4611685949707845632
  %b = add i64 %a, 128
  %d = call { float, float, float, float } asm sideeffect "{\0A.reg .pred p;\0Asetp.ne.b32 p, $10, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, $8, $9, p, 1, 1, 0, 0;\0A}", "=f,=f,=f,=f,0,1,2,3,l,l,r"(float 0.0, float 0.0, float 0.0, float 0.0, i64 %a, i64 %b, i32 0)
  call void asm sideeffect "wgmma.commit_group.sync.aligned;", "~{memory}"()
  call void asm sideeffect "wgmma.wait_group.sync.aligned 0;", "~{memory}"()
  %x = extractvalue { float, float, float, float } %d, 0
  %slot = getelementptr float, ptr addrspace(1) %out, i32 %tid
  store float %x, ptr addrspace(1) %slot
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
)";
}

/// What one of these hand-written kernels gives on one warpgroup: its
/// error message ("" when it runs) and the element of D each thread stores.
struct HandWrittenRun {
  std::string error;
  std::vector<float> out;
};
HandWrittenRun run_hand_written(const std::string& text) {
  const auto kernel = kiln::emu_test::compile_nvvm(text, "stored_then_multiplied", "%0: ptr<f32>");
  kl::Buffer<float> out = kl::Buffer<float>::from(std::vector<float>(128, -1.0f), kl::Device::emu());
  const kiln::runtime::KernelArgument args[] = {kiln::emu_test::pointer_to(out, "out")};
  std::string error = kiln::emu_test::kernel_error([&] { kernel->launch(kl::Device::emu(), {1, 1, 1}, args); });
  return {std::move(error), out.to_host()};
}

constexpr const char* kBarrier = "  call void @llvm.nvvm.barrier0()";

// The tensor cores read what the threads stored: each 32-bit word holds
// f16 1.0 (0x3c00) in its low half and 0 in its high half, so every row of
// A and every column of B is 1, 0, 1, 0, … along K and each element of D
// sums 8 products of 1.
TEST(Wgmma, ReadsTheStoredTilesAfterABarrier) {
  const HandWrittenRun run = run_hand_written(stored_then_multiplied(kBarrier));
  EXPECT_EQ(run.error, "");
  EXPECT_EQ(run.out, std::vector<float>(128, 8.0f));
}

// Without the barrier, the warpgroup's read of the tile races with the
// other threads' stores: reported, as a GPU could read the tile half written.
TEST(Wgmma, ReadingTilesStoredWithoutABarrierIsARace) {
  const HandWrittenRun run = run_hand_written(stored_then_multiplied(""));
  EXPECT_NE(run.error.find("shared-memory race"), std::string::npos) << run.error;
  EXPECT_NE(run.error.find("wgmma.mma_async reads what thread"), std::string::npos) << run.error;
}

// The threads store the tiles, pass a barrier and multiply them; after the
// commit, `between` (a wait and a barrier, or a barrier alone) comes before
// the threads overwrite A, and the kernel waits for every group at its end.
std::string multiplied_then_overwritten(const std::string& between) {
  std::string text = stored_then_multiplied(kBarrier);
  const std::string commit = "  call void asm sideeffect \"wgmma.commit_group.sync.aligned;\", \"~{memory}\"()\n";
  const std::size_t after_commit = text.find(commit) + commit.size();
  text.insert(after_commit, between + "\n  store <4 x i32> zeroinitializer, ptr addrspace(3) %p\n");
  return text;
}

// A wgmma waited for, then a barrier: the threads may overwrite its tiles.
TEST(Wgmma, OverwritingTilesAfterTheWaitAndABarrierIsNoRace) {
  const std::string wait = "  call void asm sideeffect \"wgmma.wait_group.sync.aligned 0;\", \"~{memory}\"()";
  const HandWrittenRun run = run_hand_written(multiplied_then_overwritten(wait + "\n" + kBarrier));
  EXPECT_EQ(run.error, "");
  EXPECT_EQ(run.out, std::vector<float>(128, 8.0f));
}

// A committed wgmma not yet waited for may still be reading its tiles,
// whatever barrier the threads passed: overwriting them before the
// wait_group that retires it is a race, which that wait_group reports.
TEST(Wgmma, OverwritingTilesBeforeTheWaitIsARace) {
  const HandWrittenRun run = run_hand_written(multiplied_then_overwritten(kBarrier));
  EXPECT_NE(run.error.find("shared-memory race"), std::string::npos) << run.error;
}

}  // namespace
