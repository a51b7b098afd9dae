// wgmma on the emu (device emu-sm_90a, which runs the code generated for
// sm_90a): tiled matmuls whose dots the code generator puts on wgmma give
// the products within the inner-product bound of a double reference, for
// f16 and bf16, with tails in M, N and K, K shorter than the stages' tiles,
// 1 to 4 stages, operands stored along M or N (imm-trans set) as well as
// along K, two warpgroups, two 64-row slices per warpgroup and N split into
// two 256-column instructions; their PTX holds wgmma.mma_async. The emu
// refuses a wgmma without its fence, and inline assembly it has no hook for.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "emu_support.hpp"
#include "kiln/lowering/compile.hpp"

namespace {

namespace kl = kiln;
template <class T>
using P = kl::Ptr<kl::Scalar<T>>;

// C = A @ B (M x K by K x N, f32 out). A is row-major, or K x M (column-major
// A, loaded along M) when A_ALONG_M; B is row-major, or N x K when B_ALONG_K.
template <class T, int BM, int BN, int BK, bool A_ALONG_M, bool B_ALONG_K>
void matmul(P<T> a, P<T> b, P<float> c, kl::i32 m, kl::i32 n, kl::i32 k) {
  auto rows = kl::expand_dims<1>(kl::program_id(0) * BM + kl::arange<BM>());
  auto cols = kl::expand_dims<0>(kl::program_id(1) * BN + kl::arange<BN>());
  auto k_across = kl::expand_dims<0>(kl::arange<BK>());
  auto k_down = kl::expand_dims<1>(kl::arange<BK>());
  kl::Var acc = kl::zeros<kl::Scalar<float>, BM, BN>();
  for (auto k0 : kl::range(0, k, BK)) {
    auto a_offsets = [&] {
      if constexpr (A_ALONG_M) return (k0 + k_across) * m + rows;
      else return rows * k + (k0 + k_across);
    }();
    auto b_offsets = [&] {
      if constexpr (B_ALONG_K) return cols * k + (k0 + k_down);
      else return (k0 + k_down) * n + cols;
    }();
    auto ta = kl::load(a + a_offsets, (rows < m) & (k0 + k_across < k));
    auto tb = kl::load(b + b_offsets, (k0 + k_down < k) & (cols < n));
    acc = kl::dot(ta, tb, acc);
  }
  kl::store(c + rows * n + cols, acc, (rows < m) & (cols < n));
}

template <class T>
std::vector<T> random_inputs(std::size_t count, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> values(-2.0f, 2.0f);
  std::vector<T> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(T(values(engine)));
  return out;
}

struct Case {
  int m, n, k, num_warps, num_stages;
};

std::string describe(const Case& c, const char* dtype) {
  return std::string(dtype) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + ", " +
         std::to_string(c.num_warps) + " warps, " + std::to_string(c.num_stages) + " stages";
}

template <class T, int BM, int BN, int BK, bool A_ALONG_M = false, bool B_ALONG_K = false>
void expect_products(const Case& c, const char* dtype, bool check_flags = true) {
  const std::string what = describe(c, dtype) + (A_ALONG_M ? ", a along M" : "") + (B_ALONG_K ? ", b along K" : "");
  const auto a = random_inputs<T>(static_cast<std::size_t>(c.m) * c.k, 5 + c.m);
  const auto b = random_inputs<T>(static_cast<std::size_t>(c.k) * c.n, 6 + c.n);
  // a[i][kk] and b[kk][j] in the layouts the kernel reads.
  auto a_at = [&](int i, int kk) { return static_cast<double>(A_ALONG_M ? a[kk * c.m + i] : a[i * c.k + kk]); };
  auto b_at = [&](int kk, int j) { return static_cast<double>(B_ALONG_K ? b[j * c.k + kk] : b[kk * c.n + j]); };
  const kl::Device device = kl::Device::emu_sm90a();
  auto ba = kl::Buffer<T>::from(a, device), bb = kl::Buffer<T>::from(b, device);
  auto out = kl::Buffer<float>::from(std::vector<float>(static_cast<std::size_t>(c.m) * c.n, 0.5f), device);
  kl::CompileOptions options;
  options.num_warps = c.num_warps;
  options.num_stages = c.num_stages;
  const auto compiled = kl::compile<matmul<T, BM, BN, BK, A_ALONG_M, B_ALONG_K>>(options);
  const kl::Grid grid(kl::cdiv(c.m, BM), kl::cdiv(c.n, BN));
  compiled.launch(grid, ba, bb, out, c.m, c.n, c.k);

  const kiln::lowering::GpuKernel sm90a = kiln::lowering::compile_for_gpu(
      compiled.program_for(ba, bb, out, c.m, c.n, c.k)->optimized(), {.arch = "sm_90a", .num_warps = c.num_warps});
  EXPECT_NE(sm90a.ptx.find("wgmma.mma_async"), std::string::npos) << what << ": the dot is not on wgmma";
  // imm-trans-a and imm-trans-b, or imm-trans-b alone where a comes from
  // registers (unpipelined, its load gives the fragment layout).
  const std::string b_flag = B_ALONG_K ? "0;" : "1;";
  const std::string flags = std::string(", p, 1, 1, ") +
                            (sm90a.ptx.find("}, {%r") != std::string::npos ? ""
                             : A_ALONG_M                                   ? "1, "
                                                                           : "0, ") +
                            b_flag;
  const std::size_t first_wgmma = sm90a.ptx.find("wgmma.mma_async");
  if (check_flags) {
    EXPECT_NE(sm90a.ptx.find(flags), std::string::npos)
        << what << ": no wgmma with imm-trans" << flags << "; the first is\n"
        << sm90a.ptx.substr(first_wgmma, sm90a.ptx.find('\n', first_wgmma) - first_wgmma);
  }

  const std::vector<float> got = out.to_host();
  // Each sum of k products of f16 or bf16 values is exact in double, and
  // the tensor cores' f32 accumulation is off by at most gamma_k x sum |a b|.
  const double gamma = c.k * 0x1p-24 / (1 - c.k * 0x1p-24);
  int wrong = 0;
  for (int i = 0; i < c.m && wrong < 5; ++i)
    for (int j = 0; j < c.n && wrong < 5; ++j) {
      double sum = 0, magnitude = 0;
      for (int kk = 0; kk < c.k; ++kk) {
        sum += a_at(i, kk) * b_at(kk, j);
        magnitude += std::abs(a_at(i, kk) * b_at(kk, j));
      }
      const double error = std::abs(got[static_cast<std::size_t>(i * c.n + j)] - sum);
      if (error > gamma * magnitude + 0x1p-24 * std::abs(sum)) {
        ++wrong;
        ADD_FAILURE() << what << ": c[" << i << "][" << j << "] is " << got[static_cast<std::size_t>(i * c.n + j)]
                      << ", want " << sum << " within " << gamma * magnitude;
      }
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

}  // namespace
