// wgmma on 8-bit inputs on the emu (device emu-sm_90a): fp8 (e4m3, e5m2)
// into f32 within the inner-product bound of a double reference, and i8
// into i32 exactly, with tails in M, N and K, 1 to 3 stages and two
// warpgroups. wgmma reads 8-bit tiles only K-major: B stored N x K is
// copied along K into its ring and runs on wgmma; B stored K x N runs on
// wgmma unpipelined (the dot stores its registers K-major) and stays on
// mma.sync when pipelined with 16-byte copies along N into its ring. The
// emu names a wgmma whose depth, accumulator or immediates do not fit its
// input type, and 8-bit A in registers, which the code generator does not
// emit (8-bit A comes from shared memory).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "emu_support.hpp"
#include "kiln/kiln.hpp"
#include "kiln/lowering/compile.hpp"
#include "tiled_matmul.hpp"

namespace {

namespace kl = kiln;
using kiln::emu_test::describe;
using kiln::emu_test::MatmulCase;
using kiln::emu_test::P;

int count(const std::string& text, const std::string& what) {
  int found = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++found;
  return found;
}

template <class T, int BM, int BN, int BK, bool B_ALONG_K>
std::string fp8_products(const MatmulCase& c, const char* dtype) {
  const std::string what = describe(c, dtype) + (B_ALONG_K ? ", b along K" : ", b along N");
  return kiln::emu_test::expect_matmul_products<T, BM, BN, BK, false, B_ALONG_K>(kl::Device::emu_sm90a(), c, what,
                                                                                 "sm_90a");
}

TEST(Wgmma8Bit, Fp8WithBStoredAlongK) {
  for (int stages = 1; stages <= 3; ++stages) {
    const std::string e4m3 = fp8_products<kl::float8_e4m3, 64, 64, 64, true>({70, 90, 100, 4, stages}, "f8e4m3");
    EXPECT_EQ(count(e4m3, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "), 2) << stages << " stages";
    EXPECT_EQ(count(e4m3, "mma.sync"), 0) << stages << " stages";
    const std::string e5m2 = fp8_products<kl::float8_e5m2, 64, 32, 32, true>({64, 40, 20, 4, stages}, "f8e5m2");
    EXPECT_EQ(count(e5m2, "wgmma.mma_async.sync.aligned.m64n32k32.f32.e5m2.e5m2 "), 1) << stages << " stages";
  }
}

TEST(Wgmma8Bit, Fp8WithBStoredAlongN) {
  const std::string unpipelined = fp8_products<kl::float8_e4m3, 64, 64, 32, false>({64, 70, 96, 4, 1}, "f8e4m3");
  EXPECT_EQ(count(unpipelined, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "), 1);
  // N a multiple of 16: the copies into b's ring are 16-byte vectors along N.
  const std::string pipelined = fp8_products<kl::float8_e4m3, 64, 64, 32, false>({64, 64, 96, 4, 3}, "f8e4m3");
  EXPECT_EQ(count(pipelined, "wgmma.mma_async"), 0);
  EXPECT_GT(count(pipelined, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"), 0);
  // N = 70: b's rows are not aligned, its copies move one element each, and
  // a ring along K costs them nothing.
  const std::string unaligned = fp8_products<kl::float8_e4m3, 64, 64, 32, false>({64, 70, 96, 4, 3}, "f8e4m3");
  EXPECT_EQ(count(unaligned, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "), 1);
}

// C = A @ B in i32 for row-major A (M x K) and B stored N x K.
template <int BM, int BN, int BK>
void i8_matmul(P<std::int8_t> a, P<std::int8_t> b, P<std::int32_t> c, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BN + kl::arange<BN>());
  auto k_across = kl::expand_dims<0>(kl::arange<BK>());
  auto k_down = kl::expand_dims<1>(kl::arange<BK>());
  kl::Var acc = kl::zeros<kl::Scalar<std::int32_t>, BM, BN>();
  for (auto k0 : kl::range(0, k, BK)) {
    auto ta = kl::load(a + rows * k + (k0 + k_across), (rows < m) & (k0 + k_across < k));
    auto tb = kl::load(b + cols * k + (k0 + k_down), (k0 + k_down < k) & (cols < n));
    acc = kl::dot(ta, tb, acc);
  }
  kl::store(c + rows * n + cols, acc, (rows < m) & (cols < n));
}

template <int BM, int BN, int BK>
void expect_exact_i8_products(const MatmulCase& c) {
  const std::string what = describe(c, "i8");
  std::mt19937 engine(11 + c.m + c.k);
  std::uniform_int_distribution<int> values(-128, 127);
  std::vector<std::int8_t> a(static_cast<std::size_t>(c.m) * c.k), b(static_cast<std::size_t>(c.n) * c.k);
  for (auto& x : a) x = static_cast<std::int8_t>(values(engine));
  for (auto& x : b) x = static_cast<std::int8_t>(values(engine));
  const kl::Device device = kl::Device::emu_sm90a();
  auto ba = kl::Buffer<std::int8_t>::from(a, device), bb = kl::Buffer<std::int8_t>::from(b, device);
  auto out = kl::Buffer<std::int32_t>::from(std::vector<std::int32_t>(static_cast<std::size_t>(c.m) * c.n, 7), device);
  kl::CompileOptions options;
  options.num_warps = c.num_warps;
  options.num_stages = c.num_stages;
  const auto compiled = kl::compile<i8_matmul<BM, BN, BK>>(options);
  compiled.launch(kl::Grid(kl::cdiv(c.m, BM), kl::cdiv(c.n, BN)), ba, bb, out, c.m, c.n, c.k);
  const std::vector<std::int32_t> got = out.to_host();
  int wrong = 0;
  for (int i = 0; i < c.m && wrong < 5; ++i)
    for (int j = 0; j < c.n && wrong < 5; ++j) {
      std::int32_t sum = 0;
      for (int kk = 0; kk < c.k; ++kk)
        sum += std::int32_t{a[static_cast<std::size_t>(i * c.k + kk)]} * b[static_cast<std::size_t>(j * c.k + kk)];
      if (got[static_cast<std::size_t>(i * c.n + j)] != sum) {
        ++wrong;
        ADD_FAILURE() << what << ": c[" << i << "][" << j << "] is " << got[static_cast<std::size_t>(i * c.n + j)]
                      << ", want " << sum;
      }
    }
  const std::string ptx = kiln::lowering::compile_for_gpu(compiled.program_for(ba, bb, out, c.m, c.n, c.k)->optimized(),
                                                          {.arch = "sm_90a", .num_warps = c.num_warps})
                              .ptx;
  const int slices = BM / (64 * (c.num_warps / 4));
  EXPECT_EQ(count(ptx, "wgmma.mma_async.sync.aligned.m64n" + std::to_string(BN) + "k32.s32.s8.s8 "), slices * (BK / 32))
      << what;
  EXPECT_EQ(count(ptx, "mma.sync"), 0) << what;
}

TEST(Wgmma8Bit, I8IntoI32Exactly) {
  for (int stages = 1; stages <= 3; ++stages) {
    expect_exact_i8_products<64, 64, 64>({100, 70, 150, 4, stages});
    expect_exact_i8_products<64, 32, 32>({64, 32, 20, 4, stages});
  }
}

TEST(Wgmma8Bit, TwoWarpgroupsAndTwoSlices) {
  expect_exact_i8_products<128, 64, 64>({130, 64, 128, 8, 3});
  expect_exact_i8_products<128, 64, 32>({128, 64, 96, 4, 2});
}

/// The message compiling one wgmma.mma_async of `instruction` (its
/// accumulators f32 or s32, A and B descriptors) for the emu throws.
std::string refusal(const std::string& instruction, const char* accumulator) {
  const std::string type = std::string(accumulator) == "f32" ? "float" : "i32";
  const std::string constraint = type == "float" ? "=f" : "=r";
  const std::string zero = type == "float" ? "0.0" : "0";
  const std::string text = "define ptx_kernel void @refused(ptr addrspace(1) %out) {\n  %d = call { " + type + ", " +
                           type + ", " + type + ", " + type +
                           " } asm sideeffect \"{\\0A.reg .pred p;\\0Asetp.ne.b32 p, $10, 0;\\0A" + instruction +
                           ";\\0A}\", \"" + constraint + "," + constraint + "," + constraint + "," + constraint +
                           ",0,1,2,3,l,l,r\"(" + type + " " + zero + ", " + type + " " + zero + ", " + type + " " +
                           zero + ", " + type + " " + zero + ", i64 0, i64 0, i32 1)\n  ret void\n}\n";
  try {
    kiln::emu_test::compile_nvvm(text, "refused", "%0: ptr<i32>");
  } catch (const kiln::lowering::LoweringError& e) {
    return e.what();
  }
  return "compiled";
}

TEST(Wgmma8Bit, AnInstructionThatDoesNotFitItsInputIsNamed) {
  EXPECT_EQ(refusal("wgmma.mma_async.sync.aligned.m64n8k16.f32.e4m3.e4m3 {$0, $1, $2, $3}, $8, $9, p, 1, 1", "f32"),
            "emu: kernel refused: wgmma.mma_async m64n8k16.f32.e4m3: no such instruction");
  EXPECT_EQ(refusal("wgmma.mma_async.sync.aligned.m64n8k32.f32.s8.s8 {$0, $1, $2, $3}, $8, $9, p", "f32"),
            "emu: kernel refused: wgmma.mma_async m64n8k32.f32.s8: no such instruction");
  EXPECT_EQ(refusal("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {$0, $1, $2, $3}, $8, $9, p, 1, 1", "s32"),
            "emu: kernel refused: wgmma.mma_async on s8 takes 0 scales of 1 and 0 transpose flags, not `, 1, 1`");
  EXPECT_EQ(
      refusal("wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2 {$0, $1, $2, $3}, $8, $9, p, 1, 1, 0, 0", "f32"),
      "emu: kernel refused: wgmma.mma_async on e5m2 takes 2 scales of 1 and 0 transpose flags, not `, 1, 1, 0, 0`");
  EXPECT_EQ(
      refusal("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $9, p, 1, 1",
              "f32"),
      "emu: kernel refused: wgmma.mma_async on e4m3 with A in registers: the emu runs A from registers for f16 "
      "and bf16 only");
}

}  // namespace
