// cp.async on the emu: copies into shared memory bounds checked, zero-filled
// past the source bytes of the .s forms (0 source bytes read nothing, even
// through a pointer past the end), and asynchronous: a copy lands only when
// a wait completes its group, so a read before that wait sees the old data.
#include <cstdint>
#include <string>
#include <vector>

#include "emu_support.hpp"

namespace {

using kiln::Buffer;
using kiln::Device;
using kiln::emu_test::compile_nvvm;
using kiln::emu_test::kernel_error;
using kiln::emu_test::pointer_to;

// Thread t copies in[4t..4t+3] (16 bytes) into slot t with cp.async.cg.16
// when t is even; odd threads issue the .s form with 0 source bytes from
// in + 4 * (t + limit), past the end when `limit` is large: their slot is
// zero-filled. After wait.all and a barrier each thread writes slot t ^ 1.
const char* kAsyncCopyKernel = R"(
@slots = internal addrspace(3) global [512 x i32] undef, align 16

define ptx_kernel void @async_copy(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %limit) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %four = mul i32 %tid, 4
  %slot = getelementptr i32, ptr addrspace(3) @slots, i32 %four
  %odd = and i32 %tid, 1
  %is_odd = icmp eq i32 %odd, 1
  br i1 %is_odd, label %empty, label %full
full:
  %source = getelementptr i32, ptr addrspace(1) %in, i32 %four
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %slot, ptr addrspace(1) %source)
  br label %wait
empty:
  %far = add i32 %tid, %limit
  %far4 = mul i32 %far, 4
  %nowhere = getelementptr i32, ptr addrspace(1) %in, i32 %far4
  call void @llvm.nvvm.cp.async.ca.shared.global.16.s(ptr addrspace(3) %slot, ptr addrspace(1) %nowhere, i32 0)
  br label %wait
wait:
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.wait.all()
  call void @llvm.nvvm.barrier0()
  %partner = xor i32 %tid, 1
  %partner4 = mul i32 %partner, 4
  %from = getelementptr i32, ptr addrspace(3) @slots, i32 %partner4
  %value = load <4 x i32>, ptr addrspace(3) %from, align 16
  %to = getelementptr i32, ptr addrspace(1) %out, i32 %four
  store <4 x i32> %value, ptr addrspace(1) %to, align 16
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.ca.shared.global.16.s(ptr addrspace(3), ptr addrspace(1), i32)
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.all()
declare void @llvm.nvvm.barrier0()
)";

TEST(AsyncCopy, CopiesAndZeroFillsSharedMemory) {
  const auto kernel = compile_nvvm(kAsyncCopyKernel, "async_copy", "%0: ptr<i32>, %1: ptr<i32>, %2: i32");
  std::vector<std::int32_t> input(512);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<std::int32_t>(3 * i + 1);
  const auto in = Buffer<std::int32_t>::from(input, Device::emu());
  Buffer<std::int32_t> out(512, Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {pointer_to(in, "in"), pointer_to(out, "out"), {1000000, {}}};
  const auto stats = kernel->launch(Device::emu(1), {1, 1, 1}, args);
  const std::vector<std::int32_t> got = out.to_host();
  for (int t = 0; t < 128; ++t)
    for (int k = 0; k < 4; ++k) {
      const int partner = t ^ 1;
      const std::int32_t want = partner % 2 == 0 ? input[static_cast<std::size_t>(4 * partner + k)] : 0;
      ASSERT_EQ(got[static_cast<std::size_t>(4 * t + k)], want) << "thread " << t << ", element " << k;
    }
  EXPECT_EQ(stats.bytes_read, 64u * 16) << "the 64 even threads' copies";
}

TEST(AsyncCopy, AnUnmaskedCopyPastTheEndIsALoadOutOfBounds) {
  const auto kernel = compile_nvvm(R"(
define ptx_kernel void @copy_past_end(ptr addrspace(1) %in) {
  call void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3) @slot, ptr addrspace(1) %in)
  ret void
}
@slot = internal addrspace(3) global i32 undef, align 4
declare void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3), ptr addrspace(1))
)",
                                   "copy_past_end", "%0: ptr<i16>", 1);
  Buffer<std::int16_t> in(1, Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {pointer_to(in, "in")};
  EXPECT_EQ(kernel_error([&] { kernel->launch(Device::emu(1), {1, 1, 1}, args); }),
            "kernel copy_past_end: load out of bounds: element offset 1 is past the end of 'in' (1 elements of i16)");
}

// Thread t fills its 16-byte slots A[t] and B[t] with -1, copies in[4t..]
// into A[t] (group 0) and in[512 + 4t..] into B[t] (group 1), and writes out
// block 0: A[t] before any wait; wait.group 1 (group 0 lands); block 1: A[t],
// block 2: B[t]; wait.group 0 (group 1 lands); block 3: B[t].
const char* kGroupsKernel = R"(
@a = internal addrspace(3) global [512 x i32] undef, align 16
@b = internal addrspace(3) global [512 x i32] undef, align 16

