// The emu's retargeting: it refuses, at compile time and in one line, what it
// cannot run (an intrinsic or external function without a hook, dynamic
// shared memory of no recorded size), maps the dynamic shared memory to the
// program's block, maps libdevice to host libm and reads the source line an
// access carries.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "emu_support.hpp"
#include "kiln/lowering/compile.hpp"

namespace {

using kiln::emu_test::compile_nvvm;

std::string compile_error(const std::string& llvm_ir, const std::string& name) {
  try {
    compile_nvvm(llvm_ir, name, "%0: ptr<i32>");
  } catch (const kiln::lowering::LoweringError& e) {
    return e.what();
  }
  return "";
}

TEST(Retarget, AnIntrinsicWithoutAHookIsNamed) {
  EXPECT_EQ(compile_error(R"(
define ptx_kernel void @clocked(ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.clock()
  store i32 %t, ptr addrspace(1) %out
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.clock()
)",
                          "clocked"),
            "emu: kernel clocked: no host hook for llvm.nvvm.read.ptx.sreg.clock (add one to runtime/emu/hooks.cpp)");
}

TEST(Retarget, AnExternalFunctionWithoutAHookIsNamed) {
  EXPECT_EQ(compile_error(R"(
define ptx_kernel void @mystery(ptr addrspace(1) %out) {
  %x = call float @__nv_mystery(float 1.0)
  store float %x, ptr addrspace(1) %out
  ret void
}
declare float @__nv_mystery(float)
)",
                          "mystery"),
            "emu: kernel mystery: no host hook for __nv_mystery (add one to runtime/emu/hooks.cpp)");
}

TEST(Retarget, DynamicSharedMemoryWithoutASizeIsRefused) {
  EXPECT_EQ(compile_error(R"(
@dynamic = external addrspace(3) global [0 x i32], align 16
define ptx_kernel void @dynamic_smem(ptr addrspace(1) %out) {
  %x = load i32, ptr addrspace(3) @dynamic
  store i32 %x, ptr addrspace(1) %out
  ret void
}
)",
                          "dynamic_smem"),
            "emu: kernel dynamic_smem: dynamic shared memory @dynamic has no size (the module has no "
            "!kiln.shared_bytes)");
}

TEST(Retarget, DynamicSharedMemoryIsTheBlockOfItsRecordedSize) {
  // Thread t writes its index to word t of the dynamic array and, after a
  // barrier, reads its neighbour's: 128 threads x 4 bytes, the recorded size.
  const auto kernel = compile_nvvm(R"(
@kiln_shared = external addrspace(3) global [0 x i8], align 16
define ptx_kernel void @neighbours(ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %mine = getelementptr i32, ptr addrspace(3) @kiln_shared, i32 %t
  store i32 %t, ptr addrspace(3) %mine
  call void @llvm.nvvm.barrier0()
  %next = add i32 %t, 1
  %wrapped = and i32 %next, 127
  %theirs = getelementptr i32, ptr addrspace(3) @kiln_shared, i32 %wrapped
  %value = load i32, ptr addrspace(3) %theirs
  %slot = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %value, ptr addrspace(1) %slot
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
!kiln.shared_bytes = !{!0}
!0 = !{i32 512}
)",
                                   "neighbours", "%0: ptr<i32>");
  kiln::Buffer<std::int32_t> out(128, kiln::Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {kiln::emu_test::pointer_to(out, "out")};
  kernel->launch(kiln::Device::emu(1), {1, 1, 1}, args);
  std::vector<std::int32_t> expected(128);
  for (int t = 0; t < 128; ++t) expected[static_cast<std::size_t>(t)] = (t + 1) % 128;
  EXPECT_EQ(out.to_host(), expected);
}

TEST(Retarget, LibdeviceCallsRunOnHostLibm) {
  const auto kernel = compile_nvvm(R"(
define ptx_kernel void @libdevice(ptr addrspace(1) %out) {
  %s = call float @__nv_sinf(float 0.5)
  %e = call float @__nv_erff(float 0.5)
  %p = call double @__nv_pow(double 2.0, double 0.5)
  %pd = fptrunc double %p to float
  %sum = fadd float %s, %e
  %total = fadd float %sum, %pd
  store float %total, ptr addrspace(1) %out
  ret void
}
declare float @__nv_sinf(float)
declare float @__nv_erff(float)
declare double @__nv_pow(double, double)
)",
                                   "libdevice", "%0: ptr<f32>", 1);
  kiln::Buffer<float> out(1, kiln::Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {kiln::emu_test::pointer_to(out, "out")};
  kernel->launch(kiln::Device::emu(1), {1, 1, 1}, args);
  const float want = std::sin(0.5f) + std::erf(0.5f) + static_cast<float>(std::pow(2.0, 0.5));
  EXPECT_NEAR(out.to_host()[0], want, 4 * 0x1p-23 * want);
}

// A store past the end whose access carries the op's source line
// (!kiln.place) is reported with it, as the cpu device reports the op's line.
TEST(Retarget, AccessPlaceMetadataNamesTheSourceLine) {
  const auto kernel = compile_nvvm(R"(
define ptx_kernel void @placed(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr float, ptr addrspace(1) %out, i32 %tid
  store float 1.0, ptr addrspace(1) %p, !kiln.place !0
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!0 = !{!"kern.hpp:7"}
)",
                                   "placed", "%0: ptr<f32>", 1);
  kiln::Buffer<float> out(4, kiln::Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {kiln::emu_test::pointer_to(out, "out")};
  EXPECT_EQ(kiln::emu_test::kernel_error([&] { kernel->launch(kiln::Device::emu(1), {1, 1, 1}, args); }),
            "kernel placed: store out of bounds at kern.hpp:7: element offset 4 is past the end of 'out' "
            "(4 elements of f32)");
}

}  // namespace