define ptx_kernel void @groups(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %four = mul i32 %tid, 4
  %slot_a = getelementptr i32, ptr addrspace(3) @a, i32 %four
  %slot_b = getelementptr i32, ptr addrspace(3) @b, i32 %four
  store <4 x i32> <i32 -1, i32 -1, i32 -1, i32 -1>, ptr addrspace(3) %slot_a, align 16
  store <4 x i32> <i32 -1, i32 -1, i32 -1, i32 -1>, ptr addrspace(3) %slot_b, align 16
  %source_a = getelementptr i32, ptr addrspace(1) %in, i32 %four
  %four_b = add i32 %four, 512
  %source_b = getelementptr i32, ptr addrspace(1) %in, i32 %four_b
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %slot_a, ptr addrspace(1) %source_a)
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %slot_b, ptr addrspace(1) %source_b)
  call void @llvm.nvvm.cp.async.commit.group()
  %early_a = load <4 x i32>, ptr addrspace(3) %slot_a, align 16
  call void @llvm.nvvm.cp.async.wait.group(i32 1)
  %late_a = load <4 x i32>, ptr addrspace(3) %slot_a, align 16
  %early_b = load <4 x i32>, ptr addrspace(3) %slot_b, align 16
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  %late_b = load <4 x i32>, ptr addrspace(3) %slot_b, align 16
  %to0 = getelementptr i32, ptr addrspace(1) %out, i32 %four
  store <4 x i32> %early_a, ptr addrspace(1) %to0, align 16
  %four1 = add i32 %four, 512
  %to1 = getelementptr i32, ptr addrspace(1) %out, i32 %four1
  store <4 x i32> %late_a, ptr addrspace(1) %to1, align 16
  %four2 = add i32 %four, 1024
  %to2 = getelementptr i32, ptr addrspace(1) %out, i32 %four2
  store <4 x i32> %early_b, ptr addrspace(1) %to2, align 16
  %four3 = add i32 %four, 1536
  %to3 = getelementptr i32, ptr addrspace(1) %out, i32 %four3
  store <4 x i32> %late_b, ptr addrspace(1) %to3, align 16
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.group(i32 immarg)
)";

TEST(AsyncCopy, ACopyLandsOnlyWhenAWaitCompletesItsGroup) {
  const auto kernel = compile_nvvm(kGroupsKernel, "groups", "%0: ptr<i32>, %1: ptr<i32>");
  std::vector<std::int32_t> input(1024);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<std::int32_t>(7 * i + 3);
  const auto in = Buffer<std::int32_t>::from(input, Device::emu());
  Buffer<std::int32_t> out(2048, Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {pointer_to(in, "in"), pointer_to(out, "out")};
  kernel->launch(Device::emu(1), {1, 1, 1}, args);
  const std::vector<std::int32_t> got = out.to_host();
  for (std::size_t e = 0; e < 512; ++e) {
    ASSERT_EQ(got[e], -1) << "A read before any wait, element " << e;
    ASSERT_EQ(got[512 + e], input[e]) << "A after wait.group 1, element " << e;
    ASSERT_EQ(got[1024 + e], -1) << "B while its group is still pending, element " << e;
    ASSERT_EQ(got[1536 + e], input[512 + e]) << "B after wait.group 0, element " << e;
  }
}

// A cp.async whose shared destination lies outside the program's shared
// memory is a fault naming the thread and the offset.
TEST(AsyncCopy, ADestinationOutsideSharedMemoryIsAFault) {
  const auto kernel = compile_nvvm(R"(
@slots = internal addrspace(3) global [64 x i32] undef, align 16
define ptx_kernel void @overflow(ptr addrspace(1) %in) {
  %far = getelementptr i32, ptr addrspace(3) @slots, i32 4096
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %far, ptr addrspace(1) %in), !kiln.place !0
  ret void
}
declare void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3), ptr addrspace(1))
!0 = !{!"copy.hpp:12"}
)",
                                   "overflow", "%0: ptr<i32>");
  const auto in = Buffer<std::int32_t>::from(std::vector<std::int32_t>(64, 5), Device::emu());
  const std::vector<kiln::runtime::KernelArgument> args = {pointer_to(in, "in")};
  EXPECT_EQ(kernel_error([&] { kernel->launch(Device::emu(1), {1, 1, 1}, args); }),
            "kernel overflow: cp.async out of bounds at copy.hpp:12: offset 16384 of a 16-byte access by thread 0 is "
            "past the end of the program's 256 bytes of shared memory");
}

}  // namespace
